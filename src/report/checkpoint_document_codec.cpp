// The checkpoint document's JSON: checkpoint_document_json writes the keys of
// report/checkpoint_document.hpp; checkpoint_document_from_json reads them back strictly
// (core/json_field.hpp), naming the field's path in its errors.
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/json_text_value.hpp"
#include "core/text.hpp"
#include "report/checkpoint_document.hpp"
#include "report/device_io_report.hpp"
#include "report/document.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

// A value or null.
template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}
// j[key] set only when `v` holds a value.
template <class T>
void put_if(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

// j[key] as T, or empty when it is null (the key must be there).
template <class T>
std::optional<T> ckpt_nullable(const json& j, const char* key, const std::string& where) {
  const json& v = json_at(j, key, where);
  if (v.is_null()) return std::nullopt;
  return json_as<T>(v, json_path(where, key));
}
// j[key] as T when present (a key only some cases write), empty when absent.
template <class T>
std::optional<T> ckpt_optional(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) return std::nullopt;
  return json_field<T>(j, key, where);
}

json state_json(const CheckpointStateSection& s) {
  json ranks = json::array();
  for (const auto& r : s.ranks) {
    json regs = json::array();
    for (const auto& g : r.regions) regs.push_back({{"kind", g.kind}, {"bytes", g.bytes}});
    ranks.push_back({{"rank", r.rank}, {"bytes", r.bytes}, {"regions", regs}});
  }
  return {{"source", s.source},
          {"params", or_null(s.params)},
          {"bytes_per_param", s.bytes_per_param},
          {"tp", s.tp},
          {"pp", s.pp},
          {"dp", s.dp},
          {"zero_stage", s.zero_stage},
          {"world_size", s.world_size},
          {"world_bytes", s.world_bytes},
          {"host_bytes", s.host_bytes},
          {"ranks_on_host", s.ranks_on_host},
          {"resident_bytes", s.resident_bytes},
          {"resident_huge_page_bytes", s.resident_huge_page_bytes},
          {"resident_cyclic", s.resident_cyclic},
          {"ranks", ranks},
          {"content", s.content}};
}

CheckpointStateSection state_from_json(const json& j, const std::string& w) {
  CheckpointStateSection s;
  s.source = json_field<std::string>(j, "source", w);
  s.params = ckpt_nullable<double>(j, "params", w);
  s.bytes_per_param = json_field<uint64_t>(j, "bytes_per_param", w);
  s.tp = json_field<int>(j, "tp", w);
  s.pp = json_field<int>(j, "pp", w);
  s.dp = json_field<int>(j, "dp", w);
  s.zero_stage = json_field<int>(j, "zero_stage", w);
  s.world_size = json_field<int>(j, "world_size", w);
  s.world_bytes = json_field<uint64_t>(j, "world_bytes", w);
  s.host_bytes = json_field<uint64_t>(j, "host_bytes", w);
  s.ranks_on_host = json_field<uint64_t>(j, "ranks_on_host", w);
  s.resident_bytes = json_field<uint64_t>(j, "resident_bytes", w);
  s.resident_huge_page_bytes = json_field<uint64_t>(j, "resident_huge_page_bytes", w);
  s.resident_cyclic = json_field<bool>(j, "resident_cyclic", w);
  s.content = json_field<std::string>(j, "content", w);
  const json& ranks = json_array_at(j, "ranks", w);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::string rw = json_path(json_path(w, "ranks"), i);
    CheckpointStateRank r;
    r.rank = json_field<int>(ranks[i], "rank", rw);
    r.bytes = json_field<uint64_t>(ranks[i], "bytes", rw);
    const json& regs = json_array_at(ranks[i], "regions", rw);
    for (size_t k = 0; k < regs.size(); ++k) {
      const std::string gw = json_path(json_path(rw, "regions"), k);
      r.regions.push_back({json_field<std::string>(regs[k], "kind", gw), json_field<uint64_t>(regs[k], "bytes", gw)});
    }
    s.ranks.push_back(std::move(r));
  }
  return s;
}

