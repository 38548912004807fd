// `ioprobe checkpoint`: how fast model state is saved to a target and restored from it.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include <boost/scope_exit.hpp>

#include <fmt/format.h>

#include "checkpoint/chunker.hpp"
#include "checkpoint/compressor.hpp"
#include "checkpoint/piece_pool.hpp"
#include "checkpoint/raw_baseline.hpp"
#include "checkpoint/restorer.hpp"
#include "checkpoint/run_data.hpp"
#include "checkpoint/save_series.hpp"
#include "checkpoint/saver.hpp"
#include "checkpoint/shard_format.hpp"
#include "checkpoint/tensor_data.hpp"
#include "cli/checkpoint_cluster.hpp"
#include "cli/device_accounting.hpp"
#include "cli/checkpoint_content.hpp"
#include "cli/checkpoint_preflight.hpp"
#include "cli/commands.hpp"
#include "core/clock.hpp"
#include "core/atomic_file.hpp"
#include "core/dir_lock.hpp"
#include "core/error.hpp"
#include "core/free_space.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "core/threads.hpp"
#include "core/units.hpp"
#include "report/checkpoint_report.hpp"
#include "report/checkpoint_series.hpp"
#include "report/document.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

using namespace checkpoint;

namespace {

po::options_description checkpoint_options() {
  po::options_description d("ioprobe checkpoint options");
  auto s = [] { return po::value<std::string>(); };
  d.add_options()
    ("help,h", "show this help")
    ("dir", s(), "target directory (default ./ioprobe-ckpt, created if missing); shards are __RANK_0.distcp")
    ("model", s(), "preset: llama3-8b, llama3-70b, llama3-405b, llama3-1t (workloads/NAME.ini) or an .ini path")
    ("params", s(), "model parameters, e.g. 7B, 70e9 (14 B/param: bf16 weights + fp32 master + Adam m, v)")
    ("size", s(), "total state of this host instead, e.g. 10GiB (default 1GiB: finishes in seconds)")
    ("ranks", s(), "writers on this host, one shard file each, in parallel (default 1; presets: 8)")
    ("tp", s(), "tensor parallel size (with --params/--model; default 1)")
    ("pp", s(), "pipeline parallel size (with --params/--model; default 1)")
    ("dp", s(), "data parallel size (with --params/--model; default: --ranks / (tp x pp))")
    ("zero-stage", s(), "ZeRO stage 0-3 (default 3): 3 shards weights over DP, 1-2 write them on DP rank 0 only")
    ("chunk-size", s(), "logical bytes per chunk = checksum unit (and zstd frame with --compress-pool zstd), any size (default 1GiB)")
    ("compress", s(), "none | zstd:LEVEL (default none)")
    ("compress-threads", s(), "compression workers per rank (default: allowed CPUs / ranks, at least 1); 0 = compress in the rank's own thread")
    ("compress-pool", s(), "ioprobe | zstd: ioprobe's own threads, one zstd context each, one frame per 4MiB piece "
                           "(default; keeps workers busy on any chunk size), or zstd's own multithreading "
                           "(ZSTD_c_nbWorkers) on one frame per chunk")
    ("zstd-job-size", s(), "--compress-pool zstd: zstd's job size (default 0 = zstd's own: 2MiB at level 1, 8MiB at 3)")
    ("byte-group", po::value<std::string>()->implicit_value("true"), "group float bytes by significance before compressing")
    ("io-size", s(), "bytes per write request, and per read of --restore (default 16MiB, multiple of 4KiB)")
    ("io-depth", s(), "write buffers in flight per rank (default 2 = double buffering)")
    ("flush-every", s(), "queue a background fdatasync after every SIZE written while writing goes on, so a device's "
                         "write cache drains during the save (default 64MiB, or --io-size when larger; 0 = only the final fsync; the raw "
                         "baseline uses the same)")
    ("direct", s(), "true|false: O_DIRECT (default true; falls back to buffered, labelled, where refused)")
    ("huge-pages", s(), "true|false: state, staging and I/O buffers on transparent huge pages, so O_DIRECT requests "
                        "are not split at the device's segment limit (default true; false = scattered 4 KiB pages "
                        "for the save; the raw baseline keeps huge pages)")
    ("fsync", s(), "true|false (default true); without it the result is labelled not durable")
    ("async", po::value<std::string>()->implicit_value("true"), "stage into host buffers, then persist while training steps run")
    ("step-time", s(), "emulated training step for --async (default 100ms)")
    ("restore", po::value<std::string>()->implicit_value("true"), "read back cold, decompress, verify every chunk")
    ("restore-threads", s(), "with --restore: decompression workers per rank (default: allowed CPUs / ranks, at least "
                             "1; 0 = the rank's own thread); shards written before ioprobe's format version 3 "
                             "decode on the rank's thread")
    ("repeat", s(), "save N times into --dir, each save published, then removed before the next (default 1)")
    ("duration", s(), "keep saving until this long has passed, e.g. 10m (a save in progress finishes; with "
                      "--repeat: whichever ends first)")
    ("quiet", po::value<std::string>()->implicit_value("true"), "no progress lines on stderr (warnings stay)")
    ("raw-baseline", s(), "on|off (or true|false): measure raw sequential write of the same target in this run (default on)")
    ("keep", po::value<std::string>()->implicit_value("true"), "keep the published shard files (default: remove them)")
    ("data", s(), "what the state holds: tensors (bf16/fp32 training state, default) | text (text-like, "
                  "compressible) | random (incompressible); text and random are for compression tests")
    ("seed", s(), "data generator seed (default 1)")
    ("json", s(), "also write the result document (JSON) to FILE")
    ("plan", po::value<std::string>()->implicit_value("true"), "print the per-rank state sizes and exit without writing");
  return d;
}

int checkpoint_body(const CommandContext& ctx, CheckpointJob& job) {
  const int64_t t_start = now_ns();
  auto desc = checkpoint_options();
  po::variables_map vm = parse_command_line(ctx.args, desc, "checkpoint");
  if (vm.count("help")) {
    if (job.lead()) std::cout << "usage: ioprobe checkpoint [OPTIONS]\n\n"
                 "Saves emulated training state (one shard file per rank, as PyTorch DCP writes it) to --dir with\n"
                 "io_uring, O_DIRECT, double buffering, fsync and atomic rename; measures the raw sequential write\n"
                 "bandwidth of the same directory in the same run and prints checkpoint/raw. The default, 1GiB of\n"
                 "state, finishes in a few seconds on a 1 GB/s disk.\n\n"
              << desc
              << "\nexamples:\n"
                 "  ioprobe checkpoint --dir /mnt/nvme/ckpt --size 1GiB --compress zstd:1 --restore\n"
                 "  ioprobe checkpoint --dir /mnt/nvme/ckpt --model llama3-8b --ranks 2   (2 of 8 ranks: 26 GB)\n"
                 "  ioprobe checkpoint --dir /mnt/nvme/ckpt --size 4GiB --async --step-time 200ms\n"
                 "  ioprobe checkpoint --dir /dev/shm/ck --size 256MiB --duration 10m --restore --quiet   (soak)\n"
                 "repeated saves (--repeat, --duration) print one line per save on stderr and a summary:\n"
                 "  count and min / median / max MB/s; Ctrl-C ends the series with the saves completed so far.\n"
                 "across hosts: mpirun -np N --hostfile H ioprobe checkpoint --dir D --ranks R (R shards per process)\n"
                 "exit codes: 0 ok (also when the raw comparison could not run: the report says why),\n"
                 "  1 save/restore failed (ENOSPC, EIO, checksum) or too little free space for the checkpoint,\n"
                 "  2 bad usage (including an unwritable --json path), 130/143 interrupted\n";
    return kExitOk;
  }
  if (has(vm, "model")) {
    // A preset's parameter count is what names it: --params would keep the name and change the model.
    if (vm.count("params"))
      throw UsageError(fmt::format("--params {} and --model {} both give the parameter count; drop --params to use the "
                                   "preset, or --model to size the state by --params",
                                   get_string(vm, "params"), get_string(vm, "model")));
    load_ini(find_workload_file(get_string(vm, "model"), "checkpoint"), desc, vm);
  }
  if (vm.count("size") && vm.count("params"))
    throw UsageError("--size and --params (or --model) both given; choose one way to size the state");

  const HostInfo host = probe_host();
  CheckpointRunData d;
  const int ranks = static_cast<int>(get_count(vm, "ranks", 1, 1, 4096));
  const int job_ranks = job.number_ranks(ranks, vm.count("params") ? 0 : get_size(vm, "size", 1ull << 30, 1, 1ull << 50));
  if (vm.count("params")) {
    int tp = static_cast<int>(get_count(vm, "tp", 1, 1, 65536)), pp = static_cast<int>(get_count(vm, "pp", 1, 1, 65536));
    const int64_t tp_pp = int64_t{tp} * pp;
    if (!vm.count("dp") && tp_pp <= job_ranks && job_ranks % tp_pp != 0)
      throw UsageError(fmt::format("--ranks {} is not a multiple of tp {} x pp {} = {}, so the data parallel size is not "
                                   "whole; give --dp, or --ranks a multiple of {}", job_ranks, tp, pp, tp_pp, tp_pp));
    int dp = static_cast<int>(get_count(vm, "dp", std::max<int64_t>(1, job_ranks / tp_pp), 1, 1 << 20));
    const double params = checked_value(vm, "params", [&] { return parse_params(get_string(vm, "params")); });
    d.state = state_from_params(params, tp, pp, dp,
                                static_cast<int>(get_count(vm, "zero-stage", 3, 0, 3)), job.first_rank() + ranks);
    if (has(vm, "model")) d.state.source = get_string(vm, "model");
  } else {
    for (const char* o : {"tp", "pp", "dp", "zero-stage"})
      if (vm.count(o))
        throw UsageError(fmt::format("--{} shapes a model's state (--params or --model); with --size the state is split "
                                     "evenly over --ranks: drop --{} or give --params",
                                     o, o));
    d.state = state_from_size(get_size(vm, "size", 1ull << 30, 1, 1ull << 50), ranks);
  }
  job.own_ranks(d.state);
  if (get_bool(vm, "plan", false)) {
    if (!job.lead()) return kExitOk;
    std::printf("state: %s; world %d (tp %d x pp %d x dp %d, ZeRO-%d) = %s in all; this host: %zu rank(s), %s\n",
                d.state.source.c_str(), d.state.world, d.state.tp, d.state.pp, d.state.dp, d.state.zero_stage,
                format_bytes(d.state.world_bytes).c_str(), d.state.ranks.size(), format_bytes(d.state.host_bytes).c_str());
    for (const auto& r : d.state.ranks) {
      std::printf("  rank %d: %s =", r.rank, format_bytes(r.bytes).c_str());
      for (const auto& g : r.regions) std::printf(" %s %s;", tensor_kind_name(g.kind), format_bytes(g.bytes).c_str());
      std::printf("\n");
    }
    return kExitOk;
  }
  SaveOptions& o = d.opts;
  o.chunk_bytes = get_size(vm, "chunk-size", 1ull << 30, 1, 1ull << 40);
  o.compress = checked_value(vm, "compress", [&] { return parse_compression(get_string(vm, "compress", "none")); });
  o.compress_threads = static_cast<int>(get_count(vm, "compress-threads", std::max(1, host.cpus_allowed / ranks), 0, 256));
  o.compress_pool = get_choice(vm, "compress-pool", "ioprobe", {"ioprobe", "zstd"}) == "zstd" ? CompressPool::kZstd
                                                                                               : CompressPool::kIoprobe;
  o.byte_group = get_bool(vm, "byte-group", false);
  if (!o.compress.enabled && vm.count("compress-pool"))
    throw UsageError("--compress-pool chooses who compresses; with --compress none nothing is: drop it or give --compress zstd:1");

  if (!o.compress.enabled && vm.count("compress-threads"))
    throw UsageError("--compress-threads sets compression workers; with --compress none there are none: drop it or give --compress zstd:1");
  if (o.compress_pool != CompressPool::kZstd && vm.count("zstd-job-size"))
    throw UsageError("--zstd-job-size sets the job size of zstd's own pool: only with --compress-pool zstd");
  o.zstd_job_bytes = get_size(vm, "zstd-job-size", 0, 0, 1u << 30);
  o.fsync = get_bool(vm, "fsync", true);
  o.io.io_size = get_size(vm, "io-size", 16u << 20, 4096, 1u << 30);
  if (o.io.io_size % 4096) throw UsageError(fmt::format("--io-size: {} B is not a multiple of 4096", o.io.io_size));
  o.io.depth = static_cast<unsigned>(get_count(vm, "io-depth", 2, 1, 64));
  o.io.direct = get_bool(vm, "direct", true);
  // Default: every 64 MiB, or every request when requests are larger.
  o.io.flush_bytes = get_size(vm, "flush-every", std::max<uint64_t>(64ull << 20, o.io.io_size), 0, 1ull << 50);
  if (o.io.flush_bytes > 0 && o.io.flush_bytes < o.io.io_size)
    throw UsageError(fmt::format("--flush-every {}: below --io-size {}; a flush is queued after whole write requests "
                                 "complete, so give 0 (only the final fsync) or at least {}",
                                 format_bytes(o.io.flush_bytes), format_bytes(o.io.io_size), format_bytes(o.io.io_size)));
  if (!o.fsync) {
    if (vm.count("flush-every") && o.io.flush_bytes > 0)
      throw UsageError("--flush-every flushes toward durability, which --fsync false turns off; drop one of them");
    o.io.flush_bytes = 0;
  }
  o.io.huge_pages = get_bool(vm, "huge-pages", true);
  d.async = get_bool(vm, "async", false);
  d.step_time_s = get_duration(vm, "step-time", 0.1);
  if (vm.count("step-time") && !d.async) throw UsageError("--step-time: only with --async (the training steps run while the save persists)");
  if (d.async && !(d.step_time_s >= 1e-3))
    throw UsageError(fmt::format("--step-time: {} s is below 1 ms; give a training step such as 100ms", d.step_time_s));
  const bool restore = get_bool(vm, "restore", false);
  if (vm.count("restore-threads") && !restore) throw UsageError("--restore-threads: only with --restore (it sets the restore's decompression workers)");
  if (vm.count("restore-threads") && !o.compress.enabled)
    throw UsageError("--restore-threads sets decompression workers; with --compress none there is nothing to decompress: drop it");
  d.restore_threads = static_cast<int>(get_count(vm, "restore-threads", std::max(1, host.cpus_allowed / ranks), 0, 256));
  const bool raw_on = get_bool(vm, "raw-baseline", true);  // on|off, or true|false as the other switches
  const bool keep = get_bool(vm, "keep", false);
  const bool quiet = get_bool(vm, "quiet", false);
  const uint64_t repeat_opt = get_count(vm, "repeat", 1, 1, 1000000000);
  const double duration_s = get_duration(vm, "duration", 0);
  if (vm.count("duration") && duration_s <= 0) throw UsageError("--duration: must be greater than 0, e.g. 10m");
  const bool series_mode = vm.count("repeat") || vm.count("duration");
  // --duration alone: no count limit; --repeat alone: no time limit; both: the first reached.
  const uint64_t repeat = vm.count("repeat") ? repeat_opt : vm.count("duration") ? 0 : 1;
  job.check_options(series_mode, d.async);
  auto progress = [&](const std::string& line) {
    if (!quiet && job.lead()) std::fprintf(stderr, "ioprobe: %s\n", line.c_str());
  };
  const uint64_t seed = get_count(vm, "seed", 1, 0, UINT64_MAX);
  const std::string content_name = get_choice(vm, "data", "tensors", {"tensors", "text", "random"});
  const StateContent content = content_name == "text" ? StateContent::text
                               : content_name == "random" ? StateContent::random : StateContent::tensors;
  const std::string json_path = job.lead() ? get_string(vm, "json") : "";  // rank 0 writes the document
  if (vm.count("json") && job.lead()) {
    // Checked before any measurement (exit 2; the path itself below, once --dir exists), so a
    // finished measurement is never lost to a bad path.
    if (json_path.empty()) throw UsageError("--json: empty path; give a file name");
  }
  d.dir = get_string(vm, "dir", "./ioprobe-ckpt");
  d.cpus_allowed = std::max(1, host.cpus_allowed);

  // Target directory: created if missing (and removed again if we created it and leave it empty).
  std::error_code ec;
  bool created_dir = false;
  // The directories this run creates, deepest first: removed again (when empty) at the end.
  std::vector<std::string> made_dirs;
  // One run per --dir at a time: a second would measure against this one's I/O (issue #16 item 6).
  std::optional<DirLock> dir_lock;
  auto remove_made_dirs = [&] {
    dir_lock.reset();  // its lock file would keep the directory from being empty
    for (const auto& m : made_dirs)
      if (::rmdir(m.c_str()) != 0) break;  // only empty ones go; a parent of a kept one stays
  };
  // Also when an exception leaves this function (out of memory in a worker, an internal error):
  // the directories this run made go if they are empty. Calling it again is harmless.
  BOOST_SCOPE_EXIT(&remove_made_dirs, &created_dir) {
    if (created_dir) remove_made_dirs();
  }
  BOOST_SCOPE_EXIT_END
  if (!std::filesystem::exists(d.dir, ec)) {
    for (std::filesystem::path p = std::filesystem::absolute(d.dir, ec); !p.empty() && p != p.parent_path() &&
                                                                       !std::filesystem::exists(p, ec);
         p = p.parent_path())
      made_dirs.push_back(p.string());
    if (!std::filesystem::create_directories(d.dir, ec)) {
      if (ec || !std::filesystem::is_directory(d.dir, ec))
        throw UsageError(fmt::format("--dir '{}' cannot be created: {}; give --dir a writable directory",
                                     escape_bytes(d.dir), ec ? ec.message() : "it exists and is not a directory"));
      made_dirs.clear();  // another process made it at the same moment: not ours to remove
    }
    created_dir = !made_dirs.empty();
  } else if (!std::filesystem::is_directory(d.dir, ec)) {
    throw UsageError(fmt::format("--dir '{}' exists and is not a directory; give a directory (created if missing)",
                                 escape_bytes(d.dir)));
  }
  if (access(d.dir.c_str(), W_OK) != 0) {
    const int e = errno;
    remove_made_dirs();
    throw UsageError(fmt::format("--dir '{}' is not writable: {}; choose a --dir you may write to", escape_bytes(d.dir),
                                 errno_text(e)));
  }
  try {
    check_can_create_in(d.dir, "--dir");  // /proc passes access(W_OK) as root; the state is not built yet
  } catch (const UsageError&) {
    remove_made_dirs();
    throw;
  }
  job.detect_dir_placement(d.dir);
  if (job.locks_dir()) lock_checkpoint_dir(d.dir, dir_lock, made_dirs, created_dir);  // waits for another run there
  for (const auto& r : d.state.ranks)
    if (std::filesystem::exists(shard_path(d.dir, r.rank), ec))
      throw UsageError(fmt::format("'{}' already exists; ioprobe never overwrites files: remove it or choose another --dir",
                                   escape_bytes(shard_path(d.dir, r.rank))));
  if (!json_path.empty()) {
    // After --dir exists, so that the document may go inside a --dir this run creates.
    check_output_path(json_path, "--json");
    const auto json_abs = std::filesystem::weakly_canonical(json_path, ec);
    for (const auto& r : d.state.ranks)
      if (json_abs == std::filesystem::weakly_canonical(shard_path(d.dir, r.rank), ec))
        throw UsageError(fmt::format("--json '{}' is where rank {}'s shard goes; give the result document another name",
                                     escape_bytes(json_path), r.rank));
  }
  check_buffers(d, restore, memory_budget(host));
  TargetInfo target = probe_target(d.dir);
  auto warn = [&](const std::string& w) {
    d.warnings.push_back(w);
    std::fprintf(stderr, "ioprobe: warning: %s\n", w.c_str());
  };
  if (target.memory_backed) d.target_memory_fs = target.fs_type;
  if (target.memory_backed) warn(fmt::format("{} is {} (RAM): this measures memory, not a storage device", d.dir, target.fs_type));
  for (const auto& w : leftover_warnings(d.dir)) warn(w);
  if (!o.fsync) warn("--fsync false: the save is not durable (page cache); the figures are not storage bandwidth");
  if (static_cast<int>(d.state.ranks.size()) > d.cpus_allowed)
    warn(fmt::format("{} ranks on {} allowed CPUs: the ranks' threads share CPUs, so the figures include that contention "
                     "(a training job runs one rank per accelerator, typically 8 per host)",
                     d.state.ranks.size(), d.cpus_allowed));
  const int64_t ranks_n = static_cast<int64_t>(d.state.ranks.size());
  if (o.compress.enabled && ranks_n <= d.cpus_allowed && o.compress_threads * ranks_n > d.cpus_allowed)
    warn(fmt::format("{} compression workers ({} per rank) on {} allowed CPUs: they take turns on the CPUs, so the save "
                     "measures the scheduler more than the storage; --compress-threads {} fits", o.compress_threads * ranks_n,
                     o.compress_threads, d.cpus_allowed, std::max<int64_t>(1, d.cpus_allowed / ranks_n)));
  if (restore && vm.count("restore-threads") && o.compress_pool == CompressPool::kZstd)
    warn("--restore-threads has no effect with --compress-pool zstd: its one frame per chunk is decoded on the rank's thread");
  else if (restore && o.compress.enabled && ranks_n <= d.cpus_allowed && d.restore_threads * ranks_n > d.cpus_allowed)
    warn(fmt::format("{} restore decompression workers ({} per rank) on {} allowed CPUs: they take turns on the CPUs; "
                     "--restore-threads {} fits", d.restore_threads * ranks_n, d.restore_threads, d.cpus_allowed,
                     std::max<int64_t>(1, d.cpus_allowed / ranks_n)));
  if (o.chunk_bytes < (64u << 10))
    warn(fmt::format("--chunk-size {}: every chunk adds a 48 B index entry{} ({:.1f}% more bytes for the index alone) "
                     "and a checksum to verify; training frameworks write chunks of MiB to GiB",
                     format_bytes(o.chunk_bytes), o.compress.enabled ? " and zstd frame(s) of its own" : "",
                     48.0 * 100.0 / static_cast<double>(o.chunk_bytes)));
  if (!o.compress.enabled && o.byte_group)
    warn("--byte-group without compression only reorders bytes (a copy per chunk, no saving); it helps with --compress zstd:N");
  // Space preflight. The run writes, one after the other: the raw comparison file (as many bytes
  // as the state), the checkpoint, and the raw file again, after the checkpoint was removed
  // (unless --keep). The peak is the larger of the two, or both with --keep.
  uint64_t ckpt_need = 0, raw_need = 0;
  for (const auto& r : d.state.ranks) {
    ckpt_need += uncompressed_shard_bytes(r.bytes, r.regions.size(), o.chunk_bytes);
    raw_need += (r.bytes + 4095) / 4096 * 4096;
  }
  if (!o.compress.enabled && target.free_known && ckpt_need > target.free_bytes)  // the directories go at scope exit
    throw Error(fmt::format("not enough space in {}: the checkpoint needs {} ({} shard(s), uncompressed), {} are free; "
                            "free space, choose a smaller --size or another --dir", escape_bytes(d.dir),
                            format_bytes(ckpt_need), d.state.ranks.size(), format_bytes(target.free_bytes)), kExitFailure);
  if (o.compress.enabled && target.free_known && ckpt_need > target.free_bytes)
    warn(fmt::format("the state ({}) is larger than the free space ({}); the save will fail unless compression saves enough",
                     format_bytes(d.state.host_bytes), format_bytes(target.free_bytes)));
  if (raw_on && keep && target.free_known && ckpt_need + raw_need > target.free_bytes)
    warn(fmt::format("with --keep the checkpoint (up to {}) and the raw write after the save ({}) must fit together "
                     "and {} are free: that raw run will likely be skipped (the baseline is then the run before the save)",
                     format_bytes(ckpt_need), format_bytes(raw_need), format_bytes(target.free_bytes)));
  if (o.compress.enabled && o.compress_pool == CompressPool::kIoprobe && o.compress_threads > 1 &&
      d.state.ranks.front().bytes < static_cast<uint64_t>(o.compress_threads) * kPieceBytes)
    warn(fmt::format("a rank's state ({}) is less than {} compression workers x {} pieces: at most {} worker(s) "
                     "can be busy", format_bytes(d.state.ranks.front().bytes), o.compress_threads, format_bytes(kPieceBytes),
                     (d.state.ranks.front().bytes + kPieceBytes - 1) / kPieceBytes));
  for (const auto& w : zstd_pool_warnings(o)) warn(w);

  // State in memory (untimed), within half of RAM (twice that for --async staging).
  const uint64_t budget = memory_budget(host) / (d.async ? 2 : 1);
  uint64_t cap = UINT64_MAX;
  if (d.state.host_bytes > budget) cap = std::max<uint64_t>(64ull << 20, budget / (d.state.ranks.size() * 4));
  progress(fmt::format("generating {} of {} in memory ({} rank(s))...", format_bytes(d.state.host_bytes),
                       content == StateContent::tensors ? "training state"
                       : content == StateContent::text  ? "text-like state (--data text)"
                                                        : "random state (--data random)",
                       d.state.ranks.size()));
  std::vector<ResidentState> states;
  states.reserve(d.state.ranks.size());
  {
    std::vector<std::unique_ptr<ResidentState>> tmp(d.state.ranks.size());
    run_threads(tmp.size(), [&](size_t i) {  // std::bad_alloc and the like reach main (exit 1)
      tmp[i] = std::make_unique<ResidentState>(d.state.ranks[i], cap, seed * 1000003 + d.state.ranks[i].rank,
                                               content == StateContent::tensors, o.io.huge_pages);
      if (content != StateContent::tensors)
        tmp[i]->overwrite([&](uint8_t* dst, size_t len, size_t region) {
          fill_state_content(content, (seed * 1000003 + d.state.ranks[i].rank) * 16 + region, dst, len);
        });
    });
    for (auto& p : tmp) states.push_back(std::move(*p));
  }
  for (const auto& s : states) {
    d.resident_bytes += s.resident_bytes();
    d.resident_huge_page_bytes += s.huge_page_bytes();
    d.state_cyclic = d.state_cyclic || s.cyclic();
  }
  if (d.state_cyclic) warn(fmt::format("state larger than the memory budget: {} resident, read cyclically", format_bytes(d.resident_bytes)));

  if (o.compress.enabled && !states.empty()) {
    // A 64 MiB sample mixing the rank's regions in their proportions (bf16 first, then fp32).
    std::vector<uint8_t> sample(std::min<uint64_t>(64u << 20, states[0].bytes()));
    size_t filled = 0;
    for (const Region& g : states[0].rank().regions) {
      size_t k = static_cast<size_t>(static_cast<double>(g.bytes) / states[0].bytes() * sample.size());
      k = std::min(k, sample.size() - filled);
      states[0].copy_out(g.offset, k, sample.data() + filled);
      filled += k;
    }
    sample.resize(filled);
    // Speeds are limits: the best of 3 runs each, measured before any write of this run (on a
    // virtual disk the host's flush after a large write slows the guest's CPUs for seconds).
    auto best_of_3 = [](auto&& measure) {
      ZstdProbe best;
      for (int i = 0; i < 3 && !interrupted(); ++i) {  // Ctrl-C: stop probing, keep what was measured
        ZstdProbe p = measure();
        if (p.bytes_per_s > best.bytes_per_s) best = p;
      }
      return best;
    };
    const int cores = compression_cores(d);
    // One core's speed: the better of one frame over the sample (zstd's usual benchmark) and the
    // save's own scheme on one thread (4 MiB frames, one reused output buffer). On this project's
    // VM the first ran 0.7x the second (its 64 MiB output on cold 4 KiB pages), which made
    // cores x one core look like less than the pool's measured speed on all cores.
    d.zstd_probe = best_of_3([&] { return measure_zstd(sample.data(), sample.size(), o.compress.level); });
    const ZstdProbe one_pool =
        best_of_3([&] { return measure_piece_pool(sample.data(), sample.size(), o.compress.level, 1, kPieceBytes); });
    if (one_pool.bytes_per_s > d.zstd_probe->bytes_per_s) d.zstd_probe = one_pool;
    d.zstd_mt_probe = best_of_3([&] { return measure_zstd(sample.data(), sample.size(), o.compress.level, cores, o.zstd_job_bytes); });
    d.pool_probe = best_of_3([&] { return measure_piece_pool(sample.data(), sample.size(), o.compress.level, cores, kPieceBytes); });
  }
  std::vector<uint64_t> rank_bytes;
  for (const auto& r : d.state.ranks) rank_bytes.push_back(r.bytes);
  // One raw write run; on lack of space (checked first) or an I/O error it returns nothing and says why.
  auto try_raw = [&](const std::string& when, std::string& why) -> std::optional<RawWriteResult> {
    const uint64_t free_now = free_bytes_now(d.dir);
    if (raw_need > free_now) {
      why = fmt::format("not enough space {}: it needs {}, {} are free in {}", when, format_bytes(raw_need),
                        format_bytes(free_now), d.dir);
      return std::nullopt;
    }
    try {
      // The baseline is the device's limit: its buffers stay on huge pages whatever --huge-pages
      // says for the save (with 4 KiB pages it measured 439 MB/s, against ~1,400, here).
      UringWriterOptions raw_io = o.io;
      raw_io.huge_pages = true;
      RawWriteResult r = measure_raw_write(d.dir, rank_bytes, raw_io);
      if (r.interrupted) {  // cut short by Ctrl-C: its bytes and time describe nothing
        why = fmt::format("interrupted {}: a cut-short run is not counted", when);
        return std::nullopt;
      }
      return r;
    } catch (const IoError& e) {
      why = e.what();
      return std::nullopt;
    }
  };
  if (!raw_on) d.raw_unavailable = "--raw-baseline off";
  const bool stop_before_raw = job.sync_stopped("start the raw baseline");  // every host at once
  if (raw_on && stop_before_raw) d.raw_unavailable = "interrupted before it started";
  if (raw_on && !stop_before_raw) {
    progress(fmt::format("measuring raw sequential write of {}...", format_bytes(d.state.host_bytes)));
    d.raw = job.merge_raw(try_raw("before the save", d.raw_unavailable), d.raw_unavailable);
    if (d.raw)
      settle(*d.raw);
    else
      warn("raw write baseline not measured (" + d.raw_unavailable + "); the save is reported without the comparison");
  }
  std::unique_ptr<TrainingEmulator> emu;
  if (d.async) {
    progress(fmt::format("calibrating the emulated training step ({} s, then 3 idle steps: about {:.1f} s)...",
                         d.step_time_s, 0.3 + 3 * d.step_time_s));
    emu = std::make_unique<TrainingEmulator>(d.step_time_s);
    d.baseline_step_s = emu->baseline_step_s();
  }

  // One save, or a series (--repeat/--duration): each save is published, restored when asked,
  // and removed before the next; the files of the last completed save stay published here.
  const auto devices = device_recorder(target);  // device accounting: an idle window now, marks around each save
  SeriesResult series;
  if (!job.sync_stopped("start the save")) {  // every process's ranks time from this barrier
    progress(series_mode ? "saving checkpoints repeatedly..."
                         : restore ? "saving checkpoint, then restoring (cold cache) and verifying..." : "saving checkpoint...");
    SeriesLimits lim;
    lim.repeat = repeat;
    lim.duration_s = duration_s;
    lim.restore = restore && !job.multi();  // across hosts: CheckpointJob::after_save
    lim.read_block_bytes = o.io.io_size;
    lim.restore_threads = d.restore_threads;
    lim.mark = [&devices](int phase) { phase == 0 ? devices->clear() : void(); devices->mark(); };
    series = run_save_series(states, d.dir, o, d.async, emu.get(), lim, [&](const SeriesSave& s) {
      if (series_mode) progress(series_save_line(s, repeat, o.fsync));
    });
    d.save = series.last;
    d.file_bytes = series.last_file_bytes;
    d.restore = series.last_restore;
  } else {
    d.save.interrupted = true;
  }
  job.after_save(d, restore);
  // The published shards are removed (unless --keep) before the second raw run, which needs
  // their space, and on any exception below.
  auto remove_shards = [&] {
    if (!keep)
      for (const auto& p : d.save.final_paths) ::unlink(p.c_str());
  };
  try {
    remove_shards();
    const bool stop_after = job.sync_stopped("remove the shards");
    if (d.raw && d.save.ok && !stop_after) {
      // Second raw run after the save: the better of the two is the baseline (strict comparison).
      settle(*d.raw);
      progress("measuring raw sequential write again...");
      std::optional<RawWriteResult> again = job.merge_raw(
          try_raw(keep ? "after the save, beside the kept checkpoint" : "after the save", d.raw_after_save_skipped),
          d.raw_after_save_skipped);
      if (again) {
        d.raw_runs_bytes_per_s = {d.raw->bytes_per_s(), again->bytes_per_s()};
        if (again->bytes_per_s() > d.raw->bytes_per_s()) d.raw = again;
      } else {
        d.raw_runs_bytes_per_s = {d.raw->bytes_per_s()};
        warn("the raw write after the save gave no figure (" + d.raw_after_save_skipped +
             "); the baseline is the run before the save only");
      }
    }
  } catch (...) {
    remove_shards();
    if (created_dir && !keep) remove_made_dirs();
    throw;
  }
  // Only empty ones go, and not the one the result document is about to be written into, nor
  // those above it (made_dirs runs deepest first).
  if (created_dir && !keep) {
    dir_lock.reset();
    const std::string json_dir =
        json_path.empty() ? std::string()
                          : std::filesystem::absolute(json_path, ec).parent_path().lexically_normal().string();
    for (const auto& m : made_dirs)
      if (std::filesystem::path(m).lexically_normal().string() == json_dir || ::rmdir(m.c_str()) != 0) break;
  }

  job.finish(d);  // rank 0 now holds every process's ranks
  if (!job.lead()) return kExitOk;
  nlohmann::json doc = document_header("checkpoint", ctx.argv, host);
  doc["target"] = target_json(target);
  doc["checkpoint"] = checkpoint_json(d);
  doc["checkpoint"]["elapsed_s"] = (now_ns() - t_start) / 1e9;  // the whole command, setup included
  doc["checkpoint"]["state"]["content"] = state_content_name(content);
  job.add_sections(doc);
  if (series_mode) doc["checkpoint"]["series"] = checkpoint_series_json(series, repeat, duration_s, o.fsync);
  add_checkpoint_device_io(doc, *devices, target);
  const bool partial = interrupted() || d.save.interrupted || (d.restore && d.restore->interrupted);
  doc["partial"] = partial;
  for (const auto& w : d.warnings) doc["warnings"].push_back(w);
  std::fputs(render_checkpoint_text(doc).c_str(), stdout);
  std::fputs(render_series_text(doc).c_str(), stdout);
  if (keep && d.save.ok) std::printf("kept: %s/__*_0.distcp\n", d.dir.c_str());
  std::fflush(stdout);
  if (!json_path.empty()) write_json_file(json_path, doc);
  if (partial) return interrupt_exit_code() ? interrupt_exit_code() : kExitSigint;
  if (!d.save.ok) {
    std::fprintf(stderr, "ioprobe: %s\n", d.save.failure.empty() ? "checkpoint save failed" : d.save.failure.c_str());
    return kExitFailure;
  }
  if (d.restore && !d.restore->ok) {
    for (const auto& r : d.restore->ranks)
      if (!r.error.empty()) std::fprintf(stderr, "ioprobe: restore failed: %s\n", r.error.c_str());
    return kExitFailure;
  }
  return kExitOk;
}
}  // namespace

int cmd_checkpoint(const CommandContext& ctx) {
  return run_checkpoint_job(ctx, [&](CheckpointJob& job) { return checkpoint_body(ctx, job); });
}

}  // namespace ioprobe::cli
