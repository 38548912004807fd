// TuneDocument <-> the "tune" result document's JSON (report/tune_document.hpp): one writer, one
// strict reader.
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "engine/engine_kind.hpp"
#include "report/calibration_effect_report.hpp"
#include "report/document.hpp"
#include "report/html_report.hpp"
#include "report/tune_document.hpp"

namespace ioprobe {

namespace {

// A number that is null where the writer had none (a rule not measured): absent then.
template <class T>
std::optional<T> tune_nullable_field(const nlohmann::json& j, const char* key, const std::string& w) {
  const nlohmann::json& v = json_at(j, key, w);
  if (v.is_null()) return std::nullopt;
  return json_as<T>(v, json_path(w, key));
}

template <class T>
nlohmann::json tune_nullable_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json tune_loader_json(const TuneLoaderSection& l) {
  nlohmann::json j = {{"batch_size", l.batch_size},  {"gpus", l.gpus},       {"engine", to_string(l.engine)},
                      {"direct", l.direct},          {"shuffle", l.shuffle}, {"cpu_per_sample_us", l.cpu_per_sample_us},
                      {"step_time_s", l.step_time_s}};
  consumer_model_json(l.consumer, j);
  return j;
}

TuneLoaderSection tune_loader_from_json(const nlohmann::json& j, const std::string& w) {
  TuneLoaderSection l;
  l.batch_size = json_field<uint32_t>(j, "batch_size", w);
  l.gpus = json_field<uint32_t>(j, "gpus", w);
  l.engine = engine_kind_field(j, "engine", w);
  l.direct = json_field<bool>(j, "direct", w);
  l.shuffle = json_field<bool>(j, "shuffle", w);
  l.cpu_per_sample_us = json_field<double>(j, "cpu_per_sample_us", w);
  l.step_time_s = json_field<double>(j, "step_time_s", w);
  l.consumer = consumer_model_from_json(j, w);
  return l;
}

nlohmann::json tune_demand_json(const TuneDemandSection& s) {
  nlohmann::json j = demand_json(s.demand);
  j["required_samples_per_s"] = s.required_samples_per_s;
  j["required_bytes_per_s"] = s.required_bytes_per_s;
  j["sample_bytes"] = s.sample_bytes;
  return j;
}

TuneDemandSection tune_demand_from_json(const nlohmann::json& j, const std::string& w) {
  TuneDemandSection s;
  s.demand = demand_from_json(j, w);
  s.required_samples_per_s = json_field<double>(j, "required_samples_per_s", w);
  s.required_bytes_per_s = json_field<double>(j, "required_bytes_per_s", w);
  s.sample_bytes = json_field<double>(j, "sample_bytes", w);
  return s;
}

nlohmann::json tune_sweep_json(const TuneSweepSection& t) {
  const std::string stop = to_string(t.stop);
  nlohmann::json j = {{"workers", t.workers},       {"prefetch_factors", t.prefetch_factors},
                      {"placements", t.placements}, {"placements_reason", t.placements_reason},
                      {"repeats", t.repeats},       {"run_s", t.run_s},
                      {"budget_s", t.budget_s},     {"elapsed_s", t.elapsed_s},
                      {"runs_done", t.runs_done},   {"runs_planned", t.runs_planned},
                      {"stop_reason", stop}};
  if (t.calibration_effect) j["calibration_effect"] = calibration_effect_json(*t.calibration_effect);
  return j;
}

TuneSweepSection tune_sweep_from_json(const nlohmann::json& j, const std::string& w) {
  TuneSweepSection t;
  t.workers = json_field<std::vector<uint32_t>>(j, "workers", w);
  t.prefetch_factors = json_field<std::vector<uint32_t>>(j, "prefetch_factors", w);
  t.placements = json_field<std::vector<std::string>>(j, "placements", w);
  t.placements_reason = json_field<std::string>(j, "placements_reason", w);
  t.repeats = json_field<uint32_t>(j, "repeats", w);
  t.run_s = json_field<double>(j, "run_s", w);
  t.budget_s = json_field<double>(j, "budget_s", w);
  t.elapsed_s = json_field<double>(j, "elapsed_s", w);
  t.runs_done = json_field<uint64_t>(j, "runs_done", w);
  t.runs_planned = json_field<uint64_t>(j, "runs_planned", w);
  t.stop = tune_stop_field(j, "stop_reason", w);
  if (j.contains("calibration_effect"))  // written only with --calibration
    t.calibration_effect = calibration_effect_from_json(j.at("calibration_effect"), json_path(w, "calibration_effect"));
  return t;
}

nlohmann::json tune_run_sample_json(const TuneSample& r) {
  return {{"samples_per_s", r.samples_per_s},
          {"bytes_per_s", r.bytes_per_s},
          {"au", r.au},
          {"au_min", r.au_min},
          {"rate_basis", r.from_completions ? "completion times" : "interval counts"},
          {"cpu_used", r.cpu_used},
          {"elapsed_s", r.elapsed_s},
          {"steady_samples", r.steady_samples},
          {"steady", r.steady}};
}

TuneSample tune_run_sample_from_json(const nlohmann::json& j, const std::string& w) {
  TuneSample r;
  r.samples_per_s = json_field<double>(j, "samples_per_s", w);
  r.bytes_per_s = json_field<double>(j, "bytes_per_s", w);
  r.au = json_field<double>(j, "au", w);
  r.au_min = json_field<double>(j, "au_min", w);
  const auto basis = json_field<std::string>(j, "rate_basis", w);
  if (basis != "completion times" && basis != "interval counts")
    throw UsageError(fmt::format("{}: '{}' is neither 'completion times' nor 'interval counts'",
                                 json_path(w, "rate_basis"), escape_bytes(basis)));
  r.from_completions = basis == "completion times";
  r.cpu_used = json_field<double>(j, "cpu_used", w);
  r.elapsed_s = json_field<double>(j, "elapsed_s", w);
  r.steady_samples = json_field<uint64_t>(j, "steady_samples", w);
  r.steady = json_field<bool>(j, "steady", w);
  return r;
}

nlohmann::json tune_worker_costs_json(const TuneWorkerCosts& c) {
  return {{"workers_per_cpu", c.workers_per_cpu},
          {"cpu_per_sample_us", c.cpu_per_sample_us},
          {"loop_per_sample_us", c.loop_per_sample_us},
          {"put_per_sample_us", c.put_per_sample_us},
          {"other_per_sample_us", c.other_per_sample_us},
          {"startup_cpu_s", c.startup_cpu_s},
          {"basis", c.basis}};
}

TuneWorkerCosts tune_worker_costs_from_json(const nlohmann::json& j, const std::string& w) {
  TuneWorkerCosts c;
  c.workers_per_cpu = json_field<double>(j, "workers_per_cpu", w);
  c.cpu_per_sample_us = json_field<double>(j, "cpu_per_sample_us", w);
  c.loop_per_sample_us = json_field<double>(j, "loop_per_sample_us", w);
  c.put_per_sample_us = json_field<double>(j, "put_per_sample_us", w);
  c.other_per_sample_us = json_field<double>(j, "other_per_sample_us", w);
  c.startup_cpu_s = json_field<double>(j, "startup_cpu_s", w);
  c.basis = json_field<std::string>(j, "basis", w);
  return c;
}

// The figures of a point, null when it was not measured.
constexpr const char* kTunePointFigures[] = {"samples_per_s", "samples_per_s_min", "samples_per_s_max",
                                             "spread",        "bytes_per_s",       "au",
                                             "cpu_used",      "worker_busy"};

nlohmann::json tune_point_json(const TunePointEntry& e) {
  const TunePoint& p = e.point;
  nlohmann::json j;
  if (p.runs.empty()) {  // the sweep stopped before this setting ran: no figure, not zeros
    j = {{"num_workers", p.num_workers},
         {"prefetch_factor", p.prefetch_factor},
         {"numa", p.numa},
         {"status", kTuneNotMeasured},
         {"repeats", 0},
         {"steady_runs", 0},
         {"runs", nlohmann::json::array()}};
    for (const char* k : kTunePointFigures) j[k] = nullptr;
  } else {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& r : p.runs) runs.push_back(tune_run_sample_json(r));
    j = {{"num_workers", p.num_workers},
         {"prefetch_factor", p.prefetch_factor},
         {"numa", p.numa},
         {"pin_memory", p.pin_memory},
         {"run_s", p.run_s},
         {"status", "measured"},
         {"repeats", p.runs.size()},
         {"steady_runs", p.steady_runs},
         {"samples_per_s", p.samples_per_s},
         {"samples_per_s_min", p.samples_per_s_min},
         {"samples_per_s_max", p.samples_per_s_max},
         {"spread", p.runs.size() > 1 ? nlohmann::json(p.spread) : nlohmann::json()},  // one repeat has none
         {"bytes_per_s", p.bytes_per_s},
         {"au", p.au},
         {"cpu_used", p.cpu_used},
         {"worker_busy", p.worker_busy},
         {"runs", runs}};
  }
  if (const auto& d = e.device_io) {
    j["device_io"] = device_io_section_json(d->section);
    j["device_io"]["device_read_bytes_per_s"] = d->device_read_bytes_per_s;
    j["device_io"]["read_rate_ratio"] = d->read_rate_ratio ? nlohmann::json(*d->read_rate_ratio)
                                                           : nlohmann::json(nullptr);
  }
  if (e.worker_costs) j["worker_costs"] = tune_worker_costs_json(*e.worker_costs);
  return j;
}

TunePointEntry tune_point_from_json(const nlohmann::json& j, const std::string& w) {
  if (!j.is_object()) json_detail::throw_mistyped(j, w, "a JSON object");
  TunePointEntry e;
  TunePoint& p = e.point;
  p.num_workers = json_field<uint32_t>(j, "num_workers", w);
  p.prefetch_factor = json_field<uint32_t>(j, "prefetch_factor", w);
  p.numa = json_field<std::string>(j, "numa", w);
  const auto status = json_field<std::string>(j, "status", w);
  const nlohmann::json& runs = json_array_at(j, "runs", w);
  const auto repeats = json_field<uint64_t>(j, "repeats", w);
  if (status == kTuneNotMeasured) {
    if (repeats != 0 || !runs.empty())
      throw UsageError(fmt::format("{}: a point 'not measured' has repeats 0 and no runs, this one {} and {}", w,
                                   repeats, runs.size()));
    for (const char* k : kTunePointFigures)
      if (!json_at(j, k, w).is_null())  // a figure of a setting never run
        json_detail::throw_mistyped(j.at(k), json_path(w, k), "null (the point was not measured)");
  } else if (status == "measured") {
    if (repeats != runs.size() || runs.empty())
      throw UsageError(
          fmt::format("{}: repeats {} but {} runs; a measured point has one run per repeat", w, repeats, runs.size()));
    p.pin_memory = json_field<bool>(j, "pin_memory", w);
    p.run_s = json_field<double>(j, "run_s", w);
    p.steady_runs = json_field<size_t>(j, "steady_runs", w);
    p.samples_per_s = json_field<double>(j, "samples_per_s", w);
    p.samples_per_s_min = json_field<double>(j, "samples_per_s_min", w);
    p.samples_per_s_max = json_field<double>(j, "samples_per_s_max", w);
    // null with one repeat (no spread); documents before that wrote 0.0 there, still read.
    p.spread = repeats == 1 && json_at(j, "spread", w).is_null() ? 0.0 : json_field<double>(j, "spread", w);
    p.bytes_per_s = json_field<double>(j, "bytes_per_s", w);
    p.au = json_field<double>(j, "au", w);
    p.cpu_used = json_field<double>(j, "cpu_used", w);
    p.worker_busy = json_field<double>(j, "worker_busy", w);
    const std::string rw = json_path(w, "runs");
    for (size_t i = 0; i < runs.size(); ++i) p.runs.push_back(tune_run_sample_from_json(runs[i], json_path(rw, i)));
  } else {
    throw UsageError(fmt::format("{}: '{}' is neither 'measured' nor '{}'", json_path(w, "status"),
                                 escape_bytes(status), kTuneNotMeasured));
  }
  if (j.contains("device_io")) {  // written where the devices were measured
    const std::string dw = json_path(w, "device_io");
    const nlohmann::json& d = j.at("device_io");
    e.device_io = TunePointDeviceIo{.section = device_io_section_from_json(d, dw),
                                    .device_read_bytes_per_s = json_field<double>(d, "device_read_bytes_per_s", dw),
                                    .read_rate_ratio = tune_nullable_field<double>(d, "read_rate_ratio", dw)};
  }
  if (j.contains("worker_costs"))  // with --calibration only
    e.worker_costs = tune_worker_costs_from_json(j.at("worker_costs"), json_path(w, "worker_costs"));
  return e;
}

nlohmann::json tune_recommendation_json(const Recommendation& r) {
  return {{"valid", r.valid},
          {"meets_demand", r.meets_demand},
          {"point", r.point},
          {"best", r.best},
          {"knee", r.knee},
          {"tolerance", r.tolerance},
          {"shortfall_samples_per_s", r.shortfall_samples_per_s},
          {"numa", r.numa},
          {"binding_helped", r.binding_helped},
          {"numa_reason", r.numa_reason},
          {"numactl", r.numactl},
          {"dataloader", r.dataloader},
          {"pin_memory_note", r.pin_memory_note},
          {"oversubscribed", r.oversubscribed},
          {"notes", r.notes}};
}

// `points`: how many points the document has; the indexes of a valid recommendation are checked
// against it.
Recommendation tune_recommendation_from_json(const nlohmann::json& j, const std::string& w, size_t points) {
  Recommendation r;
  r.valid = json_field<bool>(j, "valid", w);
  r.meets_demand = json_field<bool>(j, "meets_demand", w);
  r.point = json_field<size_t>(j, "point", w);
  r.best = json_field<size_t>(j, "best", w);
  r.knee = json_field<size_t>(j, "knee", w);
  if (r.valid)
    for (const auto& [key, index] : {std::pair{"point", r.point}, std::pair{"best", r.best}, {"knee", r.knee}})
      if (index >= points)
        throw UsageError(
            fmt::format("{}: index {} is past the document's {} points", json_path(w, key), index, points));
  r.tolerance = json_field<double>(j, "tolerance", w);
  r.shortfall_samples_per_s = json_field<double>(j, "shortfall_samples_per_s", w);
  r.numa = json_field<std::string>(j, "numa", w);
  r.binding_helped = json_field<bool>(j, "binding_helped", w);
  r.numa_reason = json_field<std::string>(j, "numa_reason", w);
  r.numactl = json_field<std::string>(j, "numactl", w);
  r.dataloader = json_field<std::string>(j, "dataloader", w);
  r.pin_memory_note = json_field<std::string>(j, "pin_memory_note", w);
  r.oversubscribed = json_field<bool>(j, "oversubscribed", w);
  r.notes = json_field<std::vector<std::string>>(j, "notes", w);
  return r;
}

nlohmann::json tune_rule_json(const TuneRule& r) {
  return {{"rule", r.rule},
          {"value", r.value},
          {"in_sweep", r.in_sweep},
          {"swept", r.swept},
          {"measured", r.measured},
          {"num_workers", r.num_workers},
          {"samples_per_s", tune_nullable_json(r.samples_per_s)},
          {"best_num_workers", tune_nullable_json(r.best_num_workers)},
          {"best_samples_per_s", tune_nullable_json(r.best_samples_per_s)},
          {"holds", r.holds}};
}

TuneRule tune_rule_from_json(const nlohmann::json& j, const std::string& w) {
  TuneRule r;
  r.rule = json_field<std::string>(j, "rule", w);
  r.value = json_field<uint32_t>(j, "value", w);
  r.in_sweep = json_field<bool>(j, "in_sweep", w);
  r.swept = json_field<bool>(j, "swept", w);
  r.measured = json_field<bool>(j, "measured", w);
  r.num_workers = json_field<uint32_t>(j, "num_workers", w);
  r.samples_per_s = tune_nullable_field<double>(j, "samples_per_s", w);
  r.best_num_workers = tune_nullable_field<uint32_t>(j, "best_num_workers", w);
  r.best_samples_per_s = tune_nullable_field<double>(j, "best_samples_per_s", w);
  r.holds = json_field<bool>(j, "holds", w);
  return r;
}

TuneClusterSection tune_cluster_from_json(const nlohmann::json& j, const std::string& w) {
  TuneClusterSection c;
  c.launcher = json_field<std::string>(j, "launcher", w);
  c.hosts = json_field<int>(j, "hosts", w);
  c.mpi_ranks = json_field<int>(j, "mpi_ranks", w);
  c.gpu_ranks = json_field<uint32_t>(j, "gpu_ranks", w);
  c.dataset_placement = json_field<std::string>(j, "dataset_placement", w);
  c.dataset_placement_how = json_field<std::string>(j, "dataset_placement_how", w);
  c.merge = json_field<std::string>(j, "merge", w);
  return c;
}

}  // namespace