json config_json(const CheckpointConfigSection& c) {
  json j = {{"dir", c.dir},
            {"chunk_bytes", c.chunk_bytes},
            {"compress", c.compress},
            {"compress_pool", c.compress_pool},
            {"compress_threads_per_rank", c.compress_threads_per_rank},
            {"byte_group", c.byte_group},
            {"fsync", c.fsync},
            {"io_bytes", c.io_bytes},
            {"io_depth", c.io_depth},
            {"direct_requested", c.direct_requested},
            {"flush_every_bytes", c.flush_every_bytes},
            {"async", c.async},
            {"step_time_s", c.step_time_s},
            {"zstd_job_bytes", c.zstd_job_bytes},
            {"zstd_workers_busy_per_chunk", c.zstd_workers_busy_per_chunk}};
  put_if(j, "huge_pages", c.huge_pages);
  put_if(j, "frame_bytes", c.frame_bytes);
  return j;
}

CheckpointConfigSection config_from_json(const json& j, const std::string& w) {
  CheckpointConfigSection c;
  c.dir = json_field<std::string>(j, "dir", w);
  c.chunk_bytes = json_field<uint64_t>(j, "chunk_bytes", w);
  c.compress = json_field<std::string>(j, "compress", w);
  c.compress_pool = json_field<std::string>(j, "compress_pool", w);
  c.compress_threads_per_rank = json_field<int>(j, "compress_threads_per_rank", w);
  c.byte_group = json_field<bool>(j, "byte_group", w);
  c.fsync = json_field<bool>(j, "fsync", w);
  c.io_bytes = json_field<uint64_t>(j, "io_bytes", w);
  c.io_depth = json_field<uint64_t>(j, "io_depth", w);
  c.direct_requested = json_field<bool>(j, "direct_requested", w);
  c.huge_pages = ckpt_optional<bool>(j, "huge_pages", w);  // absent from documents before --huge-pages
  c.flush_every_bytes = json_field<uint64_t>(j, "flush_every_bytes", w);
  c.async = json_field<bool>(j, "async", w);
  c.step_time_s = json_field<double>(j, "step_time_s", w);
  c.zstd_job_bytes = json_field<uint64_t>(j, "zstd_job_bytes", w);
  c.zstd_workers_busy_per_chunk = json_field<int>(j, "zstd_workers_busy_per_chunk", w);
  c.frame_bytes = ckpt_optional<uint64_t>(j, "frame_bytes", w);
  return c;
}

json save_rank_json(const CheckpointSaveRank& r) {
  json j = {{"rank", r.rank},
            {"logical_bytes", r.logical_bytes},
            {"stored_bytes", r.stored_bytes},
            {"bytes_on_disk", or_null(r.bytes_on_disk)},
            {"duration_s", r.duration_s},
            {"write_bytes_per_s", or_null(r.write_bytes_per_s)},
            {"stage_s", r.stage_s},
            {"compress_s", r.compress_s},
            {"write_wait_s", r.write_wait_s},
            {"fsync_s", r.fsync_s},
            {"written_bytes", r.written_bytes},
            {"chunks_done", r.chunks_done},
            {"chunks_total", r.chunks_total},
            {"direct", r.direct},
            {"zstd_frames", r.zstd_frames},
            {"zero_copy_bytes", r.zero_copy_bytes}};
  if (const auto& z = r.compression) {
    j["compress_busy_s"] = z->busy_s;
    j["compress_workers_busy_mean"] = z->workers_busy_mean;
    j["compress_workers_used"] = z->workers_used;
    j["checksum_cpu_s"] = z->checksum_cpu_s;
  }
  put_if(j, "host", r.host);
  return j;
}

CheckpointSaveRank save_rank_from_json(const json& j, const std::string& w) {
  CheckpointSaveRank r;
  r.rank = json_field<int>(j, "rank", w);
  r.logical_bytes = json_field<uint64_t>(j, "logical_bytes", w);
  r.stored_bytes = json_field<uint64_t>(j, "stored_bytes", w);
  r.bytes_on_disk = ckpt_nullable<uint64_t>(j, "bytes_on_disk", w);
  r.duration_s = json_field<double>(j, "duration_s", w);
  r.write_bytes_per_s = ckpt_nullable<double>(j, "write_bytes_per_s", w);
  r.stage_s = json_field<double>(j, "stage_s", w);
  r.compress_s = json_field<double>(j, "compress_s", w);
  r.write_wait_s = json_field<double>(j, "write_wait_s", w);
  r.fsync_s = json_field<double>(j, "fsync_s", w);
  r.written_bytes = json_field<uint64_t>(j, "written_bytes", w);
  r.chunks_done = json_field<uint64_t>(j, "chunks_done", w);
  r.chunks_total = json_field<uint64_t>(j, "chunks_total", w);
  r.direct = json_field<bool>(j, "direct", w);
  r.zstd_frames = json_field<uint64_t>(j, "zstd_frames", w);
  r.zero_copy_bytes = json_field<uint64_t>(j, "zero_copy_bytes", w);
  if (j.contains("compress_busy_s"))  // only where the rank's workers compressed
    r.compression = CheckpointRankCompression{json_field<double>(j, "compress_busy_s", w),
                                              json_field<double>(j, "compress_workers_busy_mean", w),
                                              json_field<int>(j, "compress_workers_used", w),
                                              json_field<double>(j, "checksum_cpu_s", w)};
  r.host = ckpt_optional<std::string>(j, "host", w);
  return r;
}

