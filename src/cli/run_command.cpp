// `ioprobe run` (default), `ioprobe gen` and `ioprobe report`: the flow of ARCHITECTURE.md ("The flow"):
// RunConfig -> prepare_run (the RunPlan: dataset, targets, engine, demand) -> loader run -> ingest analysis -> report.
#include <sys/resource.h>
#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/device_accounting.hpp"
#include "cli/run_cluster.hpp"
#include "cli/run_config.hpp"
#include "cli/run_document_build.hpp"
#include "cli/run_plan.hpp"
#include "cli/run_prepare.hpp"
#include "cluster/collective.hpp"
#include "cluster/comm_step_sync.hpp"
#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/message.hpp"
#include "core/progress.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "dataset/size_sample.hpp"
#include "engine/page_cache.hpp"
#include "ingest/calibration_effect.hpp"
#include "ingest/h2d_link.hpp"
#include "report/device_io_report.hpp"
#include "report/document.hpp"
#include "report/run_document.hpp"
#include "report/run_text.hpp"
#include "topology/host.hpp"
#include "topology/numa.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

namespace {

// Says when a figure should not be trusted as it stands: a run too short, a warm-up that
// dominates, or an emulated GPU that fell behind its step time because the host was busy.
std::vector<std::string> measurement_warnings(const LoaderResult& lr, const IngestResult& ing, const LoaderConfig& l) {
  std::vector<std::string> w;
  const double elapsed = static_cast<double>(lr.elapsed_ns) / 1e9;
  uint64_t batches = 0;
  double first = 0;
  for (const auto& rk : lr.ranks) {
    batches += rk.batches;
    first = std::max(first, static_cast<double>(rk.first_batch_ns) / 1e9);
  }
  if (elapsed < 5.0 || batches < 20 * lr.ranks.size())
    w.push_back(fmt::format("short run ({} batches in {:.2f} s): the verdict is indicative only; use more --files, "
                            "--epochs or --duration for a steady figure",
                            batches, elapsed));
  if (elapsed > 0 && first > 0.1 * elapsed)
    w.push_back(fmt::format("the first batch took {:.2f} s of the {:.2f} s run (pipeline warm-up); AU includes it, as "
                            "MLPerf Storage's does",
                            first, elapsed));
  const double lag_share = elapsed > 0 ? ing.consumer_lag_s / (elapsed * std::max<size_t>(1, lr.ranks.size())) : 0;
  if (l.step_time_s > 0 && lag_share > 0.05 && lr.samples > 0)  // no batch: no step ran late
    w.push_back(fmt::format("the emulated GPU step ran late for {:.0f}% of the run (the host's CPUs were busy, e.g. {} "
                            "worker threads); AU counts only the nominal step time, so this lowers it",
                            100 * lag_share, l.ranks * l.num_workers));
  return w;
}

// How the loader reads the dataset, for the report.
std::string read_pattern(const RecordLayout& layout, const LoaderConfig& l) {
  switch (layout.kind()) {
    case DatasetKind::kSharded:
      if (l.shuffle_buffer > 0)
        return fmt::format("webdataset 1.0.2's order: shards split by rank then worker, {}; each worker reads its "
                           "shards sequentially in {} reads and delivers its samples through a shuffle buffer of {} "
                           "samples (it yields its first once it holds {} samples); batches taken round-robin over "
                           "workers, in order",
                           l.wds_shard_shuffle ? fmt::format("shardshuffle={} seed={}", l.wds_shard_shuffle, l.seed)
                                               : std::string("shard order fixed"),
                           format_bytes(l.read_size), l.shuffle_buffer, l.shuffle_initial);
      return fmt::format("IterableDataset: shards dealt rank-major then worker (webdataset split_by_node, "
                         "split_by_worker), {}; each worker reads its shards sequentially in {} reads and builds whole "
                         "batches; batches taken round-robin over workers, in order",
                         l.shuffle ? "shard order shuffled per epoch" : "shard order fixed", format_bytes(l.read_size));
    case DatasetKind::kToken:
      return fmt::format("map-style: {} sampler over sequence indices, one {} read per sample at its offset in the "
                         "token file{}",
                         l.shuffle ? "shuffled" : "sequential", to_string(l.engine),
                         l.direct && layout.fixed_size() % 4096 ? " (O_DIRECT: unaligned samples read as their "
                                                                  "4 KiB-aligned span into a bounce buffer)"
                                                                : "");
    case DatasetKind::kFiles:
      break;
  }
  return "map-style: one sample per file, open + whole-file read + close";
}

// The job's GPU ranks: "4 GPU rank(s)" on one process, "2 GPU rank(s) (1 per process x 2
// processes)" across several; rank 0 prints for the whole job.
std::string job_ranks_text(const LoaderConfig& l, int processes) {
  const uint32_t world = std::max(l.world_ranks, l.ranks);
  if (processes <= 1) return fmt::format("{} GPU rank(s) x", world);
  return fmt::format("{} GPU rank(s) ({} per process x {} processes) x", world, l.ranks, processes);
}

// Warnings particular to records datasets. Shards are split over every GPU rank of the job.
std::vector<std::string> records_warnings(const RecordLayout& layout, const LoaderConfig& l) {
  std::vector<std::string> w;
  const uint32_t world = std::max(l.world_ranks, l.ranks);
  const uint64_t readers = static_cast<uint64_t>(world) * l.num_workers;
  if (layout.kind() == DatasetKind::kSharded && layout.files() < readers)
    w.push_back(fmt::format("{} shards for {} rank(s) x {} workers: {} worker(s) get no shard and read nothing each "
                            "epoch (IterableDataset sharding is per shard); use more --files or fewer --workers",
                            layout.files(), world, l.num_workers, readers - layout.files()));
  else if (layout.kind() == DatasetKind::kSharded && layout.files() % readers)
    w.push_back(fmt::format("{} shards do not divide evenly over {} rank(s) x {} workers: some workers read one shard "
                            "more per epoch (in DDP, ranks with fewer batches finish early)",
                            layout.files(), world, l.num_workers));
  return w;
}

// Samples above this size are unlike any training sample (images, audio clips and records are
// kB to MB; shards are read in records, not whole): one file of this size is read whole by one
// worker, and no sample is delivered until it ends.
constexpr uint64_t kLargeSampleBytes = uint64_t{1} << 30;  // 1 GiB

// A warning before the run when a one-sample-per-file dataset holds a file above
// kLargeSampleBytes (among the files whose size is known or was sampled).
std::string large_sample_warning(const FileIndex& index, const SizeSample& sizes, const LoaderConfig& l) {
  if (sizes.largest <= kLargeSampleBytes) return {};
  return fmt::format("'{}' is {}, larger than {}: each file is one sample, read whole by one worker, so no sample is "
                     "delivered until such a file ends{}; split it or use a sharded dataset",
                     escape_bytes(index.display_path(sizes.largest_index)), format_bytes(sizes.largest),
                     format_bytes(kLargeSampleBytes),
                     l.duration_s > 0 ? fmt::format(" (--duration {} s stops the run inside the read)", l.duration_s)
                                      : "");
}

}  // namespace

