#include "report/checkpoint_readback.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "checkpoint/rank_totals.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "report/error_text.hpp"

namespace ioprobe {

using nlohmann::json;
using namespace checkpoint;

namespace {

double readback_sec(int64_t ns) { return ns / 1e9; }

std::string readback_cache(const ReadbackRun& run, bool direct) {
  if (!run.memory_fs.empty())
    return "in memory (" + run.memory_fs + ": the files live in RAM, no cold read is possible)";
  if (!run.cold) return "warm (buffered reads of what the page cache holds; nothing dropped before reading)";
  return direct ? "cold (O_DIRECT io_uring reads; posix_fadvise DONTNEED before reading)"
                : "cold (posix_fadvise DONTNEED before reading; buffered reads)";
}

CheckpointRestoreSection restore_part(const ReadbackRun& run) {
  const RestoreResult& r = run.result;
  CheckpointRestoreSection o;
  RestoreTotals rt;
  for (const auto& x : r.ranks) {
    o.ranks.push_back(restore_rank_row(x));
    rt.add_rank(x, true);
  }
  o.ok = r.ok;
  o.interrupted = r.interrupted;
  o.cache = readback_cache(run, rt.direct());
  o.direct = rt.direct();
  o.logical_bytes = rt.logical_bytes;
  o.duration_max_s = readback_sec(rt.duration_max_ns);
  o.restore_bytes_per_s = rt.bytes_per_s();
  o.throughput_min_rank_bytes_per_s = rt.min_rank_bytes_per_s;
  o.decode_threads_per_rank = rt.decode_threads_max;
  if (!rt.first_error.empty()) o.error = rt.first_error;
  return o;
}

CheckpointVerifySection verify_part(const ReadbackRun& run) {
  const RestoreResult& r = run.result;
  CheckpointVerifySection v;
  int64_t slowest = 0;
  bool direct = !r.ranks.empty();
  ErrorRecord error;
  for (const auto& x : r.ranks) {
    v.ranks.push_back({escape_bytes(x.path), x.stored_bytes, x.chunks_verified, x.chunks_total,
                       readback_sec(x.total_ns), readback_sec(x.read_ns), readback_sec(x.decompress_ns), x.direct});
    v.stored_bytes += x.stored_bytes;
    v.chunks_verified += x.chunks_verified;
    v.chunks_total += x.chunks_total;
    slowest = std::max(slowest, x.total_ns);
    direct = direct && x.direct;
    if (error.empty()) error = x.error;
  }
  v.ok = r.ok;
  v.interrupted = r.interrupted;
  v.cache = readback_cache(run, direct);
  v.direct = direct;
  v.duration_max_s = readback_sec(slowest);
  v.verify_bytes_per_s = rate_bytes_per_s(v.stored_bytes, slowest);
  if (!error.empty()) v.error = error;
  return v;
}

}  // namespace

CheckpointReadbackSection checkpoint_readback_section(const ReadbackRun& run) {
  const bool verify = run.mode == RestoreMode::kVerifyStored;
  CheckpointReadbackSection out;
  for (const auto& s : run.shards)
    out.shards.push_back({escape_bytes(s.path), s.rank, s.trailer.version, s.trailer.codec == 1 ? "zstd" : "none",
                          s.trailer.chunk_count, s.trailer.logical_bytes, s.file_bytes});
  out.mode = verify ? "verify-only" : "restore-only";
  out.dir = escape_bytes(run.dir);
  out.checks = verify ? "the stored bytes' xxh3 of every chunk, against the shard's index; nothing "
                        "decompressed, so the logical checksum is not checked"
                      : "the stored and the logical (decompressed) xxh3 of every chunk, against the shard's "
                        "index";
  if (verify) out.verify = verify_part(run);
  else out.restore = restore_part(run);
  return out;
}

std::string render_checkpoint_readback_text(const CheckpointDocument& doc) {
  const CheckpointReadbackSection& c = *doc.readback;
  const TargetSection& tg = doc.target;
  std::string o;
  if (doc.partial) o += fmt::format("*** INTERRUPTED after {:.1f} s: partial result ***\n", c.elapsed_s);
  uint64_t logical = 0, on_disk = 0;
  std::string codecs, versions;
  for (const auto& s : c.shards) {
    logical += s.logical_bytes;
    on_disk += s.file_bytes;
    const std::string version = std::to_string(s.format_version);
    if (codecs.find(s.codec) == std::string::npos) codecs += (codecs.empty() ? "" : ", ") + s.codec;
    if (versions.find(version) == std::string::npos) versions += (versions.empty() ? "" : ", ") + version;
  }
  o += fmt::format("ioprobe checkpoint {}: {}\n", c.mode, c.dir);
  o += fmt::format("  target      {} ({}{})\n", tg.path, tg.fs_type, tg.device.empty() ? "" : ", " + tg.device);
  o += fmt::format("  shards      {} file(s), {} logical, {} on disk; format version {}; compression {}\n",
                   c.shards.size(), format_bytes(logical), format_bytes(on_disk), versions, codecs);
  o += "  checks      " + c.checks + "\n";
  if (const auto& r = c.restore) {
    uint64_t verified = 0, total = 0;
    for (const auto& x : r->ranks) {
      verified += x.chunks_verified;
      total += x.chunks_total;
    }
    o += fmt::format("\nrestore, {}: {} verified in {:.3f} s = {}; min over ranks {}\n", r->cache,
                     format_bytes(r->logical_bytes), r->duration_max_s, format_rate(r->restore_bytes_per_s),
                     format_rate(r->throughput_min_rank_bytes_per_s));
    o += fmt::format("  chunks      {} of {} verified\n", format_count(verified), format_count(total));
    const int decoders = r->decode_threads_per_rank;
    o += decoders > 0 ? fmt::format("  decoding    {} decompression worker(s) per rank, reading on the rank's thread\n",
                                    decoders)
                      : "  decoding    on each rank's thread\n";
    for (const auto& x : r->ranks)
      o += fmt::format("  shard       {}: {} in {:.3f} s = {} (waiting for reads {:.3f} s, decoding {:.3f} s)\n",
                       x.path, format_bytes(x.logical_bytes), x.duration_s, format_rate(x.restore_bytes_per_s),
                       x.read_s, x.decompress_s);
    if (r->interrupted) o += "  INTERRUPTED: the figures cover the chunks verified before the stop\n";
    if (r->error) o += failure_lines("  RESTORE FAILED: ", *r->error, "  ");
  }
  if (const auto& v = c.verify) {
    o += fmt::format("\nverify, {}: {} of {} chunks, {} stored bytes checked in {:.3f} s = {} (read and hashed)\n",
                     v->cache, format_count(v->chunks_verified), format_count(v->chunks_total),
                     format_bytes(v->stored_bytes), v->duration_max_s, format_rate(v->verify_bytes_per_s));
    for (const auto& x : v->ranks)
      o += fmt::format("  shard       {}: {} in {:.3f} s (waiting for reads {:.3f} s, hashing {:.3f} s)\n", x.path,
                       format_bytes(x.stored_bytes), x.duration_s, x.read_s, x.hash_s);
    if (v->interrupted) o += "  INTERRUPTED: the figures cover the chunks verified before the stop\n";
    if (v->error) o += failure_lines("  VERIFY FAILED: ", *v->error, "  ");
  }
  for (const auto& w : doc.warnings) o += "warning: " + w + "\n";
  return o;
}

}  // namespace ioprobe