json save_json(const CheckpointSaveSection& s) {
  json ranks = json::array();
  for (const auto& r : s.ranks) ranks.push_back(save_rank_json(r));
  const CheckpointPhases& p = s.phases_max_over_ranks_s;
  json j = {{"ok", s.ok},
            {"durable", s.durable},
            {"interrupted", s.interrupted},
            {"durability", s.durability},
            {"written_bytes", s.written_bytes},
            {"durable_bytes", s.durable_bytes},
            {"direct", s.direct},
            {"logical_bytes", s.logical_bytes},
            {"stored_bytes", s.stored_bytes},
            {"bytes_on_disk", or_null(s.bytes_on_disk)},
            {"ratio", or_null(s.ratio)},
            {"duration_max_s", s.duration_max_s},
            {"throughput_min_rank_bytes_per_s", or_null(s.throughput_min_rank_bytes_per_s)},
            {"time_to_staged_s", s.time_to_staged_s},
            {"ranks_done_s", s.ranks_done_s},
            {"publish_s", s.publish_s},
            {"time_to_durable_s", or_null(s.time_to_durable_s)},
            {"write_bytes_per_s", or_null(s.write_bytes_per_s)},
            {"stored_write_bytes_per_s", or_null(s.stored_write_bytes_per_s)},
            {"phases_max_over_ranks_s",
             {{"stage", p.stage}, {"compress", p.compress}, {"write_wait", p.write_wait}, {"fsync", p.fsync}}},
            {"user_cpu_s", s.user_cpu_s},
            {"sys_cpu_s", s.sys_cpu_s},
            {"cpu_per_wall", s.cpu_per_wall},
            {"ranks", ranks}};
  if (const auto& z = s.compression)
    j["compression"] = {{"pool", z->pool},
                        {"workers_per_rank", z->workers_per_rank},
                        {"workers_busy_mean_per_rank", z->workers_busy_mean_per_rank},
                        {"workers_used_min_over_ranks", z->workers_used_min_over_ranks},
                        {"checksum_cpu_s_max_over_ranks", z->checksum_cpu_s_max_over_ranks}};
  put_checkpoint_error(j, "failure", s.failure);
  if (const auto& a = s.async)
    j["async"] = {{"training_blocked_s", a->training_blocked_s},
                  {"steps_during_persistence", a->steps_during_persistence},
                  {"step_baseline_s", a->step_baseline_s},
                  {"step_mean_during_persistence_s", a->step_mean_during_persistence_s},
                  {"step_slowdown", a->step_slowdown}};
  if (const auto& d = s.device_io) {
    j["device_io"] = device_io_section_json(d->section);
    j["device_io"]["logical_bytes"] = d->logical_bytes;
    j["device_io"]["written_over_logical"] = d->written_over_logical ? json(*d->written_over_logical) : json(nullptr);
  }
  return j;
}

