#include "report/run_document.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "engine/engine_kind.hpp"
#include "report/error_text.hpp"

namespace ioprobe {

namespace {

double seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }
int64_t ns_of(double s) { return static_cast<int64_t>(std::llround(s * 1e9)); }

nlohmann::json worker_row(const WorkerStats& w) {
  nlohmann::json row = {{"rank", w.rank},
                        {"worker", w.worker},
                        {"files", w.files},
                        {"bytes", w.bytes},
                        {"io_bytes", w.io_bytes},
                        {"errors", w.errors},
                        {"busy_s", seconds(w.busy_ns)},
                        {"cpu_work_s", seconds(w.cpu_work_ns)},
                        {"put_cpu_s", seconds(w.put_cpu_ns)},
                        {"other_cpu_s", seconds(w.other_cpu_ns)},
                        {"runq_wait_s",
                         w.runq_wait_ns < 0 ? nlohmann::json(nullptr) : nlohmann::json(seconds(w.runq_wait_ns))},
                        {"cpu_list", w.cpu_list},
                        {"numa", w.numa}};
  if (w.decoded + w.decode_errors > 0) {  // --decode jpeg: this worker's share of the decode object
    row["decoded"] = w.decoded;
    row["decode_errors"] = w.decode_errors;
    row["decode_cpu_s"] = seconds(w.decode_cpu_ns);
    row["decoded_pixels"] = w.decoded_pixels;
  }
  return row;
}

WorkerStats worker_of_row(const nlohmann::json& x, const std::string& w) {
  WorkerStats s;
  s.rank = json_field<int>(x, "rank", w);
  s.worker = json_field<int>(x, "worker", w);
  s.files = json_field<uint64_t>(x, "files", w);
  s.bytes = json_field<uint64_t>(x, "bytes", w);
  s.io_bytes = json_field<uint64_t>(x, "io_bytes", w);
  s.errors = json_field<uint64_t>(x, "errors", w);
  s.busy_ns = ns_of(json_field<double>(x, "busy_s", w));
  s.cpu_work_ns = ns_of(json_field<double>(x, "cpu_work_s", w));
  // Older documents: no feeder or sharer thread, the run queue wait not measured.
  s.put_cpu_ns = ns_of(json_field_or<double>(x, "put_cpu_s", w, 0));
  s.other_cpu_ns = ns_of(json_field_or<double>(x, "other_cpu_s", w, 0));
  const auto runq = x.find("runq_wait_s");
  s.runq_wait_ns = runq == x.end() || runq->is_null() ? -1 : ns_of(json_as<double>(*runq, json_path(w, "runq_wait_s")));
  // Present when the worker decoded (--decode jpeg).
  s.decoded = json_field_or<uint64_t>(x, "decoded", w, 0);
  s.decode_errors = json_field_or<uint64_t>(x, "decode_errors", w, 0);
  s.decode_cpu_ns = ns_of(json_field_or<double>(x, "decode_cpu_s", w, 0));
  s.decoded_pixels = json_field_or<uint64_t>(x, "decoded_pixels", w, 0);
  s.cpu_list = json_field<std::string>(x, "cpu_list", w);
  s.numa = json_field<std::string>(x, "numa", w);
  return s;
}

// results.epochs (device_io_report.hpp epochs_json) into the result's per-epoch fields: samples,
// bytes, the epoch's time when it has one (0 else), residency while each epoch has one.
void read_epochs(const nlohmann::json& epochs, const std::string& where, LoaderResult& r) {
  if (!epochs.is_array()) json_detail::throw_mistyped(epochs, where, "an array");
  bool residency = true;
  for (size_t i = 0; i < epochs.size(); ++i) {
    const std::string w = json_path(where, i);
    r.epoch_samples.push_back(json_field<uint64_t>(epochs[i], "samples", w));
    r.epoch_bytes.push_back(json_field<uint64_t>(epochs[i], "bytes", w));
    r.epoch_ns.push_back(ns_of(json_field_or<double>(epochs[i], "elapsed_s", w, 0)));  // none: not timed
    const auto res = epochs[i].find("residency");
    residency = residency && res != epochs[i].end() && !res->is_null();
    if (residency) r.epoch_resident_fraction.push_back(json_as<double>(*res, json_path(w, "residency")));
  }
}

}  // namespace

