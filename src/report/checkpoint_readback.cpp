#include "report/checkpoint_readback.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "checkpoint/rank_totals.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

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

json restore_part(const ReadbackRun& run) {
  const RestoreResult& r = run.result;
  json rr = json::array();
  RestoreTotals rt;
  for (const auto& x : r.ranks) {
    rr.push_back({{"path", escape_bytes(x.path)},
                  {"logical_bytes", x.logical_bytes},
                  {"stored_bytes", x.stored_bytes},
                  {"duration_s", readback_sec(x.total_ns)},
                  {"read_s", readback_sec(x.read_ns)},
                  {"decompress_s", readback_sec(x.decompress_ns)},
                  {"restore_bytes_per_s", rate_bytes_per_s(x.logical_bytes, x.total_ns)},
                  {"chunks_verified", x.chunks_verified},
                  {"chunks_total", x.chunks_total},
                  {"direct", x.direct},
                  {"decode_threads", x.decode_threads},
                  {"decode_wait_s", readback_sec(x.decode_wait_ns)}});
    rt.add_rank(x, true);
  }
  json rj = {{"ok", r.ok},
             {"interrupted", r.interrupted},
             {"cache", readback_cache(run, rt.direct())},
             {"direct", rt.direct()},
             {"logical_bytes", rt.logical_bytes},
             {"duration_max_s", readback_sec(rt.duration_max_ns)},
             {"restore_bytes_per_s", rt.bytes_per_s()},
             {"throughput_min_rank_bytes_per_s", rt.min_rank_bytes_per_s},
             {"decode_threads_per_rank", rt.decode_threads_max},
             {"ranks", rr}};
  if (!rt.first_error.empty()) rj["error"] = escape_bytes(rt.first_error);
  return rj;
}

json verify_part(const ReadbackRun& run) {
  const RestoreResult& r = run.result;
  json rr = json::array();
  uint64_t stored = 0, verified = 0, total = 0;
  int64_t slowest = 0;
  bool direct = !r.ranks.empty();
  std::string error;
  for (const auto& x : r.ranks) {
    rr.push_back({{"path", escape_bytes(x.path)},
                  {"stored_bytes", x.stored_bytes},
                  {"chunks_verified", x.chunks_verified},
                  {"chunks_total", x.chunks_total},
                  {"duration_s", readback_sec(x.total_ns)},
                  {"read_s", readback_sec(x.read_ns)},
                  {"hash_s", readback_sec(x.decompress_ns)},
                  {"direct", x.direct}});
    stored += x.stored_bytes;
    verified += x.chunks_verified;
    total += x.chunks_total;
    slowest = std::max(slowest, x.total_ns);
    direct = direct && x.direct;
    if (error.empty()) error = x.error;
  }
  json v = {{"ok", r.ok},
            {"interrupted", r.interrupted},
            {"cache", readback_cache(run, direct)},
            {"direct", direct},
            {"stored_bytes", stored},
            {"chunks_verified", verified},
            {"chunks_total", total},
            {"duration_max_s", readback_sec(slowest)},
            {"verify_bytes_per_s", rate_bytes_per_s(stored, slowest)},
            {"ranks", rr}};
  if (!error.empty()) v["error"] = escape_bytes(error);
  return v;
}

std::string readback_rate(const json& v) { return format_rate(v.get<double>()); }
std::string readback_bytes(const json& v) { return format_bytes(v.get<uint64_t>()); }

}  // namespace

json checkpoint_readback_json(const ReadbackRun& run) {
  const bool verify = run.mode == RestoreMode::kVerifyStored;
  json shards = json::array();
  for (const auto& s : run.shards)
    shards.push_back({{"path", escape_bytes(s.path)},
                      {"rank", s.rank},
                      {"format_version", s.trailer.version},
                      {"codec", s.trailer.codec == 1 ? "zstd" : "none"},
                      {"chunks", s.trailer.chunk_count},
                      {"logical_bytes", s.trailer.logical_bytes},
                      {"file_bytes", s.file_bytes}});
  json out = {{"mode", verify ? "verify-only" : "restore-only"},
              {"dir", escape_bytes(run.dir)},
              {"checks", verify ? "the stored bytes' xxh3 of every chunk, against the shard's index; nothing "
                                  "decompressed, so the logical checksum is not checked"
                                : "the stored and the logical (decompressed) xxh3 of every chunk, against the shard's "
                                  "index"},
              {"shards", shards}};
  out[verify ? "verify" : "restore"] = verify ? verify_part(run) : restore_part(run);
  return out;
}

bool is_checkpoint_readback(const json& doc) {
  return doc.contains("checkpoint") && doc.at("checkpoint").contains("mode") &&
         doc.at("checkpoint").at("mode") != "save";
}

