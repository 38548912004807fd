// The wire form of a CheckpointPart (cluster_parts.hpp): a process's share sent to rank 0.
//
// {v: 1, mpi_rank, host_index, hostname, state [[rank, bytes, [[kind, offset, bytes], ...]], ...],
//  save {ranks [RankSaveResult's fields in declaration order, as an array], ok, interrupted,
//  staged_ns, ranks_done_ns, publish_ns, durable_ns, user_cpu_s, sys_cpu_s, final_paths,
//  failed_rank, failure (core/error_record.hpp's object)}, file_bytes, restore_shards, restore_writer_host; with a
//  restore: restore {ranks [RankRestoreResult's fields likewise], wall_ns, ok, interrupted}; with device accounting:
//  restore_device_io, save_device_io (topology/device_io_json.hpp)}
#include <fmt/format.h>

#include "checkpoint/cluster_parts.hpp"
#include "core/error.hpp"
#include "core/error_record.hpp"
#include "core/json_field.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe::checkpoint {

using nlohmann::json;

namespace {

// Reads the elements of a positional array in order, each strictly as its field's type.
class Positional {
 public:
  Positional(const json& a, std::string where) : a_(a), where_(std::move(where)) {
    if (!a_.is_array()) json_detail::throw_mistyped(a_, where_, "an array");
  }
  template <class T>
  Positional& operator>>(T& field) {
    const std::string w = json_path(where_, i_);
    if (i_ >= a_.size()) throw UsageError(fmt::format("{}: missing (the array has {} elements)", w, a_.size()));
    field = json_as<T>(a_[i_++], w);
    return *this;
  }
  Positional& operator>>(ErrorRecord& field) {
    const std::string w = json_path(where_, i_);
    if (i_ >= a_.size()) throw UsageError(fmt::format("{}: missing (the array has {} elements)", w, a_.size()));
    field = error_record_from_json(a_[i_++], w);
    return *this;
  }

 private:
  const json& a_;
  std::string where_;
  size_t i_ = 0;
};

json save_rank_json(const RankSaveResult& r) {
  return {r.rank,
          r.path,
          r.logical_bytes,
          r.stored_bytes,
          r.written_bytes,
          r.zero_copy_bytes,
          r.chunks_done,
          r.chunks_total,
          r.stage_ns,
          r.compress_ns,
          r.compress_busy_ns,
          r.compress_active_ns,
          r.compress_workers_used,
          r.checksum_cpu_ns,
          r.frames,
          r.write_wait_ns,
          r.fsync_ns,
          r.total_ns,
          r.direct,
          r.interrupted,
          r.err,
          r.err_op,
          r.err_detail};
}

RankSaveResult save_rank_from(const json& j, const std::string& w) {
  RankSaveResult r;
  Positional(j, w) >> r.rank >> r.path >> r.logical_bytes >> r.stored_bytes >> r.written_bytes >> r.zero_copy_bytes >>
      r.chunks_done >> r.chunks_total >> r.stage_ns >> r.compress_ns >> r.compress_busy_ns >> r.compress_active_ns >>
      r.compress_workers_used >> r.checksum_cpu_ns >> r.frames >> r.write_wait_ns >> r.fsync_ns >> r.total_ns >>
      r.direct >> r.interrupted >> r.err >> r.err_op >> r.err_detail;
  return r;
}

json restore_rank_json(const RankRestoreResult& r) {
  return {r.path,           r.logical_bytes, r.stored_bytes, r.chunks_verified,         r.chunks_total,
          r.total_ns,       r.read_ns,       r.direct,       r.decompress_ns,           r.decode_threads,
          r.decode_wait_ns, r.interrupted,   r.corrupt,      error_record_json(r.error)};
}

RankRestoreResult restore_rank_from(const json& j, const std::string& w) {
  RankRestoreResult r;
  Positional(j, w) >> r.path >> r.logical_bytes >> r.stored_bytes >> r.chunks_verified >> r.chunks_total >>
      r.total_ns >> r.read_ns >> r.direct >> r.decompress_ns >> r.decode_threads >> r.decode_wait_ns >> r.interrupted >>
      r.corrupt >> r.error;
  return r;
}

RankState rank_state_from(const json& j, const std::string& w) {
  RankState st;
  Positional(j, w) >> st.rank >> st.bytes;
  const std::string rw = json_path(w, 2);
  if (j.size() < 3 || !j[2].is_array())
    throw UsageError(fmt::format("{}: expected the array of regions [kind, offset, bytes]", rw));
  for (size_t i = 0; i < j[2].size(); ++i) {
    uint32_t kind = 0;
    Region g{};
    Positional(j[2][i], json_path(rw, i)) >> kind >> g.offset >> g.bytes;
    if (kind > static_cast<uint32_t>(TensorKind::kAdamV))
      throw UsageError(fmt::format("{}[0]: {} is not a tensor kind (0-3)", json_path(rw, i), kind));
    g.kind = static_cast<TensorKind>(kind);
    st.regions.push_back(g);
  }
  return st;
}

}  // namespace

