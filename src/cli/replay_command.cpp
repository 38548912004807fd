// `ioprobe replay TRACE (--dir DIR | --map OLD=NEW ...)`: replays a recorded trace on this
// storage (replay/), one thread per recorded thread, and reports against the recording.
// Under mpirun each process replays its recorded rank, or clones one (replay_plan.hpp
// rank_to_replay); rank 0 gathers the typed results and merges them with ReplayResult::merge.
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/device_accounting.hpp"
#include "cli/run_cluster.hpp"
#include "cluster/collective.hpp"
#include "core/atomic_file.hpp"
#include "core/dir_lock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/message.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/engine_choice.hpp"
#include "engine/page_cache.hpp"
#include "replay/file_layout.hpp"
#include "replay/replay_plan.hpp"
#include "replay/replay_run.hpp"
#include "report/replay_report.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"
#include "trace/trace_format.hpp"

namespace ioprobe::cli {

namespace {

// Watchdog of the start barrier and the gather (s); a replay as long as its recording is not
// bounded, so the gather waits without one.
constexpr double kReplayBarrierTimeoutS = 300;

po::options_description replay_options() {
  po::options_description d("ioprobe replay options");
  auto str = [] { return po::value<std::string>(); };
  // clang-format off
  d.add_options()
      ("help,h", "show this help")
      ("trace", str(), "the trace file (ioprobe record --out, or an import); also the first word")
      ("dir", str(), "lay out the recorded files that are missing under DIR (DIR + the recorded path, replay's own "
                     "files listed in DIR/.ioprobe-replay-layout; a file of another size that replay did not create is "
                     "refused, never written)")
      ("map", po::value<std::vector<std::string>>(), "OLD_PREFIX=NEW_PREFIX: read the recorded files under OLD_PREFIX "
                     "from NEW_PREFIX, which must exist (repeatable; the longest matching prefix wins)")
      ("cache", str(), "cold | warm (default cold: the files' pages are evicted before the replay, reads through the "
                       "page cache as the job's were; warm keeps what is cached)")
      ("direct", str()->implicit_value("1"), "1: O_DIRECT reads (aligned spans through a bounce buffer) (default 0)")
      ("engine", str(), "auto | io_uring | psync (default auto: the engine chooser's pick for the target, as run)")
      ("gaps", str(), "recorded | sleep | burn: the recorded time between a thread's calls replayed as its recorded "
                      "thread CPU burned and the rest slept (default recorded), all slept, or all burned")
      ("as-fast-as-possible", str()->implicit_value("1"), "drop every gap: the storage ceiling of this access "
                      "pattern")
      ("json", str(), "also write the result document to this file (atomically)")
      ("quiet", str()->implicit_value("true"), "no progress line");
  // clang-format on
  return d;
}

// Options that take a value, so that the trace can be given as the first free word.
const std::set<std::string> kValued = {"--trace", "--dir", "--map", "--cache", "--engine", "--gaps", "--json"};

std::vector<std::string> take_trace_word(const std::vector<std::string>& args, std::string* trace) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (kValued.count(a) && i + 1 < args.size()) {
      rest.push_back(a);
      rest.push_back(args[++i]);
    } else if (trace->empty() && !a.empty() && a[0] != '-') {
      *trace = a;
    } else {
      rest.push_back(a);
    }
  }
  return rest;
}

replay::GapMode gap_mode(const po::variables_map& vm) {
  const std::string g = get_choice(vm, "gaps", "recorded", {"recorded", "sleep", "burn"});
  if (get_bool(vm, "as-fast-as-possible", false)) {
    if (has(vm, "gaps"))
      throw UsageError(fmt::format("--as-fast-as-possible drops every gap; --gaps {} contradicts it: give one", g));
    return replay::GapMode::none;
  }
  return g == "sleep" ? replay::GapMode::sleep : g == "burn" ? replay::GapMode::burn : replay::GapMode::recorded;
}

}  // namespace

