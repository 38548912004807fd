#include "capacity/point_json.hpp"

#include "core/json_field.hpp"

namespace ioprobe {

namespace {

nlohmann::json host_row_json(const CapacityHostRow& h) {
  return {{"hostname", h.hostname},
          {"host_index", h.host_index},
          {"mpi_ranks", h.mpi_ranks},
          {"gpus", h.gpus},
          {"cpus_allowed", h.cpus_allowed},
          {"au", h.au},
          {"au_min", h.au_min},
          {"samples_per_s", h.samples_per_s},
          {"bytes_per_s", h.bytes_per_s},
          {"delivered_bytes", h.delivered_bytes},
          {"cpu_fraction", h.cpu_fraction},
          {"consumer_lag", h.consumer_lag},
          {"client_bound", h.client_bound},
          {"note", h.note}};
}

CapacityHostRow host_row_from_json(const nlohmann::json& j, const std::string& w) {
  CapacityHostRow h;
  h.hostname = json_field<std::string>(j, "hostname", w);
  h.host_index = json_field<int>(j, "host_index", w);
  h.mpi_ranks = json_field<std::vector<int>>(j, "mpi_ranks", w);
  h.gpus = json_field<uint32_t>(j, "gpus", w);
  h.cpus_allowed = json_field<int>(j, "cpus_allowed", w);
  h.au = json_field<double>(j, "au", w);
  h.au_min = json_field<double>(j, "au_min", w);
  h.samples_per_s = json_field<double>(j, "samples_per_s", w);
  h.bytes_per_s = json_field<double>(j, "bytes_per_s", w);
  h.delivered_bytes = json_field<uint64_t>(j, "delivered_bytes", w);
  h.cpu_fraction = json_field<double>(j, "cpu_fraction", w);
  h.consumer_lag = json_field<double>(j, "consumer_lag", w);
  h.client_bound = json_field<bool>(j, "client_bound", w);
  h.note = json_field<std::string>(j, "note", w);
  return h;
}

}  // namespace

nlohmann::json capacity_point_json(const CapacityPoint& p) {
  nlohmann::json j = {{"gpus", p.gpus},
                      {"au", p.au},
                      {"au_min", p.au_min},
                      {"samples_per_s", p.samples_per_s},
                      {"bytes_per_s", p.bytes_per_s},
                      {"repeats", p.repeats},
                      {"spread", p.repeats > 1 ? nlohmann::json(p.spread) : nlohmann::json()},  // one repeat: none
                      {"cpu_fraction", p.cpu_fraction},
                      {"consumer_lag", p.consumer_lag},
                      {"worker_runq_share",
                       p.worker_runq_share < 0 ? nlohmann::json(nullptr) : nlohmann::json(p.worker_runq_share)},
                      {"client_bound", p.client_bound},
                      {"workers_bound", p.workers_bound},
                      {"metadata_bound", p.metadata_bound},
                      {"steady", p.steady},
                      {"delivered_bytes", p.delivered_bytes},
                      {"note", p.note}};
  // client_host names one of the host rows, so it comes with them (one host: neither).
  if (!p.hosts.empty()) {
    j["hosts"] = nlohmann::json::array();
    for (const auto& h : p.hosts) j["hosts"].push_back(host_row_json(h));
    j["client_host"] = p.client_host.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.client_host);
  }
  if (p.decode_us_per_sample > 0) j["decode_us_per_sample"] = p.decode_us_per_sample;  // --decode jpeg
  return j;
}

CapacityPoint capacity_point_from_json(const nlohmann::json& j, const std::string& w) {
  CapacityPoint p;
  p.gpus = json_field<uint32_t>(j, "gpus", w);
  p.au = json_field<double>(j, "au", w);
  p.au_min = json_field<double>(j, "au_min", w);
  p.samples_per_s = json_field<double>(j, "samples_per_s", w);
  p.bytes_per_s = json_field<double>(j, "bytes_per_s", w);
  p.repeats = json_field<uint32_t>(j, "repeats", w);
  // null with one repeat (no spread); documents before that wrote 0.0 there, still read.
  p.spread = p.repeats <= 1 && json_at(j, "spread", w).is_null() ? 0.0 : json_field<double>(j, "spread", w);
  p.cpu_fraction = json_field<double>(j, "cpu_fraction", w);
  p.consumer_lag = json_field<double>(j, "consumer_lag", w);
  const nlohmann::json& runq = json_at(j, "worker_runq_share", w);  // null: not measured
  p.worker_runq_share = runq.is_null() ? -1 : json_as<double>(runq, json_path(w, "worker_runq_share"));
  p.client_bound = json_field<bool>(j, "client_bound", w);
  p.workers_bound = json_field<bool>(j, "workers_bound", w);
  p.metadata_bound = json_field<bool>(j, "metadata_bound", w);
  p.steady = json_field<bool>(j, "steady", w);
  p.delivered_bytes = json_field<uint64_t>(j, "delivered_bytes", w);
  p.note = json_field<std::string>(j, "note", w);
  if (j.contains("hosts")) {  // across hosts only, with client_host
    const nlohmann::json& rows = json_array_at(j, "hosts", w);
    for (size_t i = 0; i < rows.size(); ++i)
      p.hosts.push_back(host_row_from_json(rows[i], json_path(json_path(w, "hosts"), i)));
    const nlohmann::json& ch = json_at(j, "client_host", w);  // null: no host was client-bound
    p.client_host = ch.is_null() ? "" : json_as<std::string>(ch, json_path(w, "client_host"));
  }
  // Written with --decode jpeg only.
  p.decode_us_per_sample = json_field_or<double>(j, "decode_us_per_sample", w, 0);
  return p;
}

void to_json(nlohmann::json& j, const CapacityPoint& p) { j = capacity_point_json(p); }

void from_json(const nlohmann::json& j, CapacityPoint& p) { p = capacity_point_from_json(j, "capacity point"); }

}  // namespace ioprobe