CheckpointSaveSection save_from_json(const json& j, const std::string& w) {
  CheckpointSaveSection s;
  s.ok = json_field<bool>(j, "ok", w);
  s.durable = json_field<bool>(j, "durable", w);
  s.interrupted = json_field<bool>(j, "interrupted", w);
  s.durability = json_field<std::string>(j, "durability", w);
  s.written_bytes = json_field<uint64_t>(j, "written_bytes", w);
  s.durable_bytes = json_field<uint64_t>(j, "durable_bytes", w);
  s.direct = json_field<bool>(j, "direct", w);
  s.logical_bytes = json_field<uint64_t>(j, "logical_bytes", w);
  s.stored_bytes = json_field<uint64_t>(j, "stored_bytes", w);
  s.bytes_on_disk = ckpt_nullable<uint64_t>(j, "bytes_on_disk", w);
  s.ratio = ckpt_nullable<double>(j, "ratio", w);
  s.duration_max_s = json_field<double>(j, "duration_max_s", w);
  s.throughput_min_rank_bytes_per_s = ckpt_nullable<double>(j, "throughput_min_rank_bytes_per_s", w);
  s.time_to_staged_s = json_field<double>(j, "time_to_staged_s", w);
  s.ranks_done_s = json_field<double>(j, "ranks_done_s", w);
  s.publish_s = json_field<double>(j, "publish_s", w);
  s.time_to_durable_s = ckpt_nullable<double>(j, "time_to_durable_s", w);
  s.write_bytes_per_s = ckpt_nullable<double>(j, "write_bytes_per_s", w);
  s.stored_write_bytes_per_s = ckpt_nullable<double>(j, "stored_write_bytes_per_s", w);
  const json& p = json_at(j, "phases_max_over_ranks_s", w);
  const std::string pw = json_path(w, "phases_max_over_ranks_s");
  s.phases_max_over_ranks_s = {json_field<double>(p, "stage", pw), json_field<double>(p, "compress", pw),
                               json_field<double>(p, "write_wait", pw), json_field<double>(p, "fsync", pw)};
  s.user_cpu_s = json_field<double>(j, "user_cpu_s", w);
  s.sys_cpu_s = json_field<double>(j, "sys_cpu_s", w);
  s.cpu_per_wall = json_field<double>(j, "cpu_per_wall", w);
  const json& ranks = json_array_at(j, "ranks", w);
  for (size_t i = 0; i < ranks.size(); ++i)
    s.ranks.push_back(save_rank_from_json(ranks[i], json_path(json_path(w, "ranks"), i)));
  if (j.contains("compression")) {
    const json& z = j["compression"];
    const std::string zw = json_path(w, "compression");
    s.compression = CheckpointSaveCompression{json_field<std::string>(z, "pool", zw),
                                              json_field<int>(z, "workers_per_rank", zw),
                                              json_field<double>(z, "workers_busy_mean_per_rank", zw),
                                              json_field<int>(z, "workers_used_min_over_ranks", zw),
                                              json_field<double>(z, "checksum_cpu_s_max_over_ranks", zw)};
  }
  s.failure = checkpoint_error_from_json(j, "failure", w);
  if (j.contains("async")) {
    const json& a = j["async"];
    const std::string aw = json_path(w, "async");
    s.async = CheckpointSaveAsync{json_field<double>(a, "training_blocked_s", aw),
                                  json_field<uint64_t>(a, "steps_during_persistence", aw),
                                  json_field<double>(a, "step_baseline_s", aw),
                                  json_field<double>(a, "step_mean_during_persistence_s", aw),
                                  json_field<double>(a, "step_slowdown", aw)};
  }
  if (j.contains("device_io")) {  // written when the save's devices were accounted
    const std::string dw = json_path(w, "device_io");
    const json& d = j["device_io"];
    CheckpointSaveDeviceIo io{.section = device_io_section_from_json(d, dw),
                              .logical_bytes = json_field<uint64_t>(d, "logical_bytes", dw)};
    if (const json& r = json_at(d, "written_over_logical", dw); !r.is_null())  // null: not measured
      io.written_over_logical = json_as<double>(r, json_path(dw, "written_over_logical"));
    s.device_io = std::move(io);
  }
  return s;
}

json raw_write_json(const CheckpointRawWrite& r) {
  if (!r.available) return {{"available", false}, {"reason", r.reason}};
  json j = {{"bytes", r.bytes},
            {"duration_max_s", r.duration_max_s},
            {"write_bytes_per_s", r.write_bytes_per_s},
            {"direct", r.direct},
            {"fsync", r.fsync},
            {"runs_bytes_per_s", r.runs_bytes_per_s},
            {"settle", r.settle},
            {"available", true}};
  put_if(j, "after_save_skipped", r.after_save_skipped);
  return j;
}

