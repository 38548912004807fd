// The restore section (a save's checkpoint.restore, and a --restore-only read-back's) and a
// read-back's checkpoint section (report/checkpoint_document.hpp CheckpointRestoreSection,
// CheckpointReadbackSection) as JSON both ways: written with the keys of
// report/checkpoint_document.hpp and report/checkpoint_readback.hpp, read back strictly
// (core/json_field.hpp), naming the field's path in its errors.
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "report/checkpoint_document.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

json verify_section_json(const CheckpointVerifySection& v) {
  json ranks = json::array();
  for (const auto& x : v.ranks)
    ranks.push_back({{"path", x.path},
                     {"stored_bytes", x.stored_bytes},
                     {"chunks_verified", x.chunks_verified},
                     {"chunks_total", x.chunks_total},
                     {"duration_s", x.duration_s},
                     {"read_s", x.read_s},
                     {"hash_s", x.hash_s},
                     {"direct", x.direct}});
  json j = {{"ok", v.ok},
            {"interrupted", v.interrupted},
            {"cache", v.cache},
            {"direct", v.direct},
            {"stored_bytes", v.stored_bytes},
            {"chunks_verified", v.chunks_verified},
            {"chunks_total", v.chunks_total},
            {"duration_max_s", v.duration_max_s},
            {"verify_bytes_per_s", v.verify_bytes_per_s},
            {"ranks", ranks}};
  put_checkpoint_error(j, "error", v.error);
  return j;
}

CheckpointVerifySection verify_section_from_json(const json& j, const std::string& w) {
  CheckpointVerifySection v;
  v.ok = json_field<bool>(j, "ok", w);
  v.interrupted = json_field<bool>(j, "interrupted", w);
  v.cache = json_field<std::string>(j, "cache", w);
  v.direct = json_field<bool>(j, "direct", w);
  v.stored_bytes = json_field<uint64_t>(j, "stored_bytes", w);
  v.chunks_verified = json_field<uint64_t>(j, "chunks_verified", w);
  v.chunks_total = json_field<uint64_t>(j, "chunks_total", w);
  v.duration_max_s = json_field<double>(j, "duration_max_s", w);
  v.verify_bytes_per_s = json_field<double>(j, "verify_bytes_per_s", w);
  const json& ranks = json_array_at(j, "ranks", w);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const json& x = ranks[i];
    const std::string xw = json_path(json_path(w, "ranks"), i);
    v.ranks.push_back({json_field<std::string>(x, "path", xw), json_field<uint64_t>(x, "stored_bytes", xw),
                       json_field<uint64_t>(x, "chunks_verified", xw), json_field<uint64_t>(x, "chunks_total", xw),
                       json_field<double>(x, "duration_s", xw), json_field<double>(x, "read_s", xw),
                       json_field<double>(x, "hash_s", xw), json_field<bool>(x, "direct", xw)});
  }
  v.error = checkpoint_error_from_json(j, "error", w);
  return v;
}

}  // namespace

json checkpoint_restore_json(const CheckpointRestoreSection& r) {
  json ranks = json::array();
  for (const auto& x : r.ranks) {
    json row = {{"path", x.path},
                {"logical_bytes", x.logical_bytes},
                {"stored_bytes", x.stored_bytes},
                {"duration_s", x.duration_s},
                {"read_s", x.read_s},
                {"decompress_s", x.decompress_s},
                {"restore_bytes_per_s", x.restore_bytes_per_s},
                {"chunks_verified", x.chunks_verified},
                {"chunks_total", x.chunks_total},
                {"direct", x.direct},
                {"decode_threads", x.decode_threads},
                {"decode_wait_s", x.decode_wait_s}};
    if (x.shard_rank) row["shard_rank"] = *x.shard_rank;
    if (x.read_on_host) row["read_on_host"] = *x.read_on_host;
    if (x.written_on_host) row["written_on_host"] = *x.written_on_host;
    ranks.push_back(std::move(row));
  }
  json j = {{"ok", r.ok},
            {"interrupted", r.interrupted},
            {"cache", r.cache},
            {"direct", r.direct},
            {"logical_bytes", r.logical_bytes},
            {"duration_max_s", r.duration_max_s},
            {"restore_bytes_per_s", r.restore_bytes_per_s},
            {"throughput_min_rank_bytes_per_s", r.throughput_min_rank_bytes_per_s},
            {"decode_threads_per_rank", r.decode_threads_per_rank},
            {"ranks", ranks}};
  put_checkpoint_error(j, "error", r.error);
  if (r.device_io) j["device_io"] = device_io_section_json(*r.device_io);
  if (r.served_from) j["served_from"] = *r.served_from;
  return j;
}

