// `ioprobe tune`: sweeps num_workers x prefetch_factor x NUMA placement with the DataLoader
// emulation against the chosen GPUs' demand, and recommends the setting to type.
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/device_accounting.hpp"
#include "cli/run_calibration.hpp"
#include "cli/run_cluster.hpp"
#include "cli/run_config.hpp"
#include "cli/run_plan.hpp"
#include "cli/same_options.hpp"
#include "cluster/collective.hpp"
#include "cluster/comm_step_sync.hpp"
#include "cluster/gather.hpp"
#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/message.hpp"
#include "core/progress.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "ingest/analysis.hpp"
#include "ingest/calibration_effect.hpp"
#include "loader/loader_result_json.hpp"  // the codec allgather_parts sends a run's result with
#include "report/document.hpp"
#include "report/run_document.hpp"
#include "report/tune_document.hpp"
#include "topology/host.hpp"
#include "topology/numa.hpp"
#include "topology/target.hpp"
#include "tune/recommend.hpp"
#include "tune/rules.hpp"
#include "tune/tune_run.hpp"

namespace ioprobe::cli {

namespace {

po::options_description tune_options() {
  static const std::string point_time_help = fmt::format(
      "seconds per run instead of the budget's share, at least {} s (the steady-state rule's {} intervals of {} s, "
      "plus one), e.g. 5s; lengthened for long GPU steps as capacity's points are",
      kMinRunS, kSteadyMinIntervals, kTuneIntervalS);
  po::options_description sweep("Sweep");
  // clang-format off
  sweep.add_options()
      ("workers", po::value<std::string>(), "num_workers values to try, e.g. 4,8,16,32 [1,2,4,... up to 8 x allowed CPUs, at most 64]")
      ("prefetch-factors", po::value<std::string>(), "prefetch_factor values to try [1,2,4]")
      ("numa", po::value<std::string>(), "placements: auto (none, the device's node, each node; only none on one node) | none [auto]")
      ("repeats", po::value<std::string>(), "runs per setting, for the spread [3]")
      ("budget", po::value<std::string>(), "time for the whole sweep, dataset check included, e.g. 10m [10m]")
      ("point-time", po::value<std::string>(), point_time_help.c_str());
  // clang-format on
  po::options_description output("Output");
  // clang-format off
  output.add_options()
      ("json", po::value<std::string>(), "write the result document (JSON) to FILE")
      ("html", po::value<std::string>(), "write a self-contained HTML report to FILE")
      ("csv", po::value<std::string>(), "write the table of points (CSV) to FILE")
      ("quiet", po::value<std::string>()->implicit_value("true"), "no progress lines")
      ("help,h", "this help");
  // clang-format on
  po::options_description all;
  all.add(sweep)
      .add(dataset_options_description())
      .add(loader_options_description(true))
      .add(gpu_options_description())
      .add(output);
  return all;
}

// Across hosts: before each run every process agrees whether to stop (the highest stop code);
// after it, every process gets the run's result merged over all processes (in rank order).
SweepAcross sweep_across(comm::Comm& comm, StepSync* sync, double timeout_s) {
  SweepAcross a;
  a.sync = sync;
  a.agree_stop = [&comm, timeout_s](int stop) {
    int64_t v = stop;
    comm.allreduce_max(&v, 1, "tune: agree on the next run", timeout_s);
    return static_cast<int>(v);
  };
  a.merge = [&comm, timeout_s](const LoaderResult& mine) {
    LoaderResult merged;
    for (const LoaderResult& part : cluster::allgather_parts(comm, mine, "tune: merge a run's results", timeout_s))
      merged.merge(part);
    return merged;
  };
  return a;
}

void write_text_file(const std::string& path, const std::string& text) {
  // Same atomic temp+rename guarantee as the JSON writer: no half-written file under `path`.
  write_file_atomically(path, text, "check that the directory exists and is writable");
  message(fmt::format("wrote {}", escape_bytes(path)));
}

}  // namespace

int cmd_tune(const CommandContext& ctx) {
  po::options_description desc = tune_options();
  po::variables_map vm = parse_command_line(ctx.args, desc, "tune");
  if (vm.count("help")) {
    std::cout << "usage: ioprobe tune [OPTIONS]\n\n"
                 "Runs the DataLoader emulation for each num_workers x prefetch_factor x NUMA placement, each run\n"
                 "repeated, against the GPUs' demand; prints the table, the knee and the DataLoader(...) setting\n"
                 "(and numactl line where binding helped) to use.\n"
              << desc
              << "\nExit codes: 0 ok, 1 run failed, 2 bad usage or input, 130/143 interrupted (partial result).\n";
    return kExitOk;
  }
  // Across hosts: every process must run this one plan (refused before any I/O otherwise).
  check_same_options(ctx, vm, desc, "tune", PresetFile::kDataset);
  HostInfo host = probe_host();
  comm::Comm& comm = *ctx.comm;
  const bool multi = comm.multi();
  std::vector<uint32_t> workers = vm.count("workers") ? parse_uint_list(get_string(vm, "workers"), "--workers", 1, 4096)
                                                      : default_worker_list(host.cpus_allowed);
  std::vector<uint32_t> prefetch = vm.count("prefetch-factors") ? parse_uint_list(get_string(vm, "prefetch-factors"),
                                                                                  "--prefetch-factors", 1, 1024)
                                                                : std::vector<uint32_t>{1, 2, 4};
  std::string numa_mode = get_choice(vm, "numa", "auto", {"auto", "none"});
  uint32_t repeats = static_cast<uint32_t>(get_count(vm, "repeats", 3, 1, 100));
  double budget_s = get_duration(vm, "budget", 600);
  if (budget_s <= 0) throw UsageError("--budget: must be greater than 0, e.g. 10m");
  double point_s = vm.count("point-time") ? get_duration(vm, "point-time", 0) : 0;
  // 0 is no "use the budget's share" (that is leaving the option out), and a run shorter than the
  // steady-state rule needs would only measure "no steady state".
  if (vm.count("point-time") && point_s < kMinRunS)
    throw UsageError(fmt::format(
        "--point-time '{}': must be at least {} s: each run's rate is taken over its {} s timeline intervals after "
        "the first (warm-up) and before the last (cut short), so a run needs {} intervals ({} s) and tune adds one "
        "more of margin; e.g. --point-time 5s, or leave it out to share --budget",
        get_string(vm, "point-time"), kMinRunS, kTuneIntervalS, kSteadyMinIntervals,
        kSteadyMinIntervals * kTuneIntervalS));
  std::string html = get_string(vm, "html"), csv = get_string(vm, "csv");

  RunConfig c;
  run_config_from_vm(vm, desc, RunCommandKind::kTune, c);
  resolve_calibrated_worker_costs(c, true);  // each point's num_workers has its own level
  if (multi) {
    // Every process runs the same plan: rank 0's num_workers list (its default depends on the
    // host's CPUs), and only unbound runs (the hosts' NUMA layouts may differ).
    // The list travels as its option text, "1,2,4", read back as --workers is.
    workers = parse_uint_list(comm.broadcast(fmt::format("{}", fmt::join(workers, ",")), "tune: the plan", 60),
                              "--workers", 1, 4096);
    numa_mode = "none";
    if (comm.rank() != 0) c.quiet = true;
  }
  // The budget against the sweep, before the dataset: a budget too short even for the unbound
  // settings (the NUMA placements, known after the preflight, only add settings) can measure
  // nothing. make_plan throws the UsageError naming --budget; checked again below with the
  // placements and the setup time.
  auto refuse_point_time = [&](const SweepPlan& p, double setup) {
    if (point_s > 0 && setup + p.estimated_s > budget_s)
      throw UsageError(fmt::format("--point-time {} s: {} runs need about {}, more than --budget {}; raise --budget "
                                   "or shorten --point-time",
                                   point_s, p.points.size() * p.repeats, format_seconds(setup + p.estimated_s),
                                   format_seconds(budget_s)));
  };
  refuse_point_time(point_s > 0 ? make_plan(workers, prefetch, {"none"}, repeats, 1e12, 0, point_s, point_s)
                                : make_plan(workers, prefetch, {"none"}, repeats, budget_s, 0),
                    0);
  // Output paths are checked before the sweep, not after minutes of measuring.
  // Rank 0 alone writes them; a refusal there ends every process.
  cluster::on_every_host(comm, "check the output paths", [&] {
    if (comm.rank() != 0) return;
    if (!c.json_path.empty()) check_output_path(c.json_path, "--json", "tune");
    if (!html.empty()) check_output_path(html, "--html", kHtmlOutput);
    if (!csv.empty()) check_output_path(csv, "--csv", kTuneCsvOutput);
    check_outputs_distinct({{"--json", c.json_path}, {"--html", html}, {"--csv", csv}});
  });
  const int64_t t0 = now_ns();
  const int64_t deadline = t0 + static_cast<int64_t>(budget_s * 1e9);
  TuneDocument doc;
  doc.header = run_header(ctx.argv, host);
  PrepareOptions prep;
  prep.max_workers = *std::max_element(workers.begin(), workers.end());
  prep.processes = static_cast<uint32_t>(comm.size());
  const HostsPlan prepared = prepare_run_on_hosts(comm, c, prep);
  const RunPlan& run_plan = prepared.plan;  // read-only from here: each setting's run is a new value
  const cluster::Placement& placement = prepared.placement;
  if (run_plan.interrupted) {
    message(interrupted_dataset_text(c, run_plan.data));
    return interrupt_exit_code();
  }
  const PreparedData& data = run_plan.data;
  const TargetInfo& target = run_plan.target();
  const Topology& topo = run_plan.topo;
  // Each setting's runs vary workers, prefetch and placement in new values made from this one
  // (tune/tune_run.hpp setting_run_config). Across hosts, as `run` does: DistributedSampler over
  // every GPU rank of the job, and the demand counts them all.
  const LoaderConfig base = in_job(run_plan.loader, static_cast<uint32_t>(comm.size()),
                                   static_cast<uint32_t>(comm.rank()));
  Demand demand = run_plan.demand;
  if (multi) demand.gpus = base.world_ranks;

  std::string placements_why;
  int device_node = target.device_numa_node;
  std::vector<std::string> placements = numa_mode == "none" ? std::vector<std::string>{"none"}
                                                            : placements_to_sweep(topo, device_node, &placements_why);
  if (numa_mode == "none")
    placements_why = multi ? "across hosts: only unbound runs (the hosts' NUMA layouts may differ)"
                           : "--numa none: only unbound runs";
  double setup_s = static_cast<double>(now_ns() - t0) / 1e9;
  // The same run length on every process: rank 0's setup time decides the budget's share.
  if (multi) setup_s = std::stod(comm.broadcast(fmt::format("{:.9g}", setup_s), "tune: the plan", 60));
  SweepPlan plan = point_s > 0 ? make_plan(workers, prefetch, placements, repeats, 1e12, 0, point_s, point_s)
                               : make_plan(workers, prefetch, placements, repeats, budget_s, setup_s);
  lengthen_runs(plan, base.step_time_s);  // long GPU steps: as capacity's points, long enough for a steady window
  refuse_point_time(plan, setup_s);

  double longest_s = plan.run_s;
  for (const TunePoint& p : plan.points) longest_s = std::max(longest_s, p.run_s);
  if (!c.quiet)
    message(fmt::format("{} setting(s) x {} repeat(s), {} s each{} (about {}); {} files on {} ({})", plan.points.size(),
                        plan.repeats, plan.run_s,
                        longest_s > plan.run_s ? fmt::format(", lengthened up to {} s for GPU steps of {:.3f} s",
                                                             longest_s, base.step_time_s)
                                               : "",
                        format_seconds(plan.estimated_s), format_count(data.index.size()),
                        escape_bytes(data.target_path), base.direct ? "O_DIRECT" : "buffered"));
  // On a terminal the running setting is redrawn in place; elsewhere (a log, a pipe) only each
  // finished setting is printed, one plain line.
  ProgressLine line(!c.quiet, 0, 1e9);
  TuneDeviceIo tune_devices(run_plan.target());  // device accounting: an idle window now, each run's reads
  TuneProgressFn progress = [&](size_t run, size_t runs, const TunePoint& p, uint32_t rep, const TuneSample* done) {
    tune_devices.on_run(p.num_workers, p.prefetch_factor, p.numa, done != nullptr);
    double el = static_cast<double>(now_ns() - t0) / 1e9;
    double left = static_cast<double>(runs - run) * (plan.run_s + kRunOverheadS);
    if (!done && line.tty())
      line.print(fmt::format("[{}/{}] num_workers={} prefetch_factor={} numa={} repeat {}/{} ... {} elapsed, ~{} left",
                             run + 1, runs, p.num_workers, p.prefetch_factor, p.numa, rep + 1, plan.repeats,
                             format_seconds(el), format_seconds(left)));
    else if (done)
      line.print_line(fmt::format("[{}/{}] num_workers={} prefetch_factor={} numa={}: {:.0f} samples/s, AU {:.0f}%",
                                  run, runs, p.num_workers, p.prefetch_factor, p.numa, done->samples_per_s,
                                  100 * done->au));
  };
  cluster::CommStepSync sync(comm, c.mpi_timeout_s);
  const SweepAcross across = multi ? sweep_across(comm, &sync, c.mpi_timeout_s) : SweepAcross{};
  TuneOutcome out = run_sweep(data.index, base, plan, topo, deadline, progress, &data.layout, across);
  line.finish();
  ctx.job_outcome_shared = multi;  // every process saw every run's merged outcome
  if (multi && comm.rank() != 0) return share_exit_code(comm, 0);

  RecommendInputs ri;
  ri.required_samples_per_s = demand.samples_per_s_per_gpu * demand.gpus;
  ri.au_target = demand.au_target;
  ri.gpus = base.ranks;
  ri.cpus_allowed = host.cpus_allowed;
  Recommendation rec = recommend(plan.points, ri, topo);

  // No size known before the run (a --data walk whose sampled files could not be stat'ed): the
  // demand in bytes/s uses the bytes per sample the sweep read (the dataset's own files), not 0 B.
  double sample_bytes = run_plan.dataset_sample_bytes;
  for (const TunePoint& p : plan.points)
    if (sample_bytes == 0 && p.samples_per_s > 0 && p.bytes_per_s > 0) sample_bytes = p.bytes_per_s / p.samples_per_s;
  doc.target = plan_target_section(run_plan, base);
  doc.targets = target_share_sections(run_plan.targets);
  doc.dataset = plan_dataset_section(run_plan);
  doc.loader = {base.batch_size,  base.ranks,
                base.engine,      base.direct,
                base.shuffle,     base.costs.worker.loop_us,
                base.step_time_s, consumer_model(base, c.calibration_path, c.calibration)};
  doc.demand = {demand, ri.required_samples_per_s, ri.required_samples_per_s * sample_bytes, sample_bytes};
  doc.tune.workers = workers;
  doc.tune.prefetch_factors = prefetch;
  doc.tune.placements = placements;
  doc.tune.placements_reason = placements_why;
  doc.tune.repeats = plan.repeats;
  doc.tune.run_s = plan.run_s;
  doc.tune.budget_s = budget_s;
  doc.tune.elapsed_s = static_cast<double>(now_ns() - t0) / 1e9;
  doc.tune.runs_done = out.runs_done;
  doc.tune.runs_planned = plan.points.size() * plan.repeats;
  doc.tune.stop = out.stop;
  doc.points = tune_point_entries(plan.points);
  tune_devices.add_to(doc.points);
  for (auto& w : tune_devices.warnings()) doc.warnings.push_back(std::move(w));
  add_point_worker_costs(c, doc.points, doc.warnings);
  doc.recommendation = rec;
  if (!c.calibration_path.empty())  // at the recommended setting, else the base one
    doc.tune.calibration_effect = calibration_effect(rec.valid && rec.point < plan.points.size()
                                                         ? with_num_workers(base, plan.points[rec.point].num_workers)
                                                         : base);
  doc.rules = tune_rules(check_workers_rule(plan.points, rec, host.cpus_allowed), plan.points);
  if (out.runs_done) doc.best_run = out.best_run;
  if (multi)
    doc.cluster = tune_cluster_section(comm.launcher(), comm.host_count(), comm.size(), base.world_ranks,
                                       placement.kind, placement.how);
  doc.partial = out.partial;
  for (const auto& w : data.warnings) doc.warnings.push_back(w);
  for (const auto& w : c.calibration_notes) doc.warnings.push_back(w);
  if (std::string w = prefetch_slots_warning(plan.points,
                                             batches_per_rank_epoch(run_plan.samples_per_epoch, base.world_ranks,
                                                                    base.batch_size, base.drop_last),
                                             base.world_ranks, base.batch_size);
      !w.empty())
    doc.warnings.push_back(std::move(w));
  if (out.stop.kind == TuneStopKind::kBudget)
    doc.warnings.push_back(fmt::format("the --budget of {} ran out after {} of {} runs; settings with fewer repeats "
                                       "are less certain",
                                       format_seconds(budget_s), out.runs_done, plan.points.size() * plan.repeats));

  std::cout << render_tune_text(doc) << std::flush;
  if (!c.json_path.empty()) {
    write_tune_document(c.json_path, doc);
    message(fmt::format("wrote {}", escape_bytes(c.json_path)));
  }
  if (!html.empty()) write_text_file(html, render_tune_html(doc));
  if (!csv.empty()) write_text_file(csv, render_tune_csv(doc));
  int rc = kExitOk;
  if (out.partial && out.stop.kind != TuneStopKind::kBudget)
    rc = interrupt_exit_code() || !multi ? interrupt_exit_code()
                                         : static_cast<int>(kExitSigint);  // another host's signal
  else if (!rec.valid) rc = kExitFailure;
  return multi ? share_exit_code(comm, rc) : rc;
}

}  // namespace ioprobe::cli