CheckpointRawWrite raw_write_from_json(const json& j, const std::string& w) {
  CheckpointRawWrite r;
  r.available = json_field<bool>(j, "available", w);
  if (!r.available) {
    r.reason = json_field<std::string>(j, "reason", w);
    return r;
  }
  r.bytes = json_field<uint64_t>(j, "bytes", w);
  r.duration_max_s = json_field<double>(j, "duration_max_s", w);
  r.write_bytes_per_s = json_field<double>(j, "write_bytes_per_s", w);
  r.direct = json_field<bool>(j, "direct", w);
  r.fsync = json_field<bool>(j, "fsync", w);
  r.runs_bytes_per_s = json_field<std::vector<double>>(j, "runs_bytes_per_s", w);
  r.settle = json_field<std::string>(j, "settle", w);
  r.after_save_skipped = ckpt_optional<std::string>(j, "after_save_skipped", w);
  return r;
}

json comparison_json(const CheckpointComparison& c) {
  json j = {{"available", c.available}, {"checkpoint_over_raw", or_null(c.checkpoint_over_raw)}};
  put_if(j, "reason", c.reason);
  put_if(j, "ratio_meaningful", c.ratio_meaningful);
  put_if(j, "ratio_note", c.ratio_note);
  put_if(j, "goal_bytes_per_s", c.goal_bytes_per_s);
  put_if(j, "limit_bytes_per_s", c.limit_bytes_per_s);
  put_if(j, "bound", c.bound);
  put_if(j, "cores", c.cores);
  put_if(j, "zstd_single_thread_bytes_per_s", c.zstd_single_thread_bytes_per_s);
  put_if(j, "cpu_limit_bytes_per_s", c.cpu_limit_bytes_per_s);
  put_if(j, "write_limit_bytes_per_s", c.write_limit_bytes_per_s);
  put_if(j, "zstd_multithread_in_memory_bytes_per_s", c.zstd_multithread_in_memory_bytes_per_s);
  put_if(j, "checkpoint_over_zstd_multithread", c.checkpoint_over_zstd_multithread);
  put_if(j, "ioprobe_pool_in_memory_bytes_per_s", c.ioprobe_pool_in_memory_bytes_per_s);
  put_if(j, "compress_pool", c.compress_pool);
  put_if(j, "measured_cpu_limit_bytes_per_s", c.measured_cpu_limit_bytes_per_s);
  put_if(j, "cores_speedup_measured", c.cores_speedup_measured);
  put_if(j, "measured_limit_bytes_per_s", c.measured_limit_bytes_per_s);
  put_if(j, "checkpoint_over_measured_limit", c.checkpoint_over_measured_limit);
  put_if(j, "checkpoint_over_limit", c.checkpoint_over_limit);
  return j;
}

CheckpointComparison comparison_from_json(const json& j, const std::string& w) {
  CheckpointComparison c;
  c.available = json_field<bool>(j, "available", w);
  c.checkpoint_over_raw = ckpt_nullable<double>(j, "checkpoint_over_raw", w);
  if (!c.available) {
    c.reason = json_field<std::string>(j, "reason", w);
    return c;
  }
  c.ratio_meaningful = json_field<bool>(j, "ratio_meaningful", w);
  c.ratio_note = ckpt_optional<std::string>(j, "ratio_note", w);
  c.goal_bytes_per_s = ckpt_optional<double>(j, "goal_bytes_per_s", w);
  c.limit_bytes_per_s = ckpt_optional<double>(j, "limit_bytes_per_s", w);
  c.bound = ckpt_optional<std::string>(j, "bound", w);
  c.cores = ckpt_optional<int>(j, "cores", w);
  c.zstd_single_thread_bytes_per_s = ckpt_optional<double>(j, "zstd_single_thread_bytes_per_s", w);
  c.cpu_limit_bytes_per_s = ckpt_optional<double>(j, "cpu_limit_bytes_per_s", w);
  c.write_limit_bytes_per_s = ckpt_optional<double>(j, "write_limit_bytes_per_s", w);
  c.zstd_multithread_in_memory_bytes_per_s = ckpt_optional<double>(j, "zstd_multithread_in_memory_bytes_per_s", w);
  c.checkpoint_over_zstd_multithread = ckpt_optional<double>(j, "checkpoint_over_zstd_multithread", w);
  c.ioprobe_pool_in_memory_bytes_per_s = ckpt_optional<double>(j, "ioprobe_pool_in_memory_bytes_per_s", w);
  c.compress_pool = ckpt_optional<std::string>(j, "compress_pool", w);
  c.measured_cpu_limit_bytes_per_s = ckpt_optional<double>(j, "measured_cpu_limit_bytes_per_s", w);
  c.cores_speedup_measured = ckpt_optional<double>(j, "cores_speedup_measured", w);
  c.measured_limit_bytes_per_s = ckpt_optional<double>(j, "measured_limit_bytes_per_s", w);
  c.checkpoint_over_measured_limit = ckpt_optional<double>(j, "checkpoint_over_measured_limit", w);
  c.checkpoint_over_limit = ckpt_optional<double>(j, "checkpoint_over_limit", w);
  // A present cores figure goes with the compression limits the renderer prints beside it.
  if (c.cpu_limit_bytes_per_s && !c.cores) json_at(j, "cores", w);
  return c;
}