ResultRates result_rates(const LoaderResult& r) {
  ResultRates x;
  x.elapsed_s = seconds(r.elapsed_ns);
  const double elapsed = x.elapsed_s;
  x.samples_per_s = elapsed > 0 ? static_cast<double>(r.samples) / elapsed : 0.0;
  x.bytes_per_s = elapsed > 0 ? static_cast<double>(r.bytes) / elapsed : 0.0;
  x.files_per_s = elapsed > 0 ? static_cast<double>(r.samples + r.errors) / elapsed : 0.0;
  const double cpu_s = r.cpu_user_s + r.cpu_sys_s;
  x.cpu_per_sample_us = r.samples ? cpu_s * 1e6 / static_cast<double>(r.samples) : 0.0;
  return x;
}

std::optional<DecodeTotals> decode_totals(const LoaderResult& r) {
  uint64_t decoded = 0, decode_errors = 0, decoded_pixels = 0;
  int64_t decode_cpu_ns = 0;
  for (const auto& w : r.workers) {
    decoded += w.decoded;
    decode_errors += w.decode_errors;
    decoded_pixels += w.decoded_pixels;
    decode_cpu_ns += w.decode_cpu_ns;
  }
  if (decoded + decode_errors == 0) return std::nullopt;
  DecodeTotals d;
  d.samples = decoded;
  d.errors = decode_errors;
  d.cpu_s = seconds(decode_cpu_ns);
  d.megapixels = static_cast<double>(decoded_pixels) / 1e6;
  d.cpu_us_per_sample = d.cpu_s * 1e6 / static_cast<double>(decoded + decode_errors);
  d.us_per_megapixel = d.megapixels > 0 ? d.cpu_s * 1e6 / d.megapixels : 0.0;
  return d;
}

nlohmann::json loader_results_json(const LoaderResult& r) {
  const ResultRates x = result_rates(r);
  nlohmann::json workers = nlohmann::json::array();
  for (const auto& w : r.workers) workers.push_back(worker_row(w));
  nlohmann::json j = {{"samples", r.samples},
                      {"bytes", r.bytes},
                      {"io_bytes", r.io_bytes},
                      {"errors", r.errors},
                      {"elapsed_s", x.elapsed_s},
                      {"samples_per_s", x.samples_per_s},
                      {"bytes_per_s", x.bytes_per_s},
                      {"files_per_s", x.files_per_s},
                      {"epochs_completed", r.epochs_completed},
                      {"stop_reason", to_string(r.stop)},
                      {"first_batch_s", seconds(r.first_batch_ns)},
                      {"file_latency_us", latency_us_json(r.file_latency)},
                      {"open_close_latency_us", latency_us_json(r.open_latency)},
                      {"batch_wait_us", latency_us_json(r.batch_wait)},
                      {"consumer_wait_s", seconds(r.wait_ns)},
                      {"cpu",
                       {{"user_s", r.cpu_user_s},
                        {"sys_s", r.cpu_sys_s},
                        {"per_sample_us", x.cpu_per_sample_us},
                        {"cache_prep_s", r.cache_prep_cpu_s}}},
                      {"timeline_interval_s", r.timeline.interval_s()},
                      {"timeline", timeline_points_json(r.timeline)},
                      {"workers", workers},
                      {"error_samples", nlohmann::json::array()},
                      {"error_details", nlohmann::json::array()}};
  for (const ErrorRecord& e : r.error_samples) {
    j["error_samples"].push_back(error_text(e));
    j["error_details"].push_back(error_record_json(e));
  }
  const ErrorSpread spread = r.error_spread();
  j["error_files"] = spread.files;
  j["error_files_complete"] = spread.complete;
  if (const auto d = decode_totals(r))
    j["decode"] = {{"codec", "libjpeg-turbo"},
                   {"samples", d->samples},
                   {"errors", d->errors},
                   {"cpu_s", d->cpu_s},
                   {"cpu_us_per_sample", d->cpu_us_per_sample},
                   {"megapixels", d->megapixels},
                   {"us_per_megapixel", d->us_per_megapixel}};
  return j;
}

