#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/checkpoint_report.hpp"

#include "checkpoint/chunker.hpp"
#include "checkpoint/rank_totals.hpp"

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace ioprobe {

using nlohmann::json;
using namespace checkpoint;

namespace {

double json_sec(int64_t ns) { return ns / 1e9; }
double rate(uint64_t bytes, int64_t ns) { return rate_bytes_per_s(bytes, ns); }

json state_json(const CheckpointRunData& d) {
  const StateSpec& s = d.state;
  json ranks = json::array();
  for (const auto& r : s.ranks) {
    json regs = json::array();
    for (const auto& g : r.regions) regs.push_back({{"kind", tensor_kind_name(g.kind)}, {"bytes", g.bytes}});
    ranks.push_back({{"rank", r.rank}, {"bytes", r.bytes}, {"regions", regs}});
  }
  // params: null for --size runs (a size in bytes, no model behind it)
  return {{"source", s.source},
          {"params", s.params > 0 ? json(s.params) : json(nullptr)},
          {"bytes_per_param", kBytesPerParam},
          {"tp", s.tp},
          {"pp", s.pp},
          {"dp", s.dp},
          {"zero_stage", s.zero_stage},
          {"world_size", s.world},
          {"world_bytes", s.world_bytes},
          {"host_bytes", s.host_bytes},
          {"ranks_on_host", s.ranks.size()},
          {"resident_bytes", d.resident_bytes},
          {"resident_huge_page_bytes", d.resident_huge_page_bytes},
          {"resident_cyclic", d.state_cyclic},
          {"ranks", ranks}};
}

json config_json(const CheckpointRunData& d) {
  const SaveOptions& o = d.opts;
  const bool zpool = o.compress.enabled && o.compress_pool == CompressPool::kZstd;
  int busy = zpool ? zstd_busy_workers(o.compress.level, o.chunk_bytes, o.compress_threads, o.zstd_job_bytes) : 0;
  json cfg = {{"dir", escape_bytes(d.dir)},
              {"chunk_bytes", o.chunk_bytes},
              {"compress", o.compress.text()},
              {"compress_pool", !o.compress.enabled ? "none"
                                : zpool             ? "zstd"
                                                    : "ioprobe"},
              {"compress_threads_per_rank", o.compress_threads},
              {"byte_group", o.byte_group},
              {"fsync", o.fsync},
              {"io_bytes", o.io.io_size},
              {"io_depth", o.io.depth},
              {"direct_requested", o.io.direct},
              {"huge_pages", o.io.huge_pages},
              {"flush_every_bytes", o.io.flush_bytes},
              {"async", d.async},
              {"step_time_s", d.step_time_s},
              // zstd's own pool only (0 otherwise): its job size and the workers it can keep busy per chunk
              {"zstd_job_bytes", zpool ? zstd_job_bytes(o.compress.level, o.chunk_bytes, o.zstd_job_bytes) : 0},
              {"zstd_workers_busy_per_chunk", busy}};
  // ioprobe's own pool: one zstd frame per piece, pieces of consecutive chunks in flight together
  if (o.compress.enabled && !zpool) cfg["frame_bytes"] = kPieceBytes;
  return cfg;
}

}  // namespace

std::string ratio_size_note(uint64_t save_bytes, double save_s, uint64_t raw_bytes, double raw_s) {
  if (save_bytes >= kRatioMinBytes && raw_bytes >= kRatioMinBytes && save_s >= kRatioMinSeconds &&
      raw_s >= kRatioMinSeconds)
    return "";
  // The size the slower of the two writes in 2 x kRatioMinSeconds, at least 1 GiB: at a few MiB the
  // measured rates are mostly overhead and understate the target, so they alone would suggest too
  // little (on ext4 here 256 MiB still took 0.3-0.8 s, 1 GiB 0.9-1.4 s).
  double slowest = 0;
  if (save_s > 0 && raw_s > 0) slowest = std::min(save_bytes / save_s, raw_bytes / raw_s);
  else if (save_s > 0 || raw_s > 0) slowest = save_s > 0 ? save_bytes / save_s : raw_bytes / raw_s;
  const double need = std::max(static_cast<double>(1ULL << 30), slowest * 2 * kRatioMinSeconds);
  uint64_t suggest = kRatioMinBytes;
  while (static_cast<double>(suggest) < need && suggest < (1ULL << 50)) suggest *= 2;
  return fmt::format(
      "the save wrote {} in {:.3f} s and the raw write {} in {:.3f} s: under {} or {:.1f} s, open, fsync "
      "and write-back timing are a large share of each, so this ratio is not meaningful at this size; "
      "use --size {} or more",
      format_bytes(save_bytes), save_s, format_bytes(raw_bytes), raw_s, format_bytes(kRatioMinBytes), kRatioMinSeconds,
      suggest >= (1ULL << 30) ? fmt::format("{}GiB", suggest >> 30) : fmt::format("{}MiB", suggest >> 20));
}

json checkpoint_json(const CheckpointRunData& d) {
  const SaveResult& s = d.save;
  json out;
  out["state"] = state_json(d);
  out["config"] = config_json(d);

  // Per-rank save figures (duration of a rank: open .. fsync returned); the figures over ranks
  // come from checkpoint/rank_totals.hpp.
  json ranks = json::array();
  auto empty_rank = [&](size_t i) { return i < d.state.ranks.size() && d.state.ranks[i].bytes == 0; };
  SaveTotals tot;
  for (size_t i = 0; i < s.ranks.size(); ++i) {
    const auto& r = s.ranks[i];
    uint64_t disk = i < d.file_bytes.size() ? d.file_bytes[i] : r.stored_bytes;
    double rr = rate(r.logical_bytes, r.total_ns);
    // A failed or interrupted save claims no rate and no size on disk (its files were removed).
    ranks.push_back({{"rank", r.rank},
                     {"logical_bytes", r.logical_bytes},
                     {"stored_bytes", r.stored_bytes},
                     {"bytes_on_disk", s.ok ? json(disk) : json(nullptr)},
                     {"duration_s", json_sec(r.total_ns)},
                     {"write_bytes_per_s", s.ok ? json(rr) : json(nullptr)},
                     {"stage_s", json_sec(r.stage_ns)},
                     {"compress_s", json_sec(r.compress_ns)},
                     {"write_wait_s", json_sec(r.write_wait_ns)},
                     {"fsync_s", json_sec(r.fsync_ns)},
                     {"written_bytes", r.written_bytes},
                     {"chunks_done", r.chunks_done},
                     {"chunks_total", r.chunks_total},
                     {"direct", r.direct},
                     {"zstd_frames", r.frames},
                     {"zero_copy_bytes", r.zero_copy_bytes}});
    if (r.compress_active_ns > 0) {
      // Measured: time inside zstd summed over this rank's workers / the pool's wall time.
      ranks.back()["compress_busy_s"] = json_sec(r.compress_busy_ns);
      ranks.back()["compress_workers_busy_mean"] = static_cast<double>(r.compress_busy_ns) /
                                                   static_cast<double>(r.compress_active_ns);
      ranks.back()["compress_workers_used"] = r.compress_workers_used;
      ranks.back()["checksum_cpu_s"] = json_sec(r.checksum_cpu_ns);  // the workers' XXH3 of pieces and frames
    }
    // Ranks with no state to write (ZeRO-0 beyond DP rank 0, more ranks than state) bound nothing.
    tot.add_rank(r, disk, !empty_rank(i));
  }
  const uint64_t logical = tot.logical_bytes, stored = tot.stored_bytes, on_disk = tot.bytes_on_disk;
  const int64_t max_ns = tot.duration_max_ns;
  const double min_rate = tot.min_rank_bytes_per_s;
  // A save that did not complete (failed or interrupted) claims no rate, ratio or size on disk:
  // those fields are null; what it did (bytes the kernel completed, elapsed times) stays.
  const double ratio = tot.ratio();
  const int64_t durable = s.ok ? s.durable_ns : 0;
  const double agg = s.ok ? rate(logical, durable) : 0.0;
  auto valid = [&](double v) { return s.ok ? json(v) : json(nullptr); };
  json save = {{"ok", s.ok},
               {"durable", s.ok && d.opts.fsync},
               {"interrupted", s.interrupted},
               {"durability", s.interrupted   ? "interrupted: not published"
                              : !s.ok         ? "failed: not published"
                              : !d.opts.fsync ? "not durable (page cache)"
                                              : "durable (fsync + rename + directory fsync)"},
               {"written_bytes", tot.written_bytes},
               {"durable_bytes", s.ok && d.opts.fsync ? on_disk : 0},
               {"direct", tot.direct()},
               {"logical_bytes", logical},
               {"stored_bytes", stored},
               {"bytes_on_disk", s.ok ? json(on_disk) : json(nullptr)},
               {"ratio", valid(ratio)},
               {"duration_max_s", json_sec(max_ns)},
               {"throughput_min_rank_bytes_per_s", valid(min_rate)},
               {"time_to_staged_s", json_sec(s.staged_ns)},
               {"ranks_done_s", json_sec(s.ranks_done_ns)},
               {"publish_s", json_sec(s.publish_ns)},
               {"time_to_durable_s", valid(json_sec(durable))},
               {"write_bytes_per_s", valid(agg)},
               {"stored_write_bytes_per_s", valid(rate(stored, durable))},
               {"phases_max_over_ranks_s",
                {{"stage", json_sec(tot.stage_ns)},
                 {"compress", json_sec(tot.compress_ns)},
                 {"write_wait", json_sec(tot.write_wait_ns)},
                 {"fsync", json_sec(tot.fsync_ns)}}},
               {"user_cpu_s", s.user_cpu_s},
               {"sys_cpu_s", s.sys_cpu_s},
               {"cpu_per_wall", s.ranks_done_ns > 0 ? (s.user_cpu_s + s.sys_cpu_s) / json_sec(s.ranks_done_ns) : 0},
               {"ranks", ranks}};
  if (tot.workers_used_min >= 0 && tot.ranks > 0) {
    save["compression"] = {{"pool", "ioprobe"},
                           {"workers_per_rank", d.opts.compress_threads},
                           {"workers_busy_mean_per_rank", tot.workers_busy_sum / static_cast<double>(tot.ranks)},
                           {"workers_used_min_over_ranks", tot.workers_used_min},
                           {"checksum_cpu_s_max_over_ranks", json_sec(tot.checksum_cpu_max_ns)}};
  }
  if (!s.failure.empty()) save["failure"] = escape_bytes(s.failure);
  if (d.async) {
    double sum = 0;
    for (double x : s.step_s) sum += x;
    double mean = s.step_s.empty() ? 0 : sum / s.step_s.size();
    save["async"] = {{"training_blocked_s", json_sec(s.staged_ns)},
                     {"steps_during_persistence", s.step_s.size()},
                     {"step_baseline_s", d.baseline_step_s},
                     {"step_mean_during_persistence_s", mean},
                     {"step_slowdown", d.baseline_step_s > 0 && mean > 0 ? mean / d.baseline_step_s - 1 : 0}};
  }
  out["save"] = save;

  if (d.raw) {
    double raw = d.raw->bytes_per_s();
    json rj = {{"bytes", d.raw->bytes},
               {"duration_max_s", json_sec(d.raw->max_ns)},
               {"write_bytes_per_s", raw},
               {"direct", d.raw->direct},
               {"fsync", true},
               {"runs_bytes_per_s", d.raw_runs_bytes_per_s},
               {"settle", "sync + max(1 s, raw duration) idle before and after the save"},
               {"available", true}};
    if (!d.raw_after_save_skipped.empty()) rj["after_save_skipped"] = escape_bytes(d.raw_after_save_skipped);
    out["raw_write"] = rj;
  } else {
    const std::string why = d.raw_unavailable.empty() ? "no reason recorded" : d.raw_unavailable;
    out["raw_write"] = {{"available", false}, {"reason", escape_bytes(why)}};
    out["comparison"] = {{"available", false},
                         {"reason", escape_bytes("no raw write measured: " + why)},
                         {"checkpoint_over_raw", nullptr}};
  }
  if (d.raw && !s.ok) {
    out["comparison"] = {{"available", false},
                         {"reason", "the save did not complete: no checkpoint rate to compare"},
                         {"checkpoint_over_raw", nullptr}};
  } else if (d.raw && !d.opts.fsync) {
    // A save into the page cache is not comparable with a durable raw write, and must not drive
    // a goal or a bound.
    out["comparison"] = {{"available", false},
                         {"reason", "the save was not durable (--fsync false, page cache): not compared with the "
                                    "durable raw write"},
                         {"checkpoint_over_raw", nullptr}};
  } else if (d.raw) {
    const double raw = d.raw->bytes_per_s();
    json cmp = {{"available", true}, {"checkpoint_over_raw", raw > 0 ? agg / raw : 0}};
    const std::string small = ratio_size_note(logical, json_sec(durable), d.raw->bytes, json_sec(d.raw->max_ns));
    cmp["ratio_meaningful"] = small.empty();
    if (!small.empty()) cmp["ratio_note"] = small;
    // ioprobe's design targets: uncompressed >= 90% of raw; compressed >= 90% of
    // min(raw x ratio, cores x single-thread zstd speed), all measured in this run.
    if (!d.opts.compress.enabled) {
      cmp["goal_bytes_per_s"] = 0.9 * raw;
      cmp["limit_bytes_per_s"] = raw;
      cmp["bound"] = "write";
    } else if (d.zstd_probe && d.zstd_probe->bytes_per_s > 0) {
      const int cores = compression_cores(d);
      double cpu_limit = cores * d.zstd_probe->bytes_per_s;
      double io_limit = raw * ratio;
      double limit = std::min(cpu_limit, io_limit);
      cmp["cores"] = cores;
      cmp["zstd_single_thread_bytes_per_s"] = d.zstd_probe->bytes_per_s;
      cmp["cpu_limit_bytes_per_s"] = cpu_limit;
      cmp["write_limit_bytes_per_s"] = io_limit;
      cmp["limit_bytes_per_s"] = limit;
      cmp["goal_bytes_per_s"] = 0.9 * limit;
      cmp["bound"] = cpu_limit < io_limit ? "compression" : "write";
      if (d.zstd_mt_probe) {
        // What zstd's own multithreading reaches in memory on this machine (no I/O at all):
        // below cores x single-thread when the CPUs are shared (SMT siblings, a busy host).
        cmp["zstd_multithread_in_memory_bytes_per_s"] = d.zstd_mt_probe->bytes_per_s;
        cmp["checkpoint_over_zstd_multithread"] = d.zstd_mt_probe->bytes_per_s > 0 ? agg / d.zstd_mt_probe->bytes_per_s
                                                                                   : 0;
      }
      if (d.pool_probe) {
        // The same sample and cores with ioprobe's own threads (a zstd frame per 4 MiB piece):
        // the figure that decides which pool is the default (docs/benchmarks/checkpoint.md).
        cmp["ioprobe_pool_in_memory_bytes_per_s"] = d.pool_probe->bytes_per_s;
        cmp["compress_pool"] = d.opts.compress_pool == CompressPool::kZstd ? "zstd" : "ioprobe";
      }
      // That limit assumes `cores` compress `cores` times as fast as one. Where they do
      // not (shared vCPUs, SMT siblings), the pool this save used, measured on all its cores in
      // memory, is the CPU limit the machine really has; reported beside the nominal one, never instead.
      const std::optional<ZstdProbe>& used = d.opts.compress_pool == CompressPool::kZstd ? d.zstd_mt_probe
                                                                                         : d.pool_probe;
      if (used && used->bytes_per_s > 0) {
        const double measured = std::min(used->bytes_per_s, io_limit);
        cmp["measured_cpu_limit_bytes_per_s"] = used->bytes_per_s;
        cmp["cores_speedup_measured"] = used->bytes_per_s / d.zstd_probe->bytes_per_s;
        cmp["measured_limit_bytes_per_s"] = measured;
        cmp["checkpoint_over_measured_limit"] = agg / measured;
      }
    }
    if (cmp.contains("limit_bytes_per_s") && cmp["limit_bytes_per_s"].get<double>() > 0)
      cmp["checkpoint_over_limit"] = agg / cmp["limit_bytes_per_s"].get<double>();
    out["comparison"] = cmp;
  }
  if (d.restore) {
    const RestoreResult& r = *d.restore;
    json rr = json::array();
    RestoreTotals rt;
    for (size_t i = 0; i < r.ranks.size(); ++i) {
      const auto& x = r.ranks[i];
      double v = rate(x.logical_bytes, x.total_ns);
      rr.push_back({{"path", escape_bytes(x.path)},
                    {"logical_bytes", x.logical_bytes},
                    {"stored_bytes", x.stored_bytes},
                    {"duration_s", json_sec(x.total_ns)},
                    {"read_s", json_sec(x.read_ns)},
                    {"decompress_s", json_sec(x.decompress_ns)},
                    {"restore_bytes_per_s", v},
                    {"chunks_verified", x.chunks_verified},
                    {"chunks_total", x.chunks_total},
                    {"direct", x.direct},
                    {"decode_threads", x.decode_threads},
                    {"decode_wait_s", json_sec(x.decode_wait_ns)}});
      rt.add_rank(x, !empty_rank(i));
    }
    const bool rdirect = rt.direct();
    const int decoders =
        rt.decode_threads_max;  // the most decoders a rank used (0: every shard decoded on its rank's thread)
    const std::string err = rt.first_error;
    // On tmpfs or ramfs the files are the page cache: DONTNEED cannot evict them, every read is from RAM.
    const std::string cache = !d.target_memory_fs.empty() ? "in memory (" + d.target_memory_fs +
                                                                ": the files live in RAM, no cold read is possible)"
                              : !d.restore_cold
                                  ? "warm (buffered reads of what the page cache holds; nothing dropped before reading)"
                              : rdirect
                                  ? "cold (O_DIRECT io_uring reads; fdatasync + posix_fadvise DONTNEED before reading)"
                                  : "cold (fdatasync + posix_fadvise DONTNEED before reading; buffered reads)";
    json rj = {{"ok", r.ok},
               {"interrupted", r.interrupted},
               {"cache", cache},
               {"direct", rdirect},
               {"logical_bytes", rt.logical_bytes},
               {"duration_max_s", json_sec(rt.duration_max_ns)},
               {"restore_bytes_per_s", rt.bytes_per_s()},
               {"throughput_min_rank_bytes_per_s", rt.min_rank_bytes_per_s},
               {"decode_threads_per_rank", decoders},
               {"ranks", rr}};
    if (!err.empty()) rj["error"] = escape_bytes(err);
    out["restore"] = rj;
  }
  return out;
}

}  // namespace ioprobe