json spread_json(const std::optional<CheckpointSpread>& s) {
  if (!s) return nullptr;
  return {{"min", s->min}, {"median", s->median}, {"max", s->max}};
}

std::optional<CheckpointSpread> spread_from_json(const json& j, const char* key, const std::string& w) {
  const json& v = json_at(j, key, w);
  if (v.is_null()) return std::nullopt;
  const std::string sw = json_path(w, key);
  return CheckpointSpread{json_field<double>(v, "min", sw), json_field<double>(v, "median", sw),
                          json_field<double>(v, "max", sw)};
}

CheckpointSeriesSection series_from_json(const json& j, const std::string& w) {
  CheckpointSeriesSection s;
  s.saves_completed = json_field<uint64_t>(j, "saves_completed", w);
  s.repeat_requested = ckpt_nullable<uint64_t>(j, "repeat_requested", w);
  s.duration_limit_s = ckpt_nullable<double>(j, "duration_limit_s", w);
  s.elapsed_s = json_field<double>(j, "elapsed_s", w);
  s.stopped_by = json_text_value(j, "stopped_by", w, checkpoint::series_stop_from_string,
                                 "a series stop (repeat, duration, interrupted, save failed, restore failed, or \"\")");
  s.durable = json_field<bool>(j, "durable", w);
  s.files = json_field<std::string>(j, "files", w);
  const json& saves = json_array_at(j, "saves", w);
  for (size_t i = 0; i < saves.size(); ++i) {
    const json& x = saves[i];
    const std::string xw = json_path(json_path(w, "saves"), i);
    s.saves.push_back({json_field<uint64_t>(x, "index", xw), json_field<uint64_t>(x, "logical_bytes", xw),
                       json_field<uint64_t>(x, "bytes_on_disk", xw), json_field<double>(x, "time_to_durable_s", xw),
                       json_field<double>(x, "write_bytes_per_s", xw), json_field<double>(x, "user_cpu_s", xw),
                       json_field<double>(x, "sys_cpu_s", xw), ckpt_nullable<double>(x, "restore_bytes_per_s", xw)});
  }
  s.write_bytes_per_s = spread_from_json(j, "write_bytes_per_s", w);
  s.restore_bytes_per_s = spread_from_json(j, "restore_bytes_per_s", w);
  return s;
}

CheckpointSection section_from_json(const json& j, const std::string& w) {
  CheckpointSection s;
  s.state = state_from_json(json_at(j, "state", w), json_path(w, "state"));
  s.config = config_from_json(json_at(j, "config", w), json_path(w, "config"));
  s.save = save_from_json(json_at(j, "save", w), json_path(w, "save"));
  s.raw_write = raw_write_from_json(json_at(j, "raw_write", w), json_path(w, "raw_write"));
  s.comparison = comparison_from_json(json_at(j, "comparison", w), json_path(w, "comparison"));
  if (j.contains("restore")) s.restore = checkpoint_restore_from_json(j["restore"], json_path(w, "restore"));
  if (j.contains("series")) s.series = series_from_json(j["series"], json_path(w, "series"));
  s.elapsed_s = json_field<double>(j, "elapsed_s", w);
  return s;
}

}  // namespace

void put_checkpoint_error(json& j, const std::string& key, const std::optional<ErrorRecord>& e) {
  if (!e || e->empty()) return;
  j[key] = error_line(*e);
  j[key + "_detail"] = error_record_json(*e);
}

std::optional<ErrorRecord> checkpoint_error_from_json(const json& j, const std::string& key, const std::string& where) {
  const std::string detail = key + "_detail";
  if (j.contains(detail)) {
    json_field<std::string>(j, key.c_str(), where);  // the line is written beside it
    return error_record_from_json(j[detail], json_path(where, detail.c_str()));
  }
  if (j.contains(key)) return ErrorRecord{.detail = json_field<std::string>(j, key.c_str(), where)};
  return std::nullopt;
}