LoaderResult run_results_from_json(const nlohmann::json& j, const std::string& where) {
  LoaderResult r;
  r.samples = json_field<uint64_t>(j, "samples", where);
  r.bytes = json_field<uint64_t>(j, "bytes", where);
  r.io_bytes = json_field<uint64_t>(j, "io_bytes", where);
  r.errors = json_field<uint64_t>(j, "errors", where);
  r.elapsed_ns = ns_of(json_field<double>(j, "elapsed_s", where));
  r.epochs_completed = json_field<uint32_t>(j, "epochs_completed", where);
  r.stop = loader_stop_field(j, "stop_reason", where);
  r.first_batch_ns = ns_of(json_field<double>(j, "first_batch_s", where));
  r.wait_ns = ns_of(json_field<double>(j, "consumer_wait_s", where));
  const nlohmann::json& cpu = json_at(j, "cpu", where);
  r.cpu_user_s = json_field<double>(cpu, "user_s", json_path(where, "cpu"));
  r.cpu_sys_s = json_field<double>(cpu, "sys_s", json_path(where, "cpu"));
  r.cache_prep_cpu_s = json_field_or<double>(cpu, "cache_prep_s", json_path(where, "cpu"), 0.0);  // older documents
  const nlohmann::json& workers = json_array_at(j, "workers", where);
  for (size_t i = 0; i < workers.size(); ++i)
    r.workers.push_back(worker_of_row(workers[i], json_path(json_path(where, "workers"), i)));
  if (j.contains("error_details")) {
    const nlohmann::json& d = json_array_at(j, "error_details", where);
    for (size_t i = 0; i < d.size(); ++i)
      r.error_samples.push_back(error_record_from_json(d[i], json_path(json_path(where, "error_details"), i)));
  } else {  // a document written before error_details: the texts, with no errno
    for (const auto& s : json_field<std::vector<std::string>>(j, "error_samples", where))
      r.error_samples.push_back({.detail = s});
  }
  // Older documents have no exact count: the kept records' lower bound stands.
  r.error_files = json_field_or<uint64_t>(j, "error_files", where, 0);
  r.error_files_exact = json_field_or<bool>(j, "error_files_complete", where, false);
  uint64_t row_decodes = 0;
  for (const auto& w : r.workers) row_decodes += w.decoded + w.decode_errors;
  if (j.contains("decode") && row_decodes == 0 && !r.workers.empty()) {
    // An older document kept only the decode totals: they stay on its first worker row.
    const nlohmann::json& d = json_at(j, "decode", where);
    const std::string dw = json_path(where, "decode");
    WorkerStats& first = r.workers.front();
    first.decoded = json_field<uint64_t>(d, "samples", dw);
    first.decode_errors = json_field<uint64_t>(d, "errors", dw);
    first.decode_cpu_ns = ns_of(json_field<double>(d, "cpu_s", dw));
    first.decoded_pixels = static_cast<uint64_t>(std::llround(json_field<double>(d, "megapixels", dw) * 1e6));
  }
  r.file_latency = latency_from_us_json(json_at(j, "file_latency_us", where), json_path(where, "file_latency_us"));
  r.open_latency = latency_from_us_json(json_at(j, "open_close_latency_us", where),
                                        json_path(where, "open_close_latency_us"));
  r.batch_wait = latency_from_us_json(json_at(j, "batch_wait_us", where), json_path(where, "batch_wait_us"));
  r.timeline = timeline_from_json(json_at(j, "timeline", where), json_field<double>(j, "timeline_interval_s", where),
                                  where);
  if (j.contains("epochs")) read_epochs(j.at("epochs"), json_path(where, "epochs"), r);
  return r;
}