void to_json(json& j, const CheckpointPart& p) {
  json state = json::array();
  for (const auto& r : p.state) {
    json regs = json::array();
    for (const auto& g : r.regions) regs.push_back({static_cast<uint32_t>(g.kind), g.offset, g.bytes});
    state.push_back({r.rank, r.bytes, regs});
  }
  json ranks = json::array();
  for (const auto& r : p.save.ranks) ranks.push_back(save_rank_json(r));
  const auto& s = p.save;
  j = {{"v", 1},
       {"mpi_rank", p.mpi_rank},
       {"host_index", p.host_index},
       {"hostname", p.hostname},
       {"state", state},
       {"save",
        {{"ranks", ranks},
         {"ok", s.ok},
         {"interrupted", s.interrupted},
         {"staged_ns", s.staged_ns},
         {"ranks_done_ns", s.ranks_done_ns},
         {"publish_ns", s.publish_ns},
         {"durable_ns", s.durable_ns},
         {"user_cpu_s", s.user_cpu_s},
         {"sys_cpu_s", s.sys_cpu_s},
         {"final_paths", s.final_paths},
         {"failed_rank", s.failed_rank},
         {"failure", error_record_json(s.failure)}}},
       {"file_bytes", p.file_bytes},
       {"restore_shards", p.restore_shards},
       {"restore_writer_host", p.restore_writer_host}};
  if (p.restore) {
    json rr = json::array();
    for (const auto& r : p.restore->ranks) rr.push_back(restore_rank_json(r));
    j["restore"] = {{"ranks", rr},
                    {"wall_ns", p.restore->wall_ns},
                    {"ok", p.restore->ok},
                    {"interrupted", p.restore->interrupted}};
  }
  if (p.restore_device_io) j["restore_device_io"] = *p.restore_device_io;
  if (p.save_device_io) j["save_device_io"] = *p.save_device_io;
}

void from_json(const json& j, CheckpointPart& p) {
  const std::string w = "checkpoint part";
  if (const int v = json_field<int>(j, "v", w); v != 1)
    throw UsageError(fmt::format("{}.v: version {}, this ioprobe reads version 1", w, v));
  p.mpi_rank = json_field<int>(j, "mpi_rank", w);
  p.host_index = json_field<int>(j, "host_index", w);
  p.hostname = json_field<std::string>(j, "hostname", w);
  const json& state = json_array_at(j, "state", w);
  for (size_t i = 0; i < state.size(); ++i)
    p.state.push_back(rank_state_from(state[i], json_path(json_path(w, "state"), i)));
  const json& s = json_at(j, "save", w);
  const std::string sw = json_path(w, "save");
  const json& ranks = json_array_at(s, "ranks", sw);
  for (size_t i = 0; i < ranks.size(); ++i)
    p.save.ranks.push_back(save_rank_from(ranks[i], json_path(json_path(sw, "ranks"), i)));
  p.save.ok = json_field<bool>(s, "ok", sw);
  p.save.interrupted = json_field<bool>(s, "interrupted", sw);
  p.save.staged_ns = json_field<int64_t>(s, "staged_ns", sw);
  p.save.ranks_done_ns = json_field<int64_t>(s, "ranks_done_ns", sw);
  p.save.publish_ns = json_field<int64_t>(s, "publish_ns", sw);
  p.save.durable_ns = json_field<int64_t>(s, "durable_ns", sw);
  p.save.user_cpu_s = json_field<double>(s, "user_cpu_s", sw);
  p.save.sys_cpu_s = json_field<double>(s, "sys_cpu_s", sw);
  p.save.final_paths = json_field<std::vector<std::string>>(s, "final_paths", sw);
  p.save.failed_rank = json_field<int>(s, "failed_rank", sw);
  p.save.failure = error_record_from_json(json_at(s, "failure", sw), json_path(sw, "failure"));
  p.file_bytes = json_field<std::vector<uint64_t>>(j, "file_bytes", w);
  p.restore_shards = json_field<std::vector<int>>(j, "restore_shards", w);
  p.restore_writer_host = json_field<std::string>(j, "restore_writer_host", w);
  if (j.contains("restore")) {  // a process that restored
    const json& r = j.at("restore");
    const std::string rw = json_path(w, "restore");
    RestoreResult out;
    const json& rr = json_array_at(r, "ranks", rw);
    for (size_t i = 0; i < rr.size(); ++i)
      out.ranks.push_back(restore_rank_from(rr[i], json_path(json_path(rw, "ranks"), i)));
    out.wall_ns = json_field<int64_t>(r, "wall_ns", rw);
    out.ok = json_field<bool>(r, "ok", rw);
    out.interrupted = json_field<bool>(r, "interrupted", rw);
    p.restore = std::move(out);
  }
  // Present when measured (a restore ran, a save ran).
  if (j.contains("restore_device_io"))
    p.restore_device_io = device_io_from_wire(j.at("restore_device_io"), json_path(w, "restore_device_io"));
  if (j.contains("save_device_io"))
    p.save_device_io = device_io_from_wire(j.at("save_device_io"), json_path(w, "save_device_io"));
}

}  // namespace ioprobe::checkpoint
