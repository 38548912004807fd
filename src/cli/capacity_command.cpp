// `ioprobe capacity`: how many emulated accelerators of the chosen kind the storage feeds at
// AU >= the target, found by search (capacity/search.hpp) with the same dataset, GPU and
// DataLoader options as `ioprobe run` and the run's preflight (prepare_run).
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "capacity/capacity_across.hpp"
#include "capacity/capacity_run.hpp"
#include "capacity/search.hpp"
#include "cli/capacity_cluster.hpp"
#include "cli/commands.hpp"
#include "cli/device_accounting.hpp"
#include "cli/run_calibration.hpp"
#include "cli/run_cluster.hpp"
#include "cli/run_config.hpp"
#include "cli/run_plan.hpp"
#include "cli/same_options.hpp"
#include "cluster/capacity_point.hpp"
#include "cluster/collective.hpp"
#include "cluster/comm_step_sync.hpp"
#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/message.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "report/calibration_effect_report.hpp"
#include "report/capacity_document.hpp"
#include "report/capacity_report.hpp"
#include "report/document.hpp"
#include "report/html_report.hpp"
#include "report/run_document.hpp"
#include "topology/host.hpp"
#include "tune/sweep.hpp"

namespace ioprobe::cli {

namespace {

po::options_description capacity_options() {
  static const std::string point_time_help = fmt::format(
      "seconds per run of each point, at least {} s (the steady window's {} intervals of {} s, plus one) [3s]",
      kMinRunS, kSteadyMinIntervals, kTuneIntervalS);
  po::options_description search("Search");
  // clang-format off
  search.add_options()
      ("point-time", po::value<std::string>(), point_time_help.c_str())
      ("repeats", po::value<std::string>(), "runs per point; the point's AU and samples/s are their medians [2]")
      ("budget", po::value<std::string>(), "time for the whole search, dataset check included, e.g. 10m [10m]")
      ("max-gpus", po::value<std::string>(), "the most emulated accelerators (GPU ranks) a point may have, all hosts "
                                             "together [64]");
  // clang-format on
  po::options_description hosts("Many hosts (under mpirun or srun: each point's accelerators spread over the hosts)");
  // clang-format off
  hosts.add_options()
      ("mpi-timeout", po::value<std::string>(), "end the job, naming the step, when a rank waits longer than this for "
                                                "the others in one step, e.g. 300s [300s]");
  // clang-format on
  po::options_description output("Output");
  // clang-format off
  output.add_options()
      ("json", po::value<std::string>(), "write the result document (JSON) to FILE")
      ("html", po::value<std::string>(), "write a self-contained HTML report to FILE")
      ("quiet", po::value<std::string>()->implicit_value("true"), "no progress lines")
      ("help,h", "this help");
  // clang-format on
  po::options_description all;
  all.add(search)
      .add(dataset_options_description())
      .add(loader_options_description(false))
      .add(gpu_options_description());
  all.add(hosts).add(output);
  return all;
}

// Each point's ranks hold a file and an io_uring ring per worker: the open-files limit bounds
// the largest point, checked here so the message names --max-gpus.
void check_descriptors(uint32_t max_gpus, uint32_t workers) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  const uint64_t need = uint64_t{max_gpus} * workers * 2 + 32;
  if (rl.rlim_cur < need)
    throw UsageError(fmt::format("--max-gpus {} x --workers {} need about {} file descriptors, RLIMIT_NOFILE is {}; "
                                 "lower --max-gpus or raise the limit (ulimit -n {})",
                                 max_gpus, workers, need, rl.rlim_cur, need));
}

}  // namespace