namespace {
nlohmann::json h2d_json(const IngestResult& in) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& g : in.gpu_links)
    links.push_back(
        {{"pci_address", g.pci_address},
         {"numa_node", g.numa_node},
         {"bytes_per_s_per_direction",
          g.bytes_per_s_per_direction > 0 ? nlohmann::json(g.bytes_per_s_per_direction) : nlohmann::json(nullptr)},
         {"basis", g.basis},
         {"downtrained", g.downtrained}});
  nlohmann::json copy = nullptr;
  if (in.h2d_copies > 0 || !in.h2d_error.empty())
    copy = {{"api", "cudaMemcpyAsync from cudaHostAlloc memory, one stream per rank, synchronized per batch"},
            {"copies", in.h2d_copies},
            {"bytes", in.h2d_bytes},
            {"seconds", in.h2d_s},
            {"bytes_per_s", in.h2d_bytes_per_s},
            {"share_of_step", in.h2d_share_of_step},
            {"error", in.h2d_error}};
  return {{"copy", copy},
          {"demand_bytes_per_s_per_gpu", in.demand_bytes_per_s_per_gpu},
          {"gpus", links},
          {"limiting", in.h2d_limiting >= 0
                           ? nlohmann::json(in.gpu_links[static_cast<size_t>(in.h2d_limiting)].pci_address)
                           : nlohmann::json(nullptr)},
          {"label", "nominal per-direction ceilings, computed from each link's speed and width"}};
}
}  // namespace

nlohmann::json demand_json(const Demand& d) {
  return {{"accelerator", d.accelerator},
          {"accelerator_name", d.accelerator_name},
          {"model", d.model},
          {"gpus", d.gpus},
          {"rate_family", d.rate_family},
          {"samples_per_s_per_gpu", d.samples_per_s_per_gpu},
          {"source", d.source},
          {"au_target", d.au_target}};
}

nlohmann::json ingest_json(const IngestResult& in, double sample_bytes) {
  nlohmann::json j = {{"required_samples_per_s", in.required_samples_per_s},
                      {"required_bytes_per_s", in.required_bytes_per_s},
                      {"sample_bytes", sample_bytes},
                      {"delivered_samples_per_s", in.delivered_samples_per_s},
                      {"delivered_bytes_per_s", in.delivered_bytes_per_s},
                      {"accelerator_utilization", in.accelerator_utilization},
                      {"accelerator_utilization_min", in.accelerator_utilization_min},
                      {"consumer_wait_s", in.consumer_wait_s},
                      {"consumer_lag_s", in.consumer_lag_s},
                      {"worker_busy_fraction", in.worker_busy_fraction},
                      {"gpus_fed", in.gpus_fed},
                      {"main_busy_fraction", in.main_busy_fraction},
                      {"main_ceiling_samples_per_s", in.main_ceiling_samples_per_s},
                      {"pin_busy_fraction", in.pin_busy_fraction},
                      {"pin_ceiling_samples_per_s", in.pin_ceiling_samples_per_s},
                      {"worker_cpu_fraction", in.worker_cpu_fraction},
                      {"worker_runq_fraction",
                       in.worker_runq_fraction < 0 ? nlohmann::json(nullptr) : nlohmann::json(in.worker_runq_fraction)},
                      {"worker_feeder_busy_fraction", in.worker_feeder_busy_fraction},
                      {"worker_feeder_ceiling_samples_per_s", in.worker_feeder_ceiling_samples_per_s},
                      {"verdict", in.verdict},
                      {"verdict_text", in.verdict_text},
                      {"host_to_device", h2d_json(in)}};
  j.update(demand_json(in.demand));
  return j;
}

