#include "cli/checkpoint_config.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "checkpoint/compressor.hpp"
#include "checkpoint/state_spec.hpp"
#include "cli/checkpoint_cluster_steps.hpp"
#include "cli/checkpoint_preflight.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace ioprobe::cli {

using namespace checkpoint;

po::options_description checkpoint_options() {
  po::options_description d("ioprobe checkpoint options");
  auto s = [] { return po::value<std::string>(); };
  // clang-format off
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
    ("restore-only", po::value<std::string>()->implicit_value("true"), "save nothing: restore the checkpoint already in "
                     "--dir (saved earlier with --keep, here or on another host): read, decompress and check every "
                     "chunk's stored and logical xxh3; writes nothing there")
    ("verify-only", po::value<std::string>()->implicit_value("true"), "save nothing: check the stored bytes' xxh3 of "
                    "every chunk of the checkpoint in --dir, without decompressing; writes nothing there")
    ("restore-cache", s(), "with --restore: cold (default: each shard's cached pages dropped, O_DIRECT reads) | warm "
                           "(buffered reads of whatever the page cache holds, as a trainer restarted on the same host "
                           "finds a checkpoint it just wrote; with --direct false the save leaves it there)")
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
  // clang-format on
  return d;
}

namespace {

// --restore-only / --verify-only: the checkpoint in --dir is read as it is, so only the options of
// how it is read apply; every option of a save is refused by name.
void parse_readback(const po::variables_map& vm, const HostInfo& host, CheckpointConfig& c) {
  const bool restore = get_bool(vm, "restore-only", false);
  if (restore && get_bool(vm, "verify-only", false))
    throw UsageError("--restore-only and --verify-only: give one (--restore-only decompresses and checks both "
                     "checksums of every chunk, --verify-only checks the stored bytes' checksums only)");
  const char* mode = restore ? "--restore-only" : "--verify-only";
  // --restore-threads sets decompression workers: --verify-only decompresses nothing (refused below).
  std::vector<std::string> takes = {"dir", "json", "restore-cache", "io-size", "quiet"};
  if (restore) takes.insert(takes.begin() + 3, "restore-threads");
  for (const auto& option : vm) {
    const std::string& name = option.first;
    if (name == "restore-only" || name == "verify-only" || name == "restore-threads" ||
        std::find(takes.begin(), takes.end(), name) != takes.end())
      continue;
    throw UsageError(fmt::format("--{} with {}: the checkpoint already in --dir is read as it was saved, so options "
                                 "of a save do not apply; drop --{} (with {}: --{})",
                                 name, mode, name, mode, fmt::join(takes, ", --")));
  }
  if (!restore && vm.count("restore-threads"))
    throw UsageError("--restore-threads sets decompression workers; --verify-only decompresses nothing: drop it");
  c.readback = restore ? Readback::kRestore : Readback::kVerify;
  c.dir = get_string(vm, "dir", "./ioprobe-ckpt");
  c.json_path = get_string(vm, "json");
  if (vm.count("json") && c.json_path.empty()) throw UsageError("--json: empty path; give a file name");
  c.restore_cold = get_choice(vm, "restore-cache", "cold", {"cold", "warm"}) == "cold";
  c.save.io.io_size = get_size(vm, "io-size", 16u << 20, 4096, 1u << 30);
  if (c.save.io.io_size % 4096)
    throw UsageError(fmt::format("--io-size: {} B is not a multiple of 4096", c.save.io.io_size));
  c.restore_threads = vm.count("restore-threads") ? static_cast<int>(get_count(vm, "restore-threads", 1, 0, 256)) : -1;
  c.quiet = get_bool(vm, "quiet", false);
  c.cpus_allowed = std::max(1, host.cpus_allowed);
}

}  // namespace