nlohmann::json tune_document_json(const TuneDocument& doc) {
  nlohmann::json j = {{"target", target_section_json(doc.target)},
                      {"targets", targets_section_json(doc.targets)},
                      {"dataset", dataset_section_json(doc.dataset)},
                      {"loader", tune_loader_json(doc.loader)},
                      {"demand", tune_demand_json(doc.demand)},
                      {"tune", tune_sweep_json(doc.tune)},
                      {"recommendation", tune_recommendation_json(doc.recommendation)},
                      {"partial", doc.partial},
                      {"warnings", doc.warnings}};
  j.update(header_json(doc.header, "tune"));
  j["points"] = nlohmann::json::array();
  for (const auto& p : doc.points) j["points"].push_back(tune_point_json(p));
  j["rules"] = nlohmann::json::array();
  for (const auto& r : doc.rules) j["rules"].push_back(tune_rule_json(r));
  if (doc.best_run) j["best_run"] = loader_results_json(*doc.best_run);
  if (const auto& c = doc.cluster)
    j["cluster"] = {{"launcher", c->launcher},
                    {"hosts", c->hosts},
                    {"mpi_ranks", c->mpi_ranks},
                    {"gpu_ranks", c->gpu_ranks},
                    {"dataset_placement", c->dataset_placement},
                    {"dataset_placement_how", c->dataset_placement_how},
                    {"merge", c->merge}};
  return j;
}