std::string render_checkpoint_readback_text(const json& doc) {
  const json& c = doc.at("checkpoint");
  const json& tg = doc.value("target", json::object());
  const std::string mode = c.at("mode").get<std::string>();
  std::string o;
  if (doc.value("partial", false))
    o += fmt::format("*** INTERRUPTED after {:.1f} s: partial result ***\n", c.value("elapsed_s", 0.0));
  uint64_t logical = 0, on_disk = 0;
  std::string codecs, versions;
  for (const auto& s : c.at("shards")) {
    logical += s.at("logical_bytes").get<uint64_t>();
    on_disk += s.at("file_bytes").get<uint64_t>();
    const std::string codec = s.at("codec").get<std::string>();
    const std::string version = std::to_string(s.at("format_version").get<int>());
    if (codecs.find(codec) == std::string::npos) codecs += (codecs.empty() ? "" : ", ") + codec;
    if (versions.find(version) == std::string::npos) versions += (versions.empty() ? "" : ", ") + version;
  }
  o += fmt::format("ioprobe checkpoint {}: {}\n", mode, c.at("dir").get<std::string>());
  o += fmt::format("  target      {} ({}{})\n", tg.value("path", "?"), tg.value("fs_type", "?"),
                   tg.value("device", "").empty() ? "" : ", " + tg.value("device", ""));
  o += fmt::format("  shards      {} file(s), {} logical, {} on disk; format version {}; compression {}\n",
                   c.at("shards").size(), format_bytes(logical), format_bytes(on_disk), versions, codecs);
  o += "  checks      " + c.at("checks").get<std::string>() + "\n";
  if (c.contains("restore")) {
    const json& r = c.at("restore");
    uint64_t verified = 0, total = 0;
    for (const auto& x : r.at("ranks")) {
      verified += x.at("chunks_verified").get<uint64_t>();
      total += x.at("chunks_total").get<uint64_t>();
    }
    o += fmt::format("\nrestore, {}: {} verified in {:.3f} s = {}; min over ranks {}\n",
                     r.at("cache").get<std::string>(), readback_bytes(r.at("logical_bytes")),
                     r.at("duration_max_s").get<double>(), readback_rate(r.at("restore_bytes_per_s")),
                     readback_rate(r.at("throughput_min_rank_bytes_per_s")));
    o += fmt::format("  chunks      {} of {} verified\n", format_count(verified), format_count(total));
    const int decoders = r.value("decode_threads_per_rank", 0);
    o += decoders > 0 ? fmt::format("  decoding    {} decompression worker(s) per rank, reading on the rank's thread\n",
                                    decoders)
                      : "  decoding    on each rank's thread\n";
    for (const auto& x : r.at("ranks"))
      o += fmt::format("  shard       {}: {} in {:.3f} s = {} (waiting for reads {:.3f} s, decoding {:.3f} s)\n",
                       x.at("path").get<std::string>(), readback_bytes(x.at("logical_bytes")),
                       x.at("duration_s").get<double>(), readback_rate(x.at("restore_bytes_per_s")),
                       x.at("read_s").get<double>(), x.at("decompress_s").get<double>());
    if (r.value("interrupted", false)) o += "  INTERRUPTED: the figures cover the chunks verified before the stop\n";
    if (r.contains("error")) o += "  RESTORE FAILED: " + r.at("error").get<std::string>() + "\n";
  }
  if (c.contains("verify")) {
    const json& v = c.at("verify");
    o += fmt::format("\nverify, {}: {} of {} chunks, {} stored bytes checked in {:.3f} s = {} (read and hashed)\n",
                     v.at("cache").get<std::string>(), format_count(v.at("chunks_verified").get<uint64_t>()),
                     format_count(v.at("chunks_total").get<uint64_t>()), readback_bytes(v.at("stored_bytes")),
                     v.at("duration_max_s").get<double>(), readback_rate(v.at("verify_bytes_per_s")));
    for (const auto& x : v.at("ranks"))
      o += fmt::format("  shard       {}: {} in {:.3f} s (waiting for reads {:.3f} s, hashing {:.3f} s)\n",
                       x.at("path").get<std::string>(), readback_bytes(x.at("stored_bytes")),
                       x.at("duration_s").get<double>(), x.at("read_s").get<double>(), x.at("hash_s").get<double>());
    if (v.value("interrupted", false)) o += "  INTERRUPTED: the figures cover the chunks verified before the stop\n";
    if (v.contains("error")) o += "  VERIFY FAILED: " + v.at("error").get<std::string>() + "\n";
  }
  for (const auto& w : doc.value("warnings", json::array())) o += "warning: " + w.get<std::string>() + "\n";
  return o;
}

}  // namespace ioprobe