json checkpoint_series_section_json(const CheckpointSeriesSection& s) {
  json saves = json::array();
  for (const auto& x : s.saves)
    saves.push_back({{"index", x.index},
                     {"logical_bytes", x.logical_bytes},
                     {"bytes_on_disk", x.bytes_on_disk},
                     {"time_to_durable_s", x.time_to_durable_s},
                     {"write_bytes_per_s", x.write_bytes_per_s},
                     {"user_cpu_s", x.user_cpu_s},
                     {"sys_cpu_s", x.sys_cpu_s},
                     {"restore_bytes_per_s", or_null(x.restore_bytes_per_s)}});
  return {{"saves_completed", s.saves_completed},
          {"repeat_requested", or_null(s.repeat_requested)},
          {"duration_limit_s", or_null(s.duration_limit_s)},
          {"elapsed_s", s.elapsed_s},
          {"stopped_by", to_string(s.stopped_by)},
          {"durable", s.durable},
          {"files", s.files},
          {"saves", saves},
          {"write_bytes_per_s", spread_json(s.write_bytes_per_s)},
          {"restore_bytes_per_s", spread_json(s.restore_bytes_per_s)}};
}

json checkpoint_section_json(const CheckpointSection& s) {
  json j = {{"state", state_json(s.state)},
            {"config", config_json(s.config)},
            {"save", save_json(s.save)},
            {"raw_write", raw_write_json(s.raw_write)},
            {"comparison", comparison_json(s.comparison)},
            {"elapsed_s", s.elapsed_s}};
  if (s.restore) j["restore"] = checkpoint_restore_json(*s.restore);
  if (s.series) j["series"] = checkpoint_series_section_json(*s.series);
  return j;
}

json checkpoint_document_json(const CheckpointDocument& doc) {
  json j = {{"target", target_section_json(doc.target)},
            {"checkpoint",
             doc.readback ? checkpoint_readback_section_json(*doc.readback) : checkpoint_section_json(doc.section)},
            {"partial", doc.partial},
            {"warnings", doc.warnings}};
  j.update(header_json(doc.header, "checkpoint"));
  if (doc.cluster) {
    j["cluster"] = checkpoint_cluster_section_json(*doc.cluster);
    j["hosts"] = checkpoint_hosts_section_json(doc.hosts);
  }
  return j;
}

void write_checkpoint_document(const std::string& path, const CheckpointDocument& doc) {
  write_json_file(path, checkpoint_document_json(doc));
}

CheckpointDocument checkpoint_document_from_json(const json& j, const std::string& where) {
  CheckpointDocument d;
  d.header = header_from_json(j, "checkpoint", where);
  d.target = target_section_from_json(json_at(j, "target", where), json_path(where, "target"));
  const json& ck = json_at(j, "checkpoint", where);
  const std::string cw = json_path(where, "checkpoint");
  if (!ck.is_object()) json_detail::throw_mistyped(ck, cw, "a JSON object");
  if (ck.contains("mode")) d.readback = checkpoint_readback_section_from_json(ck, cw);  // --restore-only, --verify-only
  else d.section = section_from_json(ck, cw);
  d.partial = json_field<bool>(j, "partial", where);
  d.warnings = json_field<std::vector<std::string>>(j, "warnings", where);
  if (j.contains("cluster") || j.contains("hosts")) {  // across hosts only: both
    d.cluster = checkpoint_cluster_section_from_json(json_at(j, "cluster", where), json_path(where, "cluster"));
    d.hosts = checkpoint_hosts_section_from_json(json_at(j, "hosts", where), json_path(where, "hosts"));
  }
  return d;
}

RunHeader checkpoint_header(const std::vector<std::string>& argv, const HostInfo& host) {
  RunHeader h = run_header(argv, host);
  return h;
}

CheckpointSaveDeviceIo checkpoint_save_device_io(const DeviceIo& io, uint64_t on_disk, uint64_t logical) {
  CheckpointSaveDeviceIo d{.section = device_io_section(io, DeviceRef::kWrite, on_disk), .logical_bytes = logical};
  if (io.measured() && logical) d.written_over_logical = static_cast<double>(io.bytes_written) / logical;
  return d;
}

}  // namespace ioprobe