TuneDocument tune_document_from_json(const nlohmann::json& j, const std::string& where) {
  TuneDocument d;
  d.header = header_from_json(j, "tune", where);
  d.target = target_section_from_json(json_at(j, "target", where), json_path(where, "target"), TargetKeys::kRead);
  d.targets = targets_section_from_json(json_at(j, "targets", where), json_path(where, "targets"));
  d.dataset = dataset_section_from_json(json_at(j, "dataset", where), json_path(where, "dataset"));
  d.loader = tune_loader_from_json(json_at(j, "loader", where), json_path(where, "loader"));
  d.demand = tune_demand_from_json(json_at(j, "demand", where), json_path(where, "demand"));
  d.tune = tune_sweep_from_json(json_at(j, "tune", where), json_path(where, "tune"));
  const nlohmann::json& pts = json_array_at(j, "points", where);
  const std::string pw = json_path(where, "points");
  for (size_t i = 0; i < pts.size(); ++i) d.points.push_back(tune_point_from_json(pts[i], json_path(pw, i)));
  d.recommendation = tune_recommendation_from_json(json_at(j, "recommendation", where),
                                                   json_path(where, "recommendation"), d.points.size());
  const nlohmann::json& rules = json_array_at(j, "rules", where);
  const std::string rw = json_path(where, "rules");
  for (size_t i = 0; i < rules.size(); ++i) d.rules.push_back(tune_rule_from_json(rules[i], json_path(rw, i)));
  if (j.contains("best_run"))  // absent when no run finished
    d.best_run = run_results_from_json(j.at("best_run"), json_path(where, "best_run"));
  if (j.contains("cluster"))  // a tune across hosts only
    d.cluster = tune_cluster_from_json(json_object_at(j, "cluster", where), json_path(where, "cluster"));
  d.partial = json_field<bool>(j, "partial", where);
  d.warnings = json_field<std::vector<std::string>>(j, "warnings", where);
  return d;
}

void write_tune_document(const std::string& path, const TuneDocument& doc) {
  write_json_file(path, tune_document_json(doc));
}

std::string render_tune_html(const TuneDocument& doc) { return render_html_report({tune_document_json(doc)}); }

}  // namespace ioprobe
