#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/checkpoint_document.hpp"
#include "report/checkpoint_report.hpp"

#include "checkpoint/chunker.hpp"
#include "checkpoint/rank_totals.hpp"

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace ioprobe {

using namespace checkpoint;

namespace {

double json_sec(int64_t ns) { return ns / 1e9; }
double rate(uint64_t bytes, int64_t ns) { return rate_bytes_per_s(bytes, ns); }

CheckpointStateSection state_section(const CheckpointRunData& d) {
  const StateSpec& s = d.state;
  CheckpointStateSection o;
  for (const auto& r : s.ranks) {
    CheckpointStateRank k{r.rank, r.bytes, {}};
    for (const auto& g : r.regions) k.regions.push_back({tensor_kind_name(g.kind), g.bytes});
    o.ranks.push_back(std::move(k));
  }
  o.source = s.source;
  if (s.params > 0) o.params = s.params;  // --size runs: a size in bytes, no model behind it
  o.bytes_per_param = kBytesPerParam;
  o.tp = s.tp;
  o.pp = s.pp;
  o.dp = s.dp;
  o.zero_stage = s.zero_stage;
  o.world_size = s.world;
  o.world_bytes = s.world_bytes;
  o.host_bytes = s.host_bytes;
  o.ranks_on_host = s.ranks.size();
  o.resident_bytes = d.resident_bytes;
  o.resident_huge_page_bytes = d.resident_huge_page_bytes;
  o.resident_cyclic = d.state_cyclic;
  return o;
}

CheckpointConfigSection config_section(const CheckpointRunData& d) {
  const SaveOptions& o = d.opts;
  const bool zpool = o.compress.enabled && o.compress_pool == CompressPool::kZstd;
  CheckpointConfigSection c;
  c.dir = escape_bytes(d.dir);
  c.chunk_bytes = o.chunk_bytes;
  c.compress = o.compress.text();
  c.compress_pool = !o.compress.enabled ? "none" : zpool ? "zstd" : "ioprobe";
  c.compress_threads_per_rank = o.compress_threads;
  c.byte_group = o.byte_group;
  c.fsync = o.fsync;
  c.io_bytes = o.io.io_size;
  c.io_depth = o.io.depth;
  c.direct_requested = o.io.direct;
  c.huge_pages = o.io.huge_pages;
  c.flush_every_bytes = o.io.flush_bytes;
  c.async = d.async;
  c.step_time_s = d.step_time_s;
  // zstd's own pool only (0 otherwise): its job size and the workers it can keep busy per chunk
  c.zstd_job_bytes = zpool ? zstd_job_bytes(o.compress.level, o.chunk_bytes, o.zstd_job_bytes) : 0;
  c.zstd_workers_busy_per_chunk = zpool ? zstd_busy_workers(o.compress.level, o.chunk_bytes, o.compress_threads,
                                                            o.zstd_job_bytes)
                                        : 0;
  // ioprobe's own pool: one zstd frame per piece, pieces of consecutive chunks in flight together
  if (o.compress.enabled && !zpool) c.frame_bytes = kPieceBytes;
  return c;
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

CheckpointRestoreRank restore_rank_row(const RankRestoreResult& x) {
  CheckpointRestoreRank k;
  k.path = escape_bytes(x.path);
  k.logical_bytes = x.logical_bytes;
  k.stored_bytes = x.stored_bytes;
  k.duration_s = json_sec(x.total_ns);
  k.read_s = json_sec(x.read_ns);
  k.decompress_s = json_sec(x.decompress_ns);
  k.restore_bytes_per_s = rate(x.logical_bytes, x.total_ns);
  k.chunks_verified = x.chunks_verified;
  k.chunks_total = x.chunks_total;
  k.direct = x.direct;
  k.decode_threads = x.decode_threads;
  k.decode_wait_s = json_sec(x.decode_wait_ns);
  return k;
}

CheckpointSection checkpoint_section(const CheckpointRunData& d) {
  const SaveResult& s = d.save;
  CheckpointSection out;
  out.state = state_section(d);
  out.config = config_section(d);

  // Per-rank save figures (duration of a rank: open .. fsync returned); the figures over ranks
  // come from checkpoint/rank_totals.hpp.
  CheckpointSaveSection& save = out.save;
  auto empty_rank = [&](size_t i) { return i < d.state.ranks.size() && d.state.ranks[i].bytes == 0; };
  SaveTotals tot;
  for (size_t i = 0; i < s.ranks.size(); ++i) {
    const auto& r = s.ranks[i];
    uint64_t disk = i < d.file_bytes.size() ? d.file_bytes[i] : r.stored_bytes;
    CheckpointSaveRank row;
    row.rank = r.rank;
    row.logical_bytes = r.logical_bytes;
    row.stored_bytes = r.stored_bytes;
    // A failed or interrupted save claims no rate and no size on disk (its files were removed).
    if (s.ok) {
      row.bytes_on_disk = disk;
      row.write_bytes_per_s = rate(r.logical_bytes, r.total_ns);
    }
    row.duration_s = json_sec(r.total_ns);
    row.stage_s = json_sec(r.stage_ns);
    row.compress_s = json_sec(r.compress_ns);
    row.write_wait_s = json_sec(r.write_wait_ns);
    row.fsync_s = json_sec(r.fsync_ns);
    row.written_bytes = r.written_bytes;
    row.chunks_done = r.chunks_done;
    row.chunks_total = r.chunks_total;
    row.direct = r.direct;
    row.zstd_frames = r.frames;
    row.zero_copy_bytes = r.zero_copy_bytes;
    if (r.compress_active_ns > 0)
      // Measured: time inside zstd summed over this rank's workers / the pool's wall time; the
      // workers' XXH3 of pieces and frames.
      row.compression = CheckpointRankCompression{json_sec(r.compress_busy_ns),
                                                  static_cast<double>(r.compress_busy_ns) /
                                                      static_cast<double>(r.compress_active_ns),
                                                  r.compress_workers_used, json_sec(r.checksum_cpu_ns)};
    save.ranks.push_back(std::move(row));
    // Ranks with no state to write (ZeRO-0 beyond DP rank 0, more ranks than state) bound nothing.
    tot.add_rank(r, disk, !empty_rank(i));
  }
  const uint64_t logical = tot.logical_bytes, stored = tot.stored_bytes, on_disk = tot.bytes_on_disk;
  // A save that did not complete (failed or interrupted) claims no rate, ratio or size on disk:
  // those fields are empty; what it did (bytes the kernel completed, elapsed times) stays.
  const double ratio = tot.ratio();
  const int64_t durable = s.ok ? s.durable_ns : 0;
  const double agg = s.ok ? rate(logical, durable) : 0.0;
  save.ok = s.ok;
  save.durable = s.ok && d.opts.fsync;
  save.interrupted = s.interrupted;
  save.durability = s.interrupted   ? "interrupted: not published"
                    : !s.ok         ? "failed: not published"
                    : !d.opts.fsync ? "not durable (page cache)"
                                    : "durable (fsync + rename + directory fsync)";
  save.written_bytes = tot.written_bytes;
  save.durable_bytes = s.ok && d.opts.fsync ? on_disk : 0;
  save.direct = tot.direct();
  save.logical_bytes = logical;
  save.stored_bytes = stored;
  if (s.ok) {
    save.bytes_on_disk = on_disk;
    save.ratio = ratio;
    save.throughput_min_rank_bytes_per_s = tot.min_rank_bytes_per_s;
    save.time_to_durable_s = json_sec(durable);
    save.write_bytes_per_s = agg;
    save.stored_write_bytes_per_s = rate(stored, durable);
  }
  save.duration_max_s = json_sec(tot.duration_max_ns);
  save.time_to_staged_s = json_sec(s.staged_ns);
  save.ranks_done_s = json_sec(s.ranks_done_ns);
  save.publish_s = json_sec(s.publish_ns);
  save.phases_max_over_ranks_s = {json_sec(tot.stage_ns), json_sec(tot.compress_ns), json_sec(tot.write_wait_ns),
                                  json_sec(tot.fsync_ns)};
  save.user_cpu_s = s.user_cpu_s;
  save.sys_cpu_s = s.sys_cpu_s;
  save.cpu_per_wall = s.ranks_done_ns > 0 ? (s.user_cpu_s + s.sys_cpu_s) / json_sec(s.ranks_done_ns) : 0;
  if (tot.workers_used_min >= 0 && tot.ranks > 0)
    save.compression = CheckpointSaveCompression{"ioprobe", d.opts.compress_threads,
                                                 tot.workers_busy_sum / static_cast<double>(tot.ranks),
                                                 tot.workers_used_min, json_sec(tot.checksum_cpu_max_ns)};
  if (!s.failure.empty()) save.failure = s.failure;
  if (d.async) {
    double sum = 0;
    for (double x : s.step_s) sum += x;
    const double mean = s.step_s.empty() ? 0 : sum / static_cast<double>(s.step_s.size());
    save.async = CheckpointSaveAsync{json_sec(s.staged_ns), s.step_s.size(), d.baseline_step_s, mean,
                                     d.baseline_step_s > 0 && mean > 0 ? mean / d.baseline_step_s - 1 : 0};
  }

  CheckpointComparison& cmp = out.comparison;
  if (d.raw) {
    CheckpointRawWrite& rw = out.raw_write;
    rw.available = true;
    rw.bytes = d.raw->bytes;
    rw.duration_max_s = json_sec(d.raw->max_ns);
    rw.write_bytes_per_s = d.raw->bytes_per_s();
    rw.direct = d.raw->direct;
    rw.fsync = true;
    rw.runs_bytes_per_s = d.raw_runs_bytes_per_s;
    rw.settle = "sync + max(1 s, raw duration) idle before and after the save";
    if (!d.raw_after_save_skipped.empty()) rw.after_save_skipped = escape_bytes(d.raw_after_save_skipped);
  } else {
    const std::string why = d.raw_unavailable.empty() ? "no reason recorded" : d.raw_unavailable;
    out.raw_write.reason = escape_bytes(why);
    cmp.reason = escape_bytes("no raw write measured: " + why);
  }
  if (d.raw && !s.ok) {
    cmp.reason = "the save did not complete: no checkpoint rate to compare";
  } else if (d.raw && !d.opts.fsync) {
    // A save into the page cache is not comparable with a durable raw write, and must not drive
    // a goal or a bound.
    cmp.reason = "the save was not durable (--fsync false, page cache): not compared with the durable raw write";
  } else if (d.raw) {
    const double raw = d.raw->bytes_per_s();
    cmp.available = true;
    cmp.checkpoint_over_raw = raw > 0 ? agg / raw : 0;
    const std::string small = ratio_size_note(logical, json_sec(durable), d.raw->bytes, json_sec(d.raw->max_ns));
    cmp.ratio_meaningful = small.empty();
    if (!small.empty()) cmp.ratio_note = small;
    // ioprobe's design targets: uncompressed >= 90% of raw; compressed >= 90% of
    // min(raw x ratio, cores x single-thread zstd speed), all measured in this run.
    if (!d.opts.compress.enabled) {
      cmp.goal_bytes_per_s = 0.9 * raw;
      cmp.limit_bytes_per_s = raw;
      cmp.bound = "write";
    } else if (d.zstd_probe && d.zstd_probe->bytes_per_s > 0) {
      const int cores = compression_cores(d);
      const double cpu_limit = cores * d.zstd_probe->bytes_per_s;
      const double io_limit = raw * ratio;
      const double limit = std::min(cpu_limit, io_limit);
      cmp.cores = cores;
      cmp.zstd_single_thread_bytes_per_s = d.zstd_probe->bytes_per_s;
      cmp.cpu_limit_bytes_per_s = cpu_limit;
      cmp.write_limit_bytes_per_s = io_limit;
      cmp.limit_bytes_per_s = limit;
      cmp.goal_bytes_per_s = 0.9 * limit;
      cmp.bound = cpu_limit < io_limit ? "compression" : "write";
      if (d.zstd_mt_probe) {
        // What zstd's own multithreading reaches in memory on this machine (no I/O at all):
        // below cores x single-thread when the CPUs are shared (SMT siblings, a busy host).
        cmp.zstd_multithread_in_memory_bytes_per_s = d.zstd_mt_probe->bytes_per_s;
        cmp.checkpoint_over_zstd_multithread = d.zstd_mt_probe->bytes_per_s > 0 ? agg / d.zstd_mt_probe->bytes_per_s
                                                                                : 0;
      }
      if (d.pool_probe) {
        // The same sample and cores with ioprobe's own threads (a zstd frame per 4 MiB piece):
        // the figure that decides which pool is the default (docs/benchmarks/checkpoint.md).
        cmp.ioprobe_pool_in_memory_bytes_per_s = d.pool_probe->bytes_per_s;
        cmp.compress_pool = d.opts.compress_pool == CompressPool::kZstd ? "zstd" : "ioprobe";
      }
      // That limit assumes `cores` compress `cores` times as fast as one. Where they do
      // not (shared vCPUs, SMT siblings), the pool this save used, measured on all its cores in
      // memory, is the CPU limit the machine really has; reported beside the nominal one, never instead.
      const std::optional<ZstdProbe>& used = d.opts.compress_pool == CompressPool::kZstd ? d.zstd_mt_probe
                                                                                         : d.pool_probe;
      if (used && used->bytes_per_s > 0) {
        const double measured = std::min(used->bytes_per_s, io_limit);
        cmp.measured_cpu_limit_bytes_per_s = used->bytes_per_s;
        cmp.cores_speedup_measured = used->bytes_per_s / d.zstd_probe->bytes_per_s;
        cmp.measured_limit_bytes_per_s = measured;
        cmp.checkpoint_over_measured_limit = agg / measured;
      }
    }
    if (cmp.limit_bytes_per_s && *cmp.limit_bytes_per_s > 0) cmp.checkpoint_over_limit = agg / *cmp.limit_bytes_per_s;
  }
  if (d.restore) {
    const RestoreResult& r = *d.restore;
    CheckpointRestoreSection rs;
    RestoreTotals rt;
    for (size_t i = 0; i < r.ranks.size(); ++i) {
      const auto& x = r.ranks[i];
      rs.ranks.push_back(restore_rank_row(x));
      rt.add_rank(x, !empty_rank(i));
    }
    const bool rdirect = rt.direct();
    // On tmpfs or ramfs the files are the page cache: DONTNEED cannot evict them, every read is from RAM.
    rs.cache = !d.target_memory_fs.empty()
                   ? "in memory (" + d.target_memory_fs + ": the files live in RAM, no cold read is possible)"
               : !d.restore_cold ? "warm (buffered reads of what the page cache holds; nothing dropped before reading)"
               : rdirect         ? "cold (O_DIRECT io_uring reads; fdatasync + posix_fadvise DONTNEED before reading)"
                                 : "cold (fdatasync + posix_fadvise DONTNEED before reading; buffered reads)";
    rs.ok = r.ok;
    rs.interrupted = r.interrupted;
    rs.direct = rdirect;
    rs.logical_bytes = rt.logical_bytes;
    rs.duration_max_s = json_sec(rt.duration_max_ns);
    rs.restore_bytes_per_s = rt.bytes_per_s();
    rs.throughput_min_rank_bytes_per_s = rt.min_rank_bytes_per_s;
    rs.decode_threads_per_rank = rt.decode_threads_max;  // 0: every shard decoded on its rank's thread
    if (!rt.first_error.empty()) rs.error = rt.first_error;
    out.restore = std::move(rs);
  }
  return out;
}

}  // namespace ioprobe