int cmd_capacity(const CommandContext& ctx) {
  po::options_description desc = capacity_options();
  po::variables_map vm = parse_command_line(ctx.args, desc, "capacity");
  if (vm.count("help")) {
    std::cout << "usage: ioprobe capacity [OPTIONS]\n\n"
                 "Finds how many emulated accelerators of the --gpu kind this storage feeds at AU >= the target: runs\n"
                 "the DataLoader emulation with 1, 2, 4, ... GPU ranks until a count is not fed, then bisects, so the\n"
                 "answer N is fed and N+1 is not, both measured. Each point runs --repeats times for --point-time.\n"
                 "When this host's CPUs (or its emulated GPUs' threads) are the limit, the answer is 'client-bound at\n"
                 "N: add hosts' instead of a verdict on the storage.\n"
                 "Under mpirun or srun (one ioprobe per host), each point's N accelerators are spread evenly over the\n"
                 "hosts, then over each host's processes, and run at once as one DDP job; the client is judged per\n"
                 "host ('client-bound on host X at N: add hosts').\n"
              << desc
              << "\nExit codes: 0 ok, 1 run failed, 2 bad usage or input, 130/143 interrupted (partial result).\n";
    return kExitOk;
  }
  // Across hosts: every process must run this one plan (refused before any I/O otherwise).
  check_same_options(ctx, vm, desc, "capacity", PresetFile::kDataset);
  for (const char* own : {"gpus", "duration", "epochs"})
    if (vm.count(own))
      throw UsageError(fmt::format("--{}: capacity sets it for each point itself (the GPU count is what it searches; "
                                   "each run lasts --point-time); bound the search with --max-gpus, --point-time and "
                                   "--budget",
                                   own));
  HostInfo host = probe_host();
  const uint32_t repeats = static_cast<uint32_t>(get_count(vm, "repeats", 2, 1, 100));
  const double budget_s = get_duration(vm, "budget", 600);
  if (budget_s <= 0) throw UsageError("--budget: must be greater than 0, e.g. 10m");
  const double point_s = get_duration(vm, "point-time", 3);
  if (point_s < kMinRunS)
    throw UsageError(fmt::format("--point-time '{}': must be at least {} s: each run's rate is taken over its {} s "
                                 "timeline intervals after the first (warm-up) and before the last (cut short); e.g. "
                                 "--point-time 3s",
                                 get_string(vm, "point-time"), kMinRunS, kTuneIntervalS));
  uint32_t max_gpus = static_cast<uint32_t>(get_count(vm, "max-gpus", 64, 1, 1024));
  const std::string html = get_string(vm, "html");

  RunConfig c;
  run_config_from_vm(vm, desc, RunCommandKind::kRun, c);
  resolve_calibrated_worker_costs(c, true);  // each point's GPU ranks have their own level
  // A budget too short for one point (each of its repeats lengthened to kMinStepsPerPoint GPU steps
  // after the warm-up when the steps are long) can measure nothing: refused before the dataset,
  // from the demand alone (the catalog or --step-time / --gpu-samples-per-s).
  const double step_s = plan_step_time_s(c, resolve_demand(c, plan_model(c)));
  if (const double need_s = point_need_s(repeats, point_s, step_s); budget_s < need_s) {
    const double run_s = point_run_s(point_s, step_s);
    throw UsageError(fmt::format(
        "--budget {}: too short for even one point of the search, which needs at least {}: {} repeat(s) (--repeats) "
        "x ({} per run{} + {} s to start each run), before the dataset is checked; give --budget {}s or more{}",
        vm.count("budget") ? get_string(vm, "budget") : format_seconds(budget_s) + " (the default)",
        format_seconds(need_s), repeats, format_seconds(run_s),
        run_s > point_s ? fmt::format(", lengthened past --point-time {} s to {} GPU steps of {:.3f} s after {:.0f} s "
                                      "of warm-up",
                                      point_s, kMinStepsPerPoint, step_s, kMinWarmupS)
                        : "",
        kRunOverheadS, static_cast<uint64_t>(std::ceil(need_s)),
        run_s > point_s ? ", or shorter GPU steps (a smaller --batch-size, or --step-time / --gpu-samples-per-s)"
                        : ", or fewer --repeats or a shorter --point-time"));
  }
  comm::Comm& comm = *ctx.comm;
  const bool multi = comm.multi();
  if (multi && comm.rank() != 0) c.quiet = true;
  std::vector<int> host_of_rank{0};
  const std::vector<std::string> hosts = multi ? host_names(comm, &host_of_rank, c.mpi_timeout_s)
                                               : std::vector<std::string>{host.hostname};
  // The most GPU ranks this process runs: its share of the largest point.
  const uint32_t my_max = cluster::split_gpus(max_gpus, host_of_rank)[static_cast<size_t>(comm.rank())];
  if (uint64_t{max_gpus} * c.loader.num_workers > 16384)
    throw UsageError(fmt::format("--max-gpus {} x --workers {} = {} worker threads; keep it at most 16384", max_gpus,
                                 c.loader.num_workers, uint64_t{max_gpus} * c.loader.num_workers));
  check_descriptors(std::max<uint32_t>(my_max, 1), c.loader.num_workers);
  // Rank 0 alone writes them; a refusal there ends every process.
  cluster::on_every_host(comm, "check the output paths", [&] {
    if (comm.rank() != 0) return;
    if (!c.json_path.empty()) check_output_path(c.json_path, "--json", "capacity");
    if (!html.empty()) check_output_path(html, "--html", kHtmlOutput);
    check_outputs_distinct({{"--json", c.json_path}, {"--html", html}});
  });

  const int64_t t0 = now_ns();
  CapacityDocument doc;
  doc.header = run_header(ctx.argv, host);
  PrepareOptions prep;
  prep.max_workers = std::max<uint32_t>(my_max, 1) * c.loader.num_workers;  // the widest point, for the memlock plan
  prep.check_rank_shares = false;  // the points vary the rank count: the search is bounded below instead
  const HostsPlan prepared = prepare_run_on_hosts(comm, c, prep);
  const RunPlan& plan = prepared.plan;  // read-only from here: each point's runs are new values
  const cluster::Placement& placement = prepared.placement;
  if (plan.interrupted) {
    message(interrupted_dataset_text(c, plan.data));
    return interrupt_exit_code();
  }
  const PreparedData& data = plan.data;
  const Demand& demand = plan.demand;
  const LoaderConfig& base = plan.loader;
  const double sample_bytes = plan.dataset_sample_bytes;
  // A point with more GPU ranks than the epoch has samples (or shards) gives ranks nothing to read
  // while their GPUs count in the demand: the search stops where every rank still gets a share.
  std::vector<std::string> search_warnings;  // after the plan's own, in the document
  if (plan.rank_units < max_gpus) {
    if (plan.rank_units == 0)
      throw UsageError("capacity: the dataset holds no sample; give --files or --data with files");
    search_warnings.push_back(fmt::format("--max-gpus {} lowered to {}: the dataset has {} {} per epoch and a GPU "
                                          "rank without one reads nothing; use more --files to search further",
                                          max_gpus, plan.rank_units, format_count(plan.rank_units), plan.rank_unit));
    if (!c.quiet) warning(search_warnings.back());
    max_gpus = static_cast<uint32_t>(plan.rank_units);
  }

  if (!c.quiet)
    message(fmt::format("{} ({:.1f} samples/s each, AU >= {:.0f}%) on {} files at {} ({}); {} x {} s per "
                        "point, up to {} GPU ranks{}, budget {}",
                        demand.accelerator_name, demand.samples_per_s_per_gpu, demand.au_target * 100,
                        format_count(data.index.size()), escape_bytes(data.target_path),
                        base.direct ? "O_DIRECT" : "buffered", repeats, point_s, max_gpus,
                        multi ? fmt::format(" over {} hosts ({} MPI ranks: {})", comm.host_count(), comm.size(),
                                            fmt::join(hosts, ", "))
                              : "",
                        format_seconds(budget_s)));
  PointRunOptions pro;
  pro.repeats = repeats;
  pro.point_s = point_s;
  pro.cpus_allowed = host.cpus_allowed;
  pro.deadline_ns = t0 + static_cast<int64_t>(budget_s * 1e9);
  // Device accounting: this host's devices around each repeat; across hosts each process
  // sends its host's and rank 0 adds them up per point.
  CapacityDeviceIo devices(plan.target());
  pro.before_repeat = [&devices](uint32_t, uint32_t) { devices.before_run(); };
  cluster::CommStepSync sync(comm, c.mpi_timeout_s);
  PointAcross across = multi ? capacity_across(comm, &sync, c.mpi_timeout_s, &devices) : PointAcross{};
  across.host_of_rank = host_of_rank;
  int job_stop = 0;  // the highest stop the processes agreed on: 2 when a signal on any host ended the search
  if (multi)
    across.agree_stop = [&job_stop, agree = across.agree_stop](int stop) {
      const int v = agree(stop);
      job_stop = std::max(job_stop, v);
      return v;
    };
  const cluster::PointPart me = capacity_me(comm, host.cpus_allowed);
  MeasurePointFn measure = [&](uint32_t gpus) {
    std::optional<CapacityPoint> p = multi
                                         ? measure_point_across(data.index, base, gpus, pro, plan.topo, &data.layout,
                                                                across, me)
                                         : measure_point(data.index, base, gpus, pro, plan.topo, &data.layout,
                                                         [&devices, &host](uint32_t g, uint32_t, const RepeatSample&) {
                                                           devices.add(g, 0, host.hostname, devices.after_run());
                                                         });
    std::string split;
    if (p)
      for (const auto& h : p->hosts) split += fmt::format("{}{} {}", split.empty() ? " (" : ", ", h.hostname, h.gpus);
    if (!split.empty()) split += ")";
    if (p && !c.quiet)
      message(fmt::format("{:>4} x {}{}: AU {:.1f}% (lowest rank {:.1f}%), {:.0f} of {:.0f} samples/s, {}, "
                          "spread {:.1f}%, CPU {:.0f}%: {}{}  [{} elapsed]",
                          gpus, demand.accelerator_name, split, p->au * 100, p->au_min * 100, p->samples_per_s,
                          demand.samples_per_s_per_gpu * gpus, format_rate(p->bytes_per_s), p->spread * 100,
                          p->cpu_fraction * 100, point_passes(*p, demand.au_target) ? "fed" : "NOT fed",
                          p->note.empty() ? "" : " (" + p->note + ")",
                          format_seconds(static_cast<double>(now_ns() - t0) / 1e9)));
    return p;
  };
  CapacitySearchOptions so;
  so.au_target = demand.au_target;
  so.max_gpus = max_gpus;
  so.interrupted = [&job_stop] { return interrupted() || job_stop == 2; };
  const CapacityAnswer answer = search_capacity(measure, so);
  ctx.job_outcome_shared = multi;  // every process saw every point's outcome
  if (multi && comm.rank() != 0) return share_exit_code(comm, 0);

  CapacitySectionInputs& in = doc.capacity.in;
  in.accelerator = demand.accelerator;
  in.accelerator_name = demand.accelerator_name;
  in.model = demand.model;
  in.au_target = demand.au_target;
  in.samples_per_s_per_gpu = demand.samples_per_s_per_gpu;
  in.sample_bytes = sample_bytes;
  in.point_s = point_s;
  in.budget_s = budget_s;
  in.elapsed_s = static_cast<double>(now_ns() - t0) / 1e9;
  in.repeats = repeats;
  in.max_gpus = max_gpus;
  in.stop = interrupted() || job_stop == 2                          ? CapacityStop::kInterrupted
            : answer.bound == "budget" && !answer.boundary_measured ? CapacityStop::kBudget
            : answer.bound == "limit"                               ? CapacityStop::kLimit
                                                                    : CapacityStop::kCompleted;

  doc.target = plan_target_section(plan, base);
  doc.targets = target_share_sections(plan.targets);
  doc.dataset = plan_dataset_section(plan);
  CapacityLoaderSection& ls = doc.loader;
  ls.num_workers = base.num_workers;
  ls.batch_size = base.batch_size;
  ls.prefetch_factor = base.prefetch_factor;
  ls.engine = base.engine;
  ls.direct = base.direct;
  ls.shuffle = base.shuffle;
  ls.cpu_per_sample_us = base.costs.worker.loop_us;
  ls.step_time_s = base.step_time_s;
  ls.consumer = consumer_model(base, c.calibration_path, c.calibration);  // as run's and tune's
  doc.demand = {.accelerator = demand.accelerator,
                .accelerator_name = demand.accelerator_name,
                .model = demand.model,
                .rate_family = demand.rate_family,
                .samples_per_s_per_gpu = demand.samples_per_s_per_gpu,
                .source = demand.source,
                .sample_bytes = sample_bytes,
                .au_target = demand.au_target};
  doc.capacity.answer = answer;
  if (!c.calibration_path.empty())  // at the GPU ranks found fed (at least one)
    doc.capacity.calibration_effect = calibration_effect(with_ranks(base, std::max<uint32_t>(1, answer.gpus_fed)));
  doc.capacity.device_io = devices.points();
  // As run's: a device figure the point's own I/O may not explain is said so.
  for (auto& w : devices.warnings(answer.points, c.cache == CacheMode::kCold, plan.target()))
    doc.warnings.push_back(std::move(w));
  if (multi) doc.cluster = capacity_cluster_section(comm, hosts, placement.kind, placement.how);
  doc.partial = in.stop == CapacityStop::kInterrupted || answer.points.empty();
  for (const auto& w : data.warnings) doc.warnings.push_back(w);
  for (const auto& w : search_warnings) doc.warnings.push_back(w);
  for (const auto& w : c.calibration_notes) doc.warnings.push_back(w);  // as run's and tune's
  // Storage-bound at N+1 ranks on a dataset of few batches per rank: the epoch boundaries may be the cause.
  if (answer.bound == "storage") {
    const uint32_t at = answer.gpus_fed + 1;
    if (std::string w = few_batches_warning(
            batches_per_rank_epoch(plan.samples_per_epoch, at, base.batch_size, base.drop_last), at, base.batch_size,
            fmt::format("the answer (storage-bound at {} GPU rank{})", at, at == 1 ? "" : "s"), "--point-time");
        !w.empty())
      doc.warnings.push_back(w);
  }
  if (answer.points.empty() && in.stop != CapacityStop::kInterrupted)
    doc.warnings.push_back(fmt::format("no point was measured: --budget {} left no room for {} x {} s after the "
                                       "dataset check; raise --budget",
                                       format_seconds(budget_s), repeats, point_s));

  std::cout << render_capacity_text(doc) << std::flush;
  if (!c.json_path.empty()) {
    write_capacity_document(c.json_path, doc);
    message(fmt::format("wrote {}", escape_bytes(c.json_path)));
  }
  if (!html.empty()) {
    write_file_atomically(html, render_html_report({capacity_document_json(doc)}),
                          "check that the directory exists and is writable");
    message(fmt::format("wrote {}", escape_bytes(html)));
  }
  int rc = answer.points.empty() ? kExitFailure : kExitOk;
  if (interrupted()) rc = interrupt_exit_code();
  else if (in.stop == CapacityStop::kInterrupted) rc = kExitSigint;  // another host's signal
  return multi ? share_exit_code(comm, rc) : rc;
}

}  // namespace ioprobe::cli