ParsedCheckpoint parse_checkpoint_config(const std::vector<std::string>& args, const HostInfo& host,
                                         CheckpointJob& job) {
  ParsedCheckpoint out;
  CheckpointConfig& c = out.config;
  auto desc = checkpoint_options();
  po::variables_map vm = parse_command_line(args, desc, "checkpoint");
  if (vm.count("help")) {
    out.help = true;
    return out;
  }
  if (get_bool(vm, "restore-only", false) || get_bool(vm, "verify-only", false)) {
    parse_readback(vm, host, c);
    return out;
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

  const int ranks = static_cast<int>(get_count(vm, "ranks", 1, 1, 4096));
  const int job_ranks = job.number_ranks(ranks,
                                         vm.count("params") ? 0 : get_size(vm, "size", 1ull << 30, 1, 1ull << 50));
  if (vm.count("params")) {
    int tp = static_cast<int>(get_count(vm, "tp", 1, 1, 65536)),
        pp = static_cast<int>(get_count(vm, "pp", 1, 1, 65536));
    const int64_t tp_pp = int64_t{tp} * pp;
    if (!vm.count("dp") && tp_pp <= job_ranks && job_ranks % tp_pp != 0)
      throw UsageError(
          fmt::format("--ranks {} is not a multiple of tp {} x pp {} = {}, so the data parallel size is not "
                      "whole; give --dp, or --ranks a multiple of {}",
                      job_ranks, tp, pp, tp_pp, tp_pp));
    int dp = static_cast<int>(get_count(vm, "dp", std::max<int64_t>(1, job_ranks / tp_pp), 1, 1 << 20));
    const double params = checked_value(vm, "params", [&] { return parse_params(get_string(vm, "params")); });
    c.state = state_from_params(params, tp, pp, dp, static_cast<int>(get_count(vm, "zero-stage", 3, 0, 3)),
                                job.first_rank() + ranks);
    if (has(vm, "model")) c.state.source = get_string(vm, "model");
  } else {
    for (const char* o : {"tp", "pp", "dp", "zero-stage"})
      if (vm.count(o))
        throw UsageError(
            fmt::format("--{} shapes a model's state (--params or --model); with --size the state is split "
                        "evenly over --ranks: drop --{} or give --params",
                        o, o));
    c.state = state_from_size(get_size(vm, "size", 1ull << 30, 1, 1ull << 50), ranks);
  }
  job.own_ranks(c.state);
  c.plan_only = get_bool(vm, "plan", false);
  if (c.plan_only) return out;
  SaveOptions& o = c.save;
  o.chunk_bytes = get_size(vm, "chunk-size", 1ull << 30, 1, 1ull << 40);
  o.compress = checked_value(vm, "compress", [&] { return parse_compression(get_string(vm, "compress", "none")); });
  o.compress_threads = static_cast<int>(
      get_count(vm, "compress-threads", std::max(1, host.cpus_allowed / ranks), 0, 256));
  o.compress_pool = get_choice(vm, "compress-pool", "ioprobe", {"ioprobe", "zstd"}) == "zstd" ? CompressPool::kZstd
                                                                                              : CompressPool::kIoprobe;
  o.byte_group = get_bool(vm, "byte-group", false);
  if (!o.compress.enabled && vm.count("compress-pool"))
    throw UsageError(
        "--compress-pool chooses who compresses; with --compress none nothing is: drop it or give --compress zstd:1");

  if (!o.compress.enabled && vm.count("compress-threads"))
    throw UsageError("--compress-threads sets compression workers; with --compress none there are none: drop it or "
                     "give --compress zstd:1");
  if (o.compress_pool != CompressPool::kZstd && vm.count("zstd-job-size"))
    throw UsageError("--zstd-job-size sets the job size of zstd's own pool: only with --compress-pool zstd");
  o.zstd_job_bytes = get_size(vm, "zstd-job-size", 0, 0, 1u << 30);
  o.fsync = get_bool(vm, "fsync", true);
  o.world_size = job_ranks;  // every process's shards, numbered 0..job_ranks-1
  o.io.io_size = get_size(vm, "io-size", 16u << 20, 4096, 1u << 30);
  if (o.io.io_size % 4096) throw UsageError(fmt::format("--io-size: {} B is not a multiple of 4096", o.io.io_size));
  o.io.depth = static_cast<unsigned>(get_count(vm, "io-depth", 2, 1, 64));
  o.io.direct = get_bool(vm, "direct", true);
  // Default: every 64 MiB, or every request when requests are larger.
  o.io.flush_bytes = get_size(vm, "flush-every", std::max<uint64_t>(64ull << 20, o.io.io_size), 0, 1ull << 50);
  if (o.io.flush_bytes > 0 && o.io.flush_bytes < o.io.io_size)
    throw UsageError(fmt::format("--flush-every {}: below --io-size {}; a flush is queued after whole write requests "
                                 "complete, so give 0 (only the final fsync) or at least {}",
                                 format_bytes(o.io.flush_bytes), format_bytes(o.io.io_size),
                                 format_bytes(o.io.io_size)));
  if (!o.fsync) {
    if (vm.count("flush-every") && o.io.flush_bytes > 0)
      throw UsageError("--flush-every flushes toward durability, which --fsync false turns off; drop one of them");
    o.io.flush_bytes = 0;
  }
  o.io.huge_pages = get_bool(vm, "huge-pages", true);
  c.async = get_bool(vm, "async", false);
  c.step_time_s = get_duration(vm, "step-time", 0.1);
  if (vm.count("step-time") && !c.async)
    throw UsageError("--step-time: only with --async (the training steps run while the save persists)");
  if (c.async && !(c.step_time_s >= 1e-3))
    throw UsageError(fmt::format("--step-time: {} s is below 1 ms; give a training step such as 100ms", c.step_time_s));
  c.restore = get_bool(vm, "restore", false);
  out.restore_threads_given = vm.count("restore-threads") > 0;
  if (vm.count("restore-cache") && !c.restore)
    throw UsageError("--restore-cache: only with --restore (it says how the restore finds the page cache)");
  c.restore_cold = get_choice(vm, "restore-cache", "cold", {"cold", "warm"}) == "cold";
  if (vm.count("restore-threads") && !c.restore)
    throw UsageError("--restore-threads: only with --restore (it sets the restore's decompression workers)");
  if (vm.count("restore-threads") && !o.compress.enabled)
    throw UsageError(
        "--restore-threads sets decompression workers; with --compress none there is nothing to decompress: drop it");
  c.restore_threads = static_cast<int>(
      get_count(vm, "restore-threads", std::max(1, host.cpus_allowed / ranks), 0, 256));
  c.raw_baseline = get_bool(vm, "raw-baseline", true);  // on|off, or true|false as the other switches
  c.keep = get_bool(vm, "keep", false);
  c.quiet = get_bool(vm, "quiet", false);
  const uint64_t repeat_opt = get_count(vm, "repeat", 1, 1, 1000000000);
  c.duration_s = get_duration(vm, "duration", 0);
  if (vm.count("duration") && c.duration_s <= 0) throw UsageError("--duration: must be greater than 0, e.g. 10m");
  c.series = vm.count("repeat") || vm.count("duration");
  // --duration alone: no count limit; --repeat alone: no time limit; both: the first reached.
  c.repeat = vm.count("repeat") ? repeat_opt : vm.count("duration") ? 0 : 1;
  job.check_options(c.series, c.async);
  c.seed = get_count(vm, "seed", 1, 0, UINT64_MAX);
  const std::string content_name = get_choice(vm, "data", "tensors", {"tensors", "text", "random"});
  c.content = content_name == "text"     ? StateContent::text
              : content_name == "random" ? StateContent::random
                                         : StateContent::tensors;
  c.content_label = c.content == StateContent::tensors ? "training state"
                    : c.content == StateContent::text  ? "text-like state (--data text)"
                                                       : "random state (--data random)";
  c.json_path = job.lead() ? get_string(vm, "json") : "";  // rank 0 writes the document
  if (vm.count("json") && job.lead()) {
    // Checked before any measurement (exit 2; the path itself once --dir exists), so a finished
    // measurement is never lost to a bad path.
    if (c.json_path.empty()) throw UsageError("--json: empty path; give a file name");
  }
  c.dir = get_string(vm, "dir", "./ioprobe-ckpt");
  c.cpus_allowed = std::max(1, host.cpus_allowed);
  c.memory_budget_bytes = memory_budget(host);

  return out;
}

}  // namespace ioprobe::cli
