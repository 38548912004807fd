#include "report/checkpoint_cluster_section.hpp"

#include "core/json_field.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

json nullable(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// A number that is null when the save failed.
std::optional<double> nullable_field(const json& j, const char* key, const std::string& w) {
  if (json_at(j, key, w).is_null()) return std::nullopt;
  return json_field<double>(j, key, w);
}

json host_results_json(const CheckpointHostSection& h) {
  json r = {{"save_bytes", h.save_bytes},
            {"save_duration_max_s", h.save_duration_max_s},
            {"time_to_durable_s", h.time_to_durable_s},
            {"save_bytes_per_s", h.save_bytes_per_s},
            {"min_rank_bytes_per_s", h.min_rank_bytes_per_s}};
  if (h.save_device_io) r["save_device_io"] = device_io_section_json(*h.save_device_io);
  if (const auto& x = h.restore) {
    r["restore_bytes"] = x->bytes;
    r["restore_duration_max_s"] = x->duration_max_s;
    r["restore_bytes_per_s"] = x->bytes_per_s;
    r["restored_from"] = x->restored_from;
    if (x->error) r["restore_error"] = *x->error;
    r["restore_device_io"] = device_io_section_json(x->device_io);
    r["restore_served_from"] = x->served_from;
  }
  return r;
}

CheckpointHostSection host_from_json(const json& j, const std::string& w) {
  CheckpointHostSection h;
  h.hostname = json_field<std::string>(j, "hostname", w);
  h.host_index = json_field<int>(j, "host_index", w);
  h.mpi_ranks = json_field<std::vector<int>>(j, "mpi_ranks", w);
  h.ckpt_ranks = json_field<std::vector<int>>(j, "ckpt_ranks", w);
  const json& r = json_object_at(j, "results", w);
  const std::string rw = json_path(w, "results");
  h.save_bytes = json_field<uint64_t>(r, "save_bytes", rw);
  h.save_duration_max_s = json_field<double>(r, "save_duration_max_s", rw);
  h.time_to_durable_s = json_field<double>(r, "time_to_durable_s", rw);
  h.save_bytes_per_s = json_field<double>(r, "save_bytes_per_s", rw);
  h.min_rank_bytes_per_s = json_field<double>(r, "min_rank_bytes_per_s", rw);
  if (r.contains("save_device_io"))  // absent: the host sent no save accounting
    h.save_device_io = device_io_section_from_json(r.at("save_device_io"), json_path(rw, "save_device_io"));
  if (r.contains("restore_bytes")) {  // the restore's keys: all of them, or none when no restore ran
    CheckpointHostRestore x;
    x.bytes = json_field<uint64_t>(r, "restore_bytes", rw);
    x.duration_max_s = json_field<double>(r, "restore_duration_max_s", rw);
    x.bytes_per_s = json_field<double>(r, "restore_bytes_per_s", rw);
    x.restored_from = json_field<std::vector<std::string>>(r, "restored_from", rw);
    if (r.contains("restore_error")) x.error = json_field<std::string>(r, "restore_error", rw);  // only on a failure
    x.device_io = device_io_section_from_json(json_at(r, "restore_device_io", rw), json_path(rw, "restore_device_io"));
    x.served_from = json_field<std::string>(r, "restore_served_from", rw);
    h.restore = std::move(x);
  }
  return h;
}

}  // namespace

json checkpoint_cluster_section_json(const CheckpointClusterSection& c) {
  json j = {{"launcher", c.launcher},
            {"hosts", c.hosts},
            {"mpi_ranks", c.mpi_ranks},
            {"ckpt_ranks", c.ckpt_ranks},
            {"dir_placement", c.dir_placement},
            {"restore_placement", c.restore_placement},
            {"merge", c.merge},
            {"save_bytes", c.save_bytes},
            {"save_duration_max_s", nullable(c.save_duration_max_s)},
            {"save_bytes_per_s", nullable(c.save_bytes_per_s)}};
  if (c.restores_from_other_host) j["restores_from_other_host"] = *c.restores_from_other_host;
  return j;
}

CheckpointClusterSection checkpoint_cluster_section_from_json(const json& j, const std::string& w) {
  if (!j.is_object()) json_detail::throw_mistyped(j, w, "a JSON object");
  CheckpointClusterSection c;
  c.launcher = json_field<std::string>(j, "launcher", w);
  c.hosts = json_field<uint64_t>(j, "hosts", w);
  c.mpi_ranks = json_field<int>(j, "mpi_ranks", w);
  c.ckpt_ranks = json_field<uint64_t>(j, "ckpt_ranks", w);
  c.dir_placement = json_field<std::string>(j, "dir_placement", w);
  c.restore_placement = json_field<std::string>(j, "restore_placement", w);
  c.merge = json_field<std::string>(j, "merge", w);
  c.save_bytes = json_field<uint64_t>(j, "save_bytes", w);
  c.save_duration_max_s = nullable_field(j, "save_duration_max_s", w);
  c.save_bytes_per_s = nullable_field(j, "save_bytes_per_s", w);
  if (j.contains("restores_from_other_host"))  // written with a restore only
    c.restores_from_other_host = json_field<int>(j, "restores_from_other_host", w);
  return c;
}

json checkpoint_hosts_section_json(const std::vector<CheckpointHostSection>& hosts) {
  json a = json::array();
  for (const auto& h : hosts)
    a.push_back({{"hostname", h.hostname},
                 {"host_index", h.host_index},
                 {"mpi_ranks", h.mpi_ranks},
                 {"ckpt_ranks", h.ckpt_ranks},
                 {"results", host_results_json(h)}});
  return a;
}

std::vector<CheckpointHostSection> checkpoint_hosts_section_from_json(const json& j, const std::string& where) {
  if (!j.is_array()) json_detail::throw_mistyped(j, where, "an array");
  std::vector<CheckpointHostSection> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(host_from_json(j[i], json_path(where, i)));
  return out;
}

}  // namespace ioprobe
