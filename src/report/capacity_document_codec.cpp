// CapacityDocument <-> the "capacity" result document's JSON (report/capacity_document.hpp): one
// writer, one strict reader.
#include <fmt/format.h>

#include "capacity/point_json.hpp"
#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/json_text_value.hpp"
#include "core/text.hpp"
#include "engine/engine_kind.hpp"
#include "report/calibration_effect_report.hpp"
#include "report/capacity_document.hpp"
#include "report/device_io_report.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe {

const char* to_string(CapacityStop s) {
  switch (s) {
    case CapacityStop::kLimit:
      return "limit";
    case CapacityStop::kBudget:
      return "budget";
    case CapacityStop::kInterrupted:
      return "interrupted";
    case CapacityStop::kCompleted:
      break;
  }
  return "completed";
}

std::optional<CapacityStop> capacity_stop_from_string(std::string_view text) {
  for (const CapacityStop s :
       {CapacityStop::kCompleted, CapacityStop::kLimit, CapacityStop::kBudget, CapacityStop::kInterrupted})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

using json = nlohmann::json;

namespace {

json capacity_loader_json(const CapacityLoaderSection& l) {
  json j = {{"num_workers", l.num_workers},
            {"batch_size", l.batch_size},
            {"prefetch_factor", l.prefetch_factor},
            {"engine", to_string(l.engine)},
            {"direct", l.direct},
            {"shuffle", l.shuffle},
            {"cpu_per_sample_us", l.cpu_per_sample_us},
            {"step_time_s", l.step_time_s}};
  consumer_model_json(l.consumer, j);
  return j;
}

CapacityLoaderSection capacity_loader_from_json(const json& j, const std::string& w) {
  CapacityLoaderSection l;
  l.num_workers = json_field<uint32_t>(j, "num_workers", w);
  l.batch_size = json_field<uint32_t>(j, "batch_size", w);
  l.prefetch_factor = json_field<uint32_t>(j, "prefetch_factor", w);
  l.engine = engine_kind_field(j, "engine", w);
  l.direct = json_field<bool>(j, "direct", w);
  l.shuffle = json_field<bool>(j, "shuffle", w);
  l.cpu_per_sample_us = json_field<double>(j, "cpu_per_sample_us", w);
  l.step_time_s = json_field<double>(j, "step_time_s", w);
  l.consumer = consumer_model_from_json(j, w);
  return l;
}

json capacity_demand_json(const CapacityDemandSection& d) {
  return {{"accelerator", d.accelerator},
          {"accelerator_name", d.accelerator_name},
          {"model", d.model},
          {"rate_family", d.rate_family},
          {"samples_per_s_per_gpu", d.samples_per_s_per_gpu},
          {"source", d.source},
          {"sample_bytes", d.sample_bytes},
          {"au_target", d.au_target}};
}

CapacityDemandSection capacity_demand_from_json(const json& j, const std::string& w) {
  CapacityDemandSection d;
  d.accelerator = json_field<std::string>(j, "accelerator", w);
  d.accelerator_name = json_field<std::string>(j, "accelerator_name", w);
  d.model = json_field<std::string>(j, "model", w);
  d.rate_family = json_field<std::string>(j, "rate_family", w);
  d.samples_per_s_per_gpu = json_field<double>(j, "samples_per_s_per_gpu", w);
  d.source = json_field<std::string>(j, "source", w);
  d.sample_bytes = json_field<double>(j, "sample_bytes", w);
  d.au_target = json_field<double>(j, "au_target", w);
  return d;
}

// A device_io section in document form (device_io_json with a read reference) read back: the
// figures it derives (share_unclear, reference_bytes, read_ratio, bytes_source) are checked for
// type and dropped, the rest is the DeviceIo's own codec.
DeviceIo capacity_device_io_from_json(const json& j, const std::string& w) {
  json_field<bool>(j, "share_unclear", w);
  json_field<uint64_t>(j, "reference_bytes", w);
  if (const json& r = json_at(j, "read_ratio", w); !r.is_null()) json_as<double>(r, json_path(w, "read_ratio"));
  json_field<std::string>(j, "bytes_source", w);
  json wire = j;
  for (const char* k : {"share_unclear", "reference_bytes", "read_ratio", "bytes_source"}) wire.erase(k);
  // The reason is written only when nothing was measured.
  if (!wire.contains("reason") && json_field<std::string>(j, "source", w) != "none") wire["reason"] = "";
  return device_io_from_wire(wire, w);
}

json capacity_section_json(const CapacitySection& s) {
  const CapacitySectionInputs& in = s.in;
  json pts = json::array();
  for (const auto& p : s.answer.points) {
    json j = capacity_point_json(p);
    j["demand_samples_per_s"] = in.samples_per_s_per_gpu * p.gpus;
    j["passed"] = point_passes(p, in.au_target);
    if (const auto it = s.device_io.find(p.gpus); it != s.device_io.end()) {
      j["device_io"] = device_io_json(it->second.all, DeviceRef::kRead, p.delivered_bytes);
      for (size_t i = 0; i < p.hosts.size(); ++i)
        if (const auto h = it->second.hosts.find(p.hosts[i].host_index); h != it->second.hosts.end())
          j["hosts"][i]["device_io"] = device_io_json(h->second, DeviceRef::kRead, p.hosts[i].delivered_bytes);
    }
    pts.push_back(std::move(j));
  }
  json c = {{"accelerator", in.accelerator},
            {"accelerator_name", in.accelerator_name},
            {"model", in.model},
            {"au_target", in.au_target},
            {"gpus_fed", s.answer.gpus_fed},
            {"bound", s.answer.bound},
            {"boundary_measured", s.answer.boundary_measured},
            {"answer", s.answer.text},
            {"samples_per_s_per_gpu", in.samples_per_s_per_gpu},
            {"sample_bytes", in.sample_bytes},
            {"point_s", in.point_s},
            {"repeats", in.repeats},
            {"budget_s", in.budget_s},
            {"elapsed_s", in.elapsed_s},
            {"max_gpus", in.max_gpus},
            {"stop_reason", to_string(in.stop)},
            {"points", pts}};
  if (s.calibration_effect) c["calibration_effect"] = calibration_effect_json(*s.calibration_effect);
  return c;
}

CapacitySection capacity_section_from_json(const json& j, const std::string& w) {
  CapacitySection s;
  CapacitySectionInputs& in = s.in;
  in.accelerator = json_field<std::string>(j, "accelerator", w);
  in.accelerator_name = json_field<std::string>(j, "accelerator_name", w);
  in.model = json_field<std::string>(j, "model", w);
  in.au_target = json_field<double>(j, "au_target", w);
  in.samples_per_s_per_gpu = json_field<double>(j, "samples_per_s_per_gpu", w);
  in.sample_bytes = json_field<double>(j, "sample_bytes", w);
  in.point_s = json_field<double>(j, "point_s", w);
  in.repeats = json_field<uint32_t>(j, "repeats", w);
  in.budget_s = json_field<double>(j, "budget_s", w);
  in.elapsed_s = json_field<double>(j, "elapsed_s", w);
  in.max_gpus = json_field<uint32_t>(j, "max_gpus", w);
  in.stop = json_text_value(j, "stop_reason", w, capacity_stop_from_string,
                            "a capacity stop reason (completed, limit, budget, interrupted)");
  s.answer.gpus_fed = json_field<uint32_t>(j, "gpus_fed", w);
  s.answer.bound = json_field<std::string>(j, "bound", w);
  s.answer.boundary_measured = json_field<bool>(j, "boundary_measured", w);
  s.answer.text = json_field<std::string>(j, "answer", w);
  const json& pts = json_array_at(j, "points", w);
  for (size_t i = 0; i < pts.size(); ++i) {
    const std::string pw = json_path(json_path(w, "points"), i);
    CapacityPoint p = capacity_point_from_json(pts[i], pw);
    json_field<double>(pts[i], "demand_samples_per_s", pw);  // derived: written again from the demand
    json_field<bool>(pts[i], "passed", pw);                  // derived: point_passes
    if (pts[i].contains("device_io")) {                      // absent: no repeat of the point was accounted
      CapacityPointDeviceIo& d = s.device_io[p.gpus];
      d.all = capacity_device_io_from_json(pts[i]["device_io"], json_path(pw, "device_io"));
      for (size_t k = 0; k < p.hosts.size(); ++k)
        if (const json& row = pts[i]["hosts"][k]; row.contains("device_io"))
          d.hosts[p.hosts[k].host_index] = capacity_device_io_from_json(row["device_io"],
                                                                        json_path(json_path(json_path(pw, "hosts"), k),
                                                                                  "device_io"));
    }
    s.answer.points.push_back(std::move(p));
  }
  if (j.contains("calibration_effect"))  // with --calibration only
    s.calibration_effect = calibration_effect_from_json(j["calibration_effect"], json_path(w, "calibration_effect"));
  return s;
}

}  // namespace

json capacity_document_json(const CapacityDocument& doc) {
  json j = {{"target", target_section_json(doc.target)},
            {"targets", targets_section_json(doc.targets)},
            {"dataset", dataset_section_json(doc.dataset)},
            {"loader", capacity_loader_json(doc.loader)},
            {"demand", capacity_demand_json(doc.demand)},
            {"capacity", capacity_section_json(doc.capacity)},
            {"partial", doc.partial},
            {"warnings", doc.warnings}};
  j.update(header_json(doc.header, "capacity"));
  if (const auto& c = doc.cluster)
    j["cluster"] = {{"launcher", c->launcher},
                    {"hosts", c->hosts},
                    {"hostnames", c->hostnames},
                    {"mpi_ranks", c->mpi_ranks},
                    {"dataset_placement", c->dataset_placement},
                    {"dataset_placement_how", c->dataset_placement_how},
                    {"split", c->split},
                    {"merge", c->merge}};
  return j;
}

void write_capacity_document(const std::string& path, const CapacityDocument& doc) {
  write_json_file(path, capacity_document_json(doc));
}

CapacityDocument capacity_document_from_json(const json& j, const std::string& where) {
  CapacityDocument d;
  d.header = header_from_json(j, "capacity", where);
  d.target = target_section_from_json(json_at(j, "target", where), json_path(where, "target"), TargetKeys::kRead);
  d.targets = targets_section_from_json(json_at(j, "targets", where), json_path(where, "targets"));
  d.dataset = dataset_section_from_json(json_at(j, "dataset", where), json_path(where, "dataset"));
  d.loader = capacity_loader_from_json(json_at(j, "loader", where), json_path(where, "loader"));
  d.demand = capacity_demand_from_json(json_at(j, "demand", where), json_path(where, "demand"));
  d.capacity = capacity_section_from_json(json_at(j, "capacity", where), json_path(where, "capacity"));
  d.partial = json_field<bool>(j, "partial", where);
  d.warnings = json_field<std::vector<std::string>>(j, "warnings", where);
  if (j.contains("cluster")) {  // across hosts only
    const json& c = json_object_at(j, "cluster", where);
    const std::string cw = json_path(where, "cluster");
    d.cluster = CapacityClusterSection{.launcher = json_field<std::string>(c, "launcher", cw),
                                       .hosts = json_field<int>(c, "hosts", cw),
                                       .hostnames = json_field<std::vector<std::string>>(c, "hostnames", cw),
                                       .mpi_ranks = json_field<int>(c, "mpi_ranks", cw),
                                       .dataset_placement = json_field<std::string>(c, "dataset_placement", cw),
                                       .dataset_placement_how = json_field<std::string>(c, "dataset_placement_how", cw),
                                       .split = json_field<std::string>(c, "split", cw),
                                       .merge = json_field<std::string>(c, "merge", cw)};
  }
  return d;
}

}  // namespace ioprobe