int cmd_replay(const CommandContext& ctx) {
  std::string trace_path;
  const std::vector<std::string> rest = take_trace_word(ctx.args, &trace_path);
  po::options_description desc = replay_options();
  po::variables_map vm = parse_command_line(rest, desc, "replay");
  if (vm.count("help")) {
    std::printf("usage: ioprobe replay TRACE (--dir DIR | --map OLD_PREFIX=NEW_PREFIX ...) [OPTIONS]\n\n"
                "Replays a recorded job's I/O on this storage: each recorded thread as a thread here, the same files, "
                "offsets, sizes and order, the recorded gaps as compute; reports elapsed, stalls, latency and the AU "
                "of the training loop against the recording.\n\n");
    std::cout << desc << "\n";
    std::printf("examples:\n"
                "  ioprobe record --out job.trace -- python train.py\n"
                "  ioprobe replay job.trace --dir /mnt/nvme/replay --json replay.json\n"
                "  ioprobe replay job.trace --map /data/train=/mnt/array/train --cache cold\n"
                "  mpirun -np 8 --hostfile H ioprobe replay job.trace --dir /mnt/pfs/replay   (rank K replays "
                "recorded rank K, or clones rank K mod recorded under DIR/rank-K)\n"
                "Exit codes: 0 ok, 1 replay failed (ops failed here), 2 bad usage or input, 130/143 interrupted "
                "(partial result printed and written)\n");
    return kExitOk;
  }
  if (has(vm, "trace")) {
    if (!trace_path.empty())
      throw UsageError(fmt::format("replay: the trace is given twice ('{}' and --trace {}); give one",
                                   escape_bytes(trace_path), escape_bytes(get_string(vm, "trace"))));
    trace_path = get_string(vm, "trace");
  }
  if (trace_path.empty()) throw UsageError("replay: give the trace file (ioprobe replay TRACE --dir DIR); see --help");
  replay::LayoutOptions lopts;
  if (vm.count("map"))
    for (const auto& m : vm["map"].as<std::vector<std::string>>()) lopts.maps.push_back(replay::parse_map_rule(m));
  lopts.dir = get_string(vm, "dir");
  if (has(vm, "dir") && lopts.dir.empty()) throw UsageError("--dir: empty path; give a directory");
  if (lopts.dir.empty() && lopts.maps.empty())
    throw UsageError("replay: give --dir DIR (replay lays out the recorded files there) or --map OLD=NEW onto "
                     "existing files; see --help");
  const bool warm = get_choice(vm, "cache", "cold", {"cold", "warm"}) == "warm";
  replay::RunOptions ropts;
  ropts.direct = get_bool(vm, "direct", false);
  if (warm && ropts.direct)
    throw UsageError("--cache warm reads through the page cache; --direct 1 contradicts it (use --cache cold)");
  ropts.gaps = gap_mode(vm);
  ropts.progress = !get_bool(vm, "quiet", false);
  const EngineSelection engine_req = engine_selection_from_string(
                                         get_choice(vm, "engine", "auto", {"auto", "io_uring", "psync"}))
                                         .value_or(EngineSelection::kAuto);
  const std::string json_path = get_string(vm, "json");

  comm::Comm& comm = *ctx.comm;
  const bool multi = comm.multi();
  ropts.replay_rank = comm.rank();
  HostInfo host = probe_host();
  trace::Trace trace;
  replay::ReplayPlan plan;
  replay::LayoutPlan layout;
  TargetInfo target;
  EngineChoice choice;
  bool clone = false;
  int32_t recorded_rank = 0;
  std::vector<std::string> warnings;
  cluster::on_every_host(comm, "read the trace", [&] {
    if (!json_path.empty() && comm.rank() == 0) check_output_path(json_path, "--json", "replay");
    replay::check_trace_file(trace_path);
    if (!lopts.dir.empty()) replay::check_layout_dir(lopts.dir);
    trace = trace::read_trace(trace_path);
    recorded_rank = replay::rank_to_replay(trace, comm.rank(), &clone);
    if (clone) lopts.clone_subdir = fmt::format("rank-{}", comm.rank());
    plan = replay::build_replay_plan(trace, recorded_rank);
  });
  // One process at a time lays out its files: processes sharing a --dir (a host's ranks, or a
  // shared filesystem) then reuse what an earlier one created instead of racing to create it.
  for (int turn = 0; turn < comm.size(); ++turn) {
    cluster::on_every_host(comm, "lay out the replay's files", [&] {
      if (turn != comm.rank()) return;
      // Another replay (or gen, checkpoint) laying out in the same --dir goes first; this one waits.
      std::unique_ptr<DirLock> lock;
      if (!lopts.dir.empty())
        lock = replay::lock_layout_dir(lopts.dir, [&](const std::string& holder) {
          message(fmt::format("--dir '{}' is in use by {}; waiting for it to finish there (Ctrl-C to stop)",
                              escape_bytes(lopts.dir), holder));
        });
      std::vector<size_t> streams;
      for (const auto& sp : plan.streams) streams.push_back(sp.trace_stream);
      layout = replay::plan_layout(trace, replay::files_used(trace, streams), lopts,
                                   replay::files_stat_only(trace, streams));
      if (!lopts.dir.empty()) replay::check_layout_space(layout, lopts.dir);
      if (layout.create_bytes && ropts.progress)
        message(fmt::format("laying out {} file(s), {}, under {}", layout.created, format_bytes(layout.create_bytes),
                            escape_bytes(lopts.dir)));
      replay::lay_out(layout);
    });
  }
  cluster::on_every_host(comm, "choose the engine", [&] {
    std::string probe_path = lopts.dir;
    for (const auto& f : layout.files)
      if (f.action == replay::FileAction::mapped) {
        probe_path = parent_directory(f.path);
        break;
      }
    target = probe_target(probe_path.empty() ? "." : probe_path);
    choice = choose_engine(engine_req, target, !ropts.direct);
    ropts.engine = choice.engine;
    if (!choice.warning.empty()) warnings.push_back(choice.warning);
    // Cold: every file's pages evicted first (fdatasync + POSIX_FADV_DONTNEED), as run's buffered cold mode.
    if (!warm && !ropts.direct)
      for (const auto& f : layout.files)
        if (f.action != replay::FileAction::none) evict_file(f.path);
  });
  if (target.memory_backed)
    warnings.emplace_back("memory-backed target (tmpfs/ramfs): the reads are memory copies, not device reads");
  if (!warm && !ropts.direct && !target.memory_backed) {
    std::vector<std::string> paths;
    for (const auto& f : layout.files)
      if (f.action != replay::FileAction::none) paths.push_back(f.path);
    const DatasetResidency res = measure_residency(paths, 256);
    if (res.residency.fraction() > kDeviceResidency)
      warnings.push_back(fmt::format("{:.0f}% of the files stayed in the page cache after eviction: part of the reads "
                                     "come from memory",
                                     res.residency.fraction() * 100));
  }
  for (const auto& w : layout.warnings) warnings.push_back(w);
  if (!trace.partial.empty())
    warnings.push_back(fmt::format("the trace is partial ({}): the recording ended before the job did, so the replay "
                                   "plays only what was recorded, and its ratios describe that part of the job",
                                   trace.partial));
  if (const size_t ranks = replay::recorded_ranks(trace).size(); ranks > static_cast<size_t>(comm.size()))
    warnings.push_back(fmt::format("the trace holds {} recorded ranks and this replay runs {} process(es): ranks "
                                   "without a process are not replayed; run it under mpirun -np {} (or srun) to "
                                   "replay them all",
                                   ranks, comm.size(), ranks));
  if (plan.gaps_without_cpu && ropts.gaps == replay::GapMode::recorded)
    warnings.push_back(fmt::format("{} of {} gaps have no recorded thread CPU ({}): slept, not burned",
                                   format_count(plan.gaps_without_cpu), format_count(plan.gaps), trace.source));

  // This host's devices over the replay (one process only: across hosts each host's share would
  // need counting once per host; the report says it was not measured there).
  const auto devices = multi ? nullptr : device_recorder(target);
  comm.barrier("start of the replay", kReplayBarrierTimeoutS);
  if (devices) devices->mark();
  replay::ReplayResult result = replay::run_replay(trace, plan, layout, ropts);
  if (devices) devices->mark();
  if (multi) {
    ctx.job_outcome_shared = true;
    const std::vector<std::string> parts = comm.gather(encode_replay_part(result), "gather the replay results", 0);
    if (comm.rank() != 0) return share_exit_code(comm, 0);
    replay::ReplayResult merged = decode_replay_part(parts.at(0), "rank 0");
    for (size_t i = 1; i < parts.size(); ++i) merged.merge(decode_replay_part(parts[i], fmt::format("rank {}", i)));
    result = std::move(merged);
  }

  ReplayDocument doc;
  set_replay_header(doc, ctx.argv, host, target);
  doc.trace.path = trace_path;
  doc.trace.source = trace.source;
  doc.trace.host = trace.host;
  doc.trace.command = trace.command;
  doc.trace.anonymized = trace.anonymized;
  doc.trace.duration_ns = trace.duration_ns;
  doc.trace.limits = trace.limits;
  doc.trace.streams = trace.streams.size();
  doc.trace.ops = trace.op_count();
  doc.trace.read_bytes = trace.read_bytes();
  doc.trace.mapped_bytes = trace.mapped.mapped_bytes;
  doc.trace.mapped_sampled = trace.mapped.sampled;
  doc.trace.ranks = replay::recorded_ranks(trace);
  ReplaySettings& s = doc.settings;
  s.gaps = replay::gap_mode_name(ropts.gaps);
  s.as_fast_as_possible = ropts.gaps == replay::GapMode::none;
  s.cache = warm ? "warm" : "cold";
  s.direct = ropts.direct;
  s.engine = choice.engine;
  s.engine_reason = choice.reason;
  if (vm.count("map")) s.maps = vm["map"].as<std::vector<std::string>>();
  s.dir = lopts.dir;
  s.files_mapped = layout.mapped;
  s.files_reused = layout.reused;
  s.files_created = layout.created;
  s.bytes_laid_out = layout.create_bytes;
  s.gaps_total = plan.gaps;
  s.gaps_without_cpu = plan.gaps_without_cpu;
  const size_t recorded_count = doc.trace.ranks.size();
  s.rank_rule = multi ? fmt::format("{} processes replayed {} recorded rank(s): process K the recorded rank K, or "
                                    "rank K mod {} cloned onto its own files under DIR/rank-K (--map: the same files)",
                                    comm.size(), recorded_count, recorded_count)
                      : fmt::format("recorded rank {} of {}", recorded_rank, recorded_count);
  doc.result = std::move(result);
  if (devices) {
    doc.device_io = devices->whole();
    for (const auto& w : device_read_warnings(doc.device_io, doc.result.bytes, !warm, target, "the replay"))
      warnings.push_back(w);
  } else {
    doc.device_io.reason = "not measured across hosts (each host's devices would need counting once)";
  }
  doc.warnings = warnings;
  std::fputs(render_replay_text(doc).c_str(), stdout);
  if (!json_path.empty()) {
    write_replay_document(json_path, doc);
    std::printf("  result      %s\n", escape_bytes(json_path).c_str());
  }
  int rc = kExitOk;
  if (interrupted() || doc.result.partial)
    rc = interrupt_exit_code() ? interrupt_exit_code() : static_cast<int>(kExitSigint);
  else if (doc.result.errors) rc = kExitFailure;
  return multi ? share_exit_code(comm, rc) : rc;
}

}  // namespace ioprobe::cli