int cmd_run(const CommandContext& ctx) {
  RunConfig c;
  if (!build_run_config(ctx, false, c)) return kExitOk;
  // Many hosts: every process runs this same flow; rank 0 alone prints, writes and decides.
  comm::Comm& comm = *ctx.comm;
  const bool lead = comm.rank() == 0;
  if (!lead) c.quiet = true;
  HostInfo host = probe_host();
  RunDocument doc;
  doc.header = run_header(ctx.argv, host);
  // Rank 0 alone writes the document; its refusal of the path ends every process.
  cluster::on_every_host(comm, "check --json", [&] {
    if (!c.json_path.empty() && lead) check_output_path(c.json_path, "--json", "run");
  });
  PrepareOptions prep;
  prep.processes = static_cast<uint32_t>(comm.size());  // the DistributedSampler's world: every process's ranks
  const HostsPlan prepared = prepare_run_on_hosts(comm, c, prep);
  const RunPlan& plan = prepared.plan;  // read-only from here: this run's variations are new values
  const cluster::Placement& placement = prepared.placement;
  if (plan.interrupted) {
    message(interrupted_dataset_text(c, plan.data));
    return interrupt_exit_code();
  }
  // Ctrl-C after the last file was written: the dataset is complete, so no run is started (one
  // process; across hosts the loader's own interrupt handling ends every process together).
  if (!comm.multi() && interrupted()) {
    message(fmt::format("interrupted after the dataset was prepared; '{}' is complete and will be reused; "
                        "no run was started",
                        escape_bytes(c.dir)));
    return interrupt_exit_code();
  }
  const PreparedData& data = plan.data;
  const TargetInfo& target = plan.target();
  // DistributedSampler over every GPU rank of the job: this process's ranks follow the ranks of
  // the processes before it (each runs --gpus ranks); the demand counts them all.
  const LoaderConfig l = in_job(plan.loader, static_cast<uint32_t>(comm.size()), static_cast<uint32_t>(comm.rank()));
  Demand demand = plan.demand;
  demand.gpus = l.world_ranks;
  std::vector<std::string> warnings = data.warnings;
  warnings.insert(warnings.end(), c.calibration_notes.begin(), c.calibration_notes.end());
  if (comm.multi() && host.cpus_allowed < host.cpus_online)
    warnings.push_back(fmt::format("the launcher bound each process to {} of the host's {} CPUs (OpenMPI binds to a "
                                   "core by default when it starts 2 processes or fewer): the loader's workers share "
                                   "them; start with 'mpirun --bind-to none' unless that is meant",
                                   host.cpus_allowed, host.cpus_online));
  if (static_cast<uint64_t>(l.ranks) * l.num_workers > static_cast<uint64_t>(host.cpus_allowed))
    warnings.push_back(fmt::format("{} worker threads share {} allowed CPUs: fine while workers wait on I/O, "
                                   "oversubscribed if they decode",
                                   l.ranks * l.num_workers, host.cpus_allowed));
  std::string budget_source;
  const uint64_t budget = cache_budget_bytes(host, &budget_source);
  // --data walks names only: the plan stat'ed a sample for the dataset's size and largest sample.
  const SizeSample& sizes = plan.sizes;
  const uint64_t known_bytes = sizes.total_bytes();
  std::string cache_fit;
  if (c.cache == CacheMode::kWarm && known_bytes && budget) {
    // Warm runs: say before the run whether the data can stay cached.
    const bool fits = known_bytes <= budget;
    cache_fit = fmt::format("the dataset ({}) {} the page-cache budget ({}, {})", format_bytes(known_bytes),
                            fits ? "fits in" : "does not fit in", format_bytes(budget), budget_source);
    if (!fits)
      warnings.push_back(cache_fit + ": later epochs will be read partly from the device; each epoch is labelled "
                                     "by its measured residency");
  } else if (!l.direct && known_bytes && known_bytes < budget) {
    warnings.push_back(fmt::format("buffered run and the dataset ({}) fits in the page cache budget ({}, {}): "
                                   "later epochs measure memory, not storage",
                                   format_bytes(known_bytes), format_bytes(budget), budget_source));
  }
  if (data.layout.kind() == DatasetKind::kFiles)
    if (std::string w = large_sample_warning(data.index, sizes, l); !w.empty()) warnings.push_back(w);

  const bool records = data.layout.records_in_files();
  const uint64_t samples_per_epoch = plan.samples_per_epoch;
  if (records)
    for (auto& w : records_warnings(data.layout, l)) warnings.push_back(std::move(w));
  if (!c.quiet && !cache_fit.empty()) message(fmt::format("cache: {}", cache_fit));
  if (!c.quiet)
    message(fmt::format("reading {} {}from {} ({} {}), {} {} workers", format_count(samples_per_epoch),
                        records ? fmt::format("records in {} {} files ", format_count(data.index.size()),
                                              dataset_kind_name(data.layout.kind()))
                                : "files ",
                        escape_bytes(data.target_path), target.fs_type, l.direct ? "O_DIRECT" : "buffered",
                        job_ranks_text(l, comm.size()), l.num_workers));
  // Device accounting (cli/device_accounting.hpp): an idle window now, a mark at each epoch.
  const auto devices = device_recorder(target);
  const LoaderConfig marked = with_epoch_mark(l, [d = devices.get()] { d->mark(); });
  LoaderProgress progress;
  LoaderResult lr;
  cluster::CommStepSync sync(comm, c.mpi_timeout_s, c.stonewall);
  std::string loader_error;
  {
    // "reading: N samples, X samples/s, Y MB/s" once a second on a terminal, every 10 s in a log;
    // a run bounded by time (--duration) shows its seconds, not a sample total. In a multi-host
    // job it shows this process's share (rank 0's).
    const int64_t start = now_ns();
    const uint64_t total = samples_per_epoch * l.epochs / static_cast<uint64_t>(comm.size());
    PeriodicProgress line(!c.quiet, 1, 10, [&] {
      const double s = static_cast<double>(now_ns() - start) / 1e9;
      const uint64_t n = progress.samples.load();
      const std::string done = l.duration_s > 0
                                   ? fmt::format("{} samples, {:.0f}/{:.0f} s", format_count(n), s, l.duration_s)
                                   : fmt::format("{}/{} samples", format_count(n), format_count(total));
      return fmt::format("reading: {}, {:.0f} samples/s, {}", done, n / s,
                         format_rate(static_cast<double>(progress.bytes.load()) / s));
    });
    if (comm.multi())
      loader_error = cluster::outcome_of(
          [&] { lr = run_loader(data.index, marked, &progress, &plan.topo, &data.layout, &sync); });
    else lr = run_loader(data.index, marked, &progress, &plan.topo, &data.layout);
  }
  const LoaderResult mine = lr;
  const DeviceIo dev_io = devices->whole();
  const std::vector<DeviceIo> dev_epochs = devices->intervals();

  const CacheBudgetFit fit{.bytes = budget, .source = budget_source, .dataset_bytes = known_bytes};
  set_run_target(doc, plan, l, mine, cache_fit.empty() ? nullptr : &fit);

  int cluster_cpus = host.cpus_allowed;
  cluster::ClusterRun cr;
  if (comm.multi()) {
    cluster::ProcessPart part;
    part.rank = comm.rank();
    part.host_index = comm.host_index();
    part.hostname = comm.hostname();
    part.gpu_ranks = l.ranks;
    part.first_rank = l.first_rank;
    part.start_skew_s = sync.start_skew_s();
    part.step_exchanges = sync.rounds();
    part.exchange_s = sync.exchange_s();
    part.init_s = comm.init_s();
    part.setup_s = sync.started_ns() > 0 ? static_cast<double>(sync.started_ns() - comm.ready_ns()) / 1e9 : 0;
    part.finish_wait_s = sync.finish_wait_s();
    part.cpus_allowed = host.cpus_allowed;
    part.memory_bytes = host.memory_bytes;
    part.cgroup_memory_limit_bytes = host.cgroup_memory_limit_bytes;
    part.target = target_section_json(doc.target);
    part.result = mine;
    part.device_io = dev_io;
    part.device_io_epochs = dev_epochs;
    ctx.job_outcome_shared = true;  // from here on every process learns the outcome
    cr = gather_run(comm, loader_error, lr, part, placement, doc);
    if (!lead) return share_exit_code(comm, 0);
    cluster_cpus = cr.cpus_allowed;
  }

  AnalysisInputs ai;
  ai.cpus_allowed = cluster_cpus;
  ai.num_workers_total = std::max(l.world_ranks, l.ranks) * l.num_workers;
  ai.cpu_per_sample_us = l.costs.worker.loop_us;
  ai.main_cpu_per_batch_us = l.costs.main_cpu_per_batch_us;
  ai.batch_size = l.batch_size;
  ai.sample_bytes = c.sample_bytes > 0 ? c.sample_bytes : (lr.samples ? static_cast<double>(lr.bytes) / lr.samples : 0);
  // Nothing was read (every file failed): the demand in bytes/s still uses the dataset's mean
  // sample size, from the sizes it holds, rather than 0 B/sample.
  if (ai.sample_bytes == 0) ai.sample_bytes = plan.dataset_sample_bytes;
  ai.buffered_warm = !l.direct && !l.evict_before_epoch;
  ai.gpu_links = gpu_link_ceilings(plan.topo, l.ranks);
  IngestResult ing = analyze_ingest(lr, demand, ai);

  set_run_dataset(doc, plan, lr, known_bytes);
  doc.loader = run_loader_section(l, lr.ranks.empty() ? 0 : lr.ranks.front().max_outstanding,
                                  read_pattern(data.layout, l), data.layout.kind() == DatasetKind::kSharded,
                                  c.calibration_path, c.calibration);
  doc.results.loader = lr;
  doc.ingest = run_ingest_section(ing, ai.sample_bytes);
  if (!c.calibration_path.empty()) doc.ingest.calibration_effect = calibration_effect(l);
  doc.partial = lr.partial;
  add_run_device_io(doc, lr, dev_io, dev_epochs, l.direct || l.evict_before_epoch, target,
                    comm.multi() ? &cr : nullptr);
  doc.warnings.insert(doc.warnings.end(), warnings.begin(), warnings.end());
  doc.warnings.insert(doc.warnings.end(), lr.cache_notes.begin(), lr.cache_notes.end());
  for (auto& w : measurement_warnings(lr, ing, l)) doc.warnings.push_back(std::move(w));
  // A storage verdict on a dataset of few batches per rank: the epoch boundaries may be the cause.
  if (ing.verdict == "storage")
    if (std::string w = few_batches_warning(batches_per_rank_epoch(samples_per_epoch, l.world_ranks, l.batch_size,
                                                                   l.drop_last),
                                            l.world_ranks, l.batch_size, "the storage verdict");
        !w.empty())
      doc.warnings.push_back(w);
  if (lr.errors)
    doc.warnings.push_back(
        fmt::format("{}: see results.error_details (exit code 1)", failed_reads_text(lr.errors, lr.error_spread())));

  std::cout << render_run_text(doc) << std::flush;
  if (!c.json_path.empty()) {
    write_run_document(c.json_path, doc);
    message(fmt::format("wrote {}", escape_bytes(c.json_path)));
  }
  int rc = lr.errors > 0 ? kExitFailure : kExitOk;  // the report names the files that failed
  if (lr.partial) {
    // A multi-host run stopped by another host's signal is partial here too (exit 130).
    rc = interrupt_exit_code() ? interrupt_exit_code() : static_cast<int>(kExitSigint);
  } else if (lr.samples == 0) {  // nothing measured: never a success, errors or not
    message(lr.stop.kind == LoaderStopKind::kDuration
                ? fmt::format("no batch completed within the --duration of {:.2f} s; rerun with a longer --duration; "
                              "exit 1",
                              static_cast<double>(lr.elapsed_ns) / 1e9)
                : fmt::format("no sample was read ({}); exit 1", to_string(lr.stop)));
    rc = kExitFailure;
  }
  return share_exit_code(comm, rc);
}

int cmd_gen(const CommandContext& ctx) {
  RunConfig c;
  if (!build_run_config(ctx, true, c)) return kExitOk;
  comm::Comm& comm = *ctx.comm;
  if (comm.rank() != 0) c.quiet = true;
  PreparedData data;
  const cluster::Placement placement = prepare_dataset_on_hosts(comm, c, data);
  ctx.job_outcome_shared = true;
  if (comm.rank() != 0) return kExitOk;
  if (data.interrupted) {
    message(interrupted_dataset_text(c, data));
    return interrupt_exit_code();
  }
  fmt::print("{}{}\n", render_gen_line(data.dataset, data.index.size(), data.index.total_known_bytes()),
             comm.multi() ? fmt::format("; {} on {} host(s): {}", placement.kind, comm.host_count(), placement.how)
                          : "");
  fmt::print("{}", render_gen_hosts_text(data.dataset));
  return kExitOk;
}

}  // namespace ioprobe::cli