CheckpointRestoreSection checkpoint_restore_from_json(const json& j, const std::string& w) {
  CheckpointRestoreSection r;
  r.ok = json_field<bool>(j, "ok", w);
  r.interrupted = json_field<bool>(j, "interrupted", w);
  r.cache = json_field<std::string>(j, "cache", w);
  r.direct = json_field<bool>(j, "direct", w);
  r.logical_bytes = json_field<uint64_t>(j, "logical_bytes", w);
  r.duration_max_s = json_field<double>(j, "duration_max_s", w);
  r.restore_bytes_per_s = json_field<double>(j, "restore_bytes_per_s", w);
  r.throughput_min_rank_bytes_per_s = json_field<double>(j, "throughput_min_rank_bytes_per_s", w);
  r.decode_threads_per_rank = json_field<int>(j, "decode_threads_per_rank", w);
  const json& ranks = json_array_at(j, "ranks", w);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const json& x = ranks[i];
    const std::string xw = json_path(json_path(w, "ranks"), i);
    CheckpointRestoreRank k;
    k.path = json_field<std::string>(x, "path", xw);
    k.logical_bytes = json_field<uint64_t>(x, "logical_bytes", xw);
    k.stored_bytes = json_field<uint64_t>(x, "stored_bytes", xw);
    k.duration_s = json_field<double>(x, "duration_s", xw);
    k.read_s = json_field<double>(x, "read_s", xw);
    k.decompress_s = json_field<double>(x, "decompress_s", xw);
    k.restore_bytes_per_s = json_field<double>(x, "restore_bytes_per_s", xw);
    k.chunks_verified = json_field<uint64_t>(x, "chunks_verified", xw);
    k.chunks_total = json_field<uint64_t>(x, "chunks_total", xw);
    k.direct = json_field<bool>(x, "direct", xw);
    k.decode_threads = json_field<int>(x, "decode_threads", xw);
    k.decode_wait_s = json_field<double>(x, "decode_wait_s", xw);
    // Across hosts only.
    if (x.contains("shard_rank")) k.shard_rank = json_field<int>(x, "shard_rank", xw);
    if (x.contains("read_on_host")) k.read_on_host = json_field<std::string>(x, "read_on_host", xw);
    if (x.contains("written_on_host")) k.written_on_host = json_field<std::string>(x, "written_on_host", xw);
    r.ranks.push_back(std::move(k));
  }
  r.error = checkpoint_error_from_json(j, "error", w);
  if (j.contains("device_io"))  // written when the restore's devices were accounted
    r.device_io = device_io_section_from_json(j["device_io"], json_path(w, "device_io"));
  if (j.contains("served_from")) r.served_from = json_field<std::string>(j, "served_from", w);
  return r;
}

json checkpoint_readback_section_json(const CheckpointReadbackSection& r) {
  json shards = json::array();
  for (const auto& s : r.shards)
    shards.push_back({{"path", s.path},
                      {"rank", s.rank},
                      {"format_version", s.format_version},
                      {"codec", s.codec},
                      {"chunks", s.chunks},
                      {"logical_bytes", s.logical_bytes},
                      {"file_bytes", s.file_bytes}});
  json j = {{"mode", r.mode}, {"dir", r.dir}, {"checks", r.checks}, {"shards", shards}, {"elapsed_s", r.elapsed_s}};
  if (r.restore) j["restore"] = checkpoint_restore_json(*r.restore);
  if (r.verify) j["verify"] = verify_section_json(*r.verify);
  return j;
}

CheckpointReadbackSection checkpoint_readback_section_from_json(const json& j, const std::string& w) {
  CheckpointReadbackSection r;
  r.mode = json_field<std::string>(j, "mode", w);
  if (r.mode != "restore-only" && r.mode != "verify-only")
    throw UsageError(
        fmt::format("{}.mode: '{}' is not a read-back's ('restore-only' or 'verify-only')", w, escape_bytes(r.mode)));
  r.dir = json_field<std::string>(j, "dir", w);
  r.checks = json_field<std::string>(j, "checks", w);
  const json& shards = json_array_at(j, "shards", w);
  for (size_t i = 0; i < shards.size(); ++i) {
    const json& s = shards[i];
    const std::string sw = json_path(json_path(w, "shards"), i);
    r.shards.push_back({json_field<std::string>(s, "path", sw), json_field<int>(s, "rank", sw),
                        json_field<uint64_t>(s, "format_version", sw), json_field<std::string>(s, "codec", sw),
                        json_field<uint64_t>(s, "chunks", sw), json_field<uint64_t>(s, "logical_bytes", sw),
                        json_field<uint64_t>(s, "file_bytes", sw)});
  }
  // The mode says which part the read-back wrote; that part must be there.
  if (r.mode == "restore-only")
    r.restore = checkpoint_restore_from_json(json_at(j, "restore", w), json_path(w, "restore"));
  else r.verify = verify_section_from_json(json_at(j, "verify", w), json_path(w, "verify"));
  r.elapsed_s = json_field<double>(j, "elapsed_s", w);
  return r;
}

}  // namespace ioprobe