RunConsumerModel consumer_model(const LoaderConfig& l, const std::string& cal_path, const nlohmann::json& cal) {
  RunConsumerModel m;
  m.main_cpu_per_batch_us = l.costs.main_cpu_per_batch_us;
  // Of the loop cost, the read the worker does itself (not burned; loader_run.hpp loop_burn_us).
  m.own_read_cpu_per_file_us = l.engine == EngineKind::kPsync ? l.costs.own_read_psync_us
                                                              : l.costs.own_read_io_uring_us;
  m.worker_startup_cpu_us = l.costs.worker.startup_cpu_us;
  m.worker_put_cpu_per_sample_us = l.costs.worker.put_us;
  if (l.costs.python_gil) {
    m.worker_put_gil_share = l.costs.put_gil_share;
    // Measured by the calibration, or its stand-in (all of the put) with the reason.
    const nlohmann::json* g = cal.is_object() && cal.contains("figures") && cal.at("figures").contains("feeder_gil")
                                  ? &cal.at("figures").at("feeder_gil")
                                  : nullptr;
    const bool measured = g && g->value("measured", false);
    const std::string why = g ? g->value("method", std::string()) : std::string();
    m.worker_put_gil_share_basis = measured
                                       ? "measured"
                                       : "not measured (" +
                                             (why.empty() ? std::string("the calibration predates the figure") : why) +
                                             ")";
  }
  m.worker_other_cpu_per_sample_us = l.costs.worker.other_us;
  m.tensors_per_batch = l.costs.tensors_per_batch;
  m.main_startup_cpu_us = l.costs.main_startup_cpu_us;
  m.decode = l.decode_jpeg ? "jpeg" : "none";
  m.pin_memory = l.pin_memory;
  m.pin_bytes_per_batch = l.pin_bytes_per_batch;
  if (cal.is_object())
    m.calibration = RunCalibrationRef{.file = escape_bytes(cal_path),
                                      .code = cal.at("code").value("file", ""),
                                      .function = cal.at("code").value("function", ""),
                                      .host = cal.at("host").value("hostname", ""),
                                      .torch_version = cal.at("python").value("torch_version", ""),
                                      .batch_size = cal.value("batch_size", 0),
                                      .created = cal.value("created", "")};
  return m;
}

void consumer_model_json(const RunConsumerModel& m, nlohmann::json& loader) {
  loader["main_cpu_per_batch_us"] = m.main_cpu_per_batch_us;
  loader["own_read_cpu_per_file_us"] = m.own_read_cpu_per_file_us;
  loader["worker_startup_cpu_us"] = m.worker_startup_cpu_us;
  loader["worker_put_cpu_per_sample_us"] = m.worker_put_cpu_per_sample_us;
  if (m.worker_put_gil_share) {
    loader["worker_put_gil_share"] = *m.worker_put_gil_share;
    loader["worker_put_gil_share_basis"] = m.worker_put_gil_share_basis;
  }
  loader["worker_other_cpu_per_sample_us"] = m.worker_other_cpu_per_sample_us;
  loader["tensors_per_batch"] = m.tensors_per_batch;
  loader["main_startup_cpu_us"] = m.main_startup_cpu_us;
  loader["decode"] = m.decode;
  loader["pin_memory"] = m.pin_memory;
  loader["pin_bytes_per_batch"] = m.pin_bytes_per_batch;
  if (const auto& c = m.calibration)
    loader["calibration"] = {{"file", c->file},
                             {"code", c->code},
                             {"function", c->function},
                             {"host", c->host},
                             {"torch_version", c->torch_version},
                             {"batch_size", c->batch_size},
                             {"created", c->created}};
}

void add_consumer_model(nlohmann::json& loader, const LoaderConfig& l, const std::string& cal_path,
                        const nlohmann::json& cal) {
  consumer_model_json(consumer_model(l, cal_path, cal), loader);
}

}  // namespace ioprobe
