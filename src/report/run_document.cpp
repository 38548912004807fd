#include "report/run_document.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "report/error_text.hpp"

namespace ioprobe {

RunResults run_results_of(const LoaderResult& r) {
  RunResults o;
  o.samples = r.samples;
  o.bytes = r.bytes;
  o.io_bytes = r.io_bytes;
  o.errors = r.errors;
  o.elapsed_s = static_cast<double>(r.elapsed_ns) / 1e9;
  o.epochs_completed = r.epochs_completed;
  o.stop_reason = r.stop_reason;
  // Timeline, batch wait, consumer wait and first batch: merged over ranks by LoaderResult::merge.
  o.first_batch_s = static_cast<double>(r.first_batch_ns) / 1e9;
  o.file_latency = r.file_latency;
  o.open_latency = r.open_latency;
  o.batch_wait = r.batch_wait;
  o.consumer_wait_s = static_cast<double>(r.wait_ns) / 1e9;
  o.cpu_user_s = r.cpu_user_s;
  o.cpu_sys_s = r.cpu_sys_s;
  o.timeline = r.timeline;
  o.workers = nlohmann::json::array();
  for (const auto& w : r.workers) {
    o.decoded += w.decoded;
    o.decode_errors += w.decode_errors;
    o.decoded_pixels += w.decoded_pixels;
    o.decode_cpu_ns += w.decode_cpu_ns;
  }
  for (const auto& w : r.workers)
    o.workers.push_back(
        {{"rank", w.rank},
         {"worker", w.worker},
         {"files", w.files},
         {"bytes", w.bytes},
         {"io_bytes", w.io_bytes},
         {"errors", w.errors},
         {"busy_s", static_cast<double>(w.busy_ns) / 1e9},
         {"cpu_work_s", static_cast<double>(w.cpu_work_ns) / 1e9},
         {"put_cpu_s", static_cast<double>(w.put_cpu_ns) / 1e9},
         {"other_cpu_s", static_cast<double>(w.other_cpu_ns) / 1e9},
         {"runq_wait_s",
          w.runq_wait_ns < 0 ? nlohmann::json(nullptr) : nlohmann::json(static_cast<double>(w.runq_wait_ns) / 1e9)},
         {"cpu_list", w.cpu_list},
         {"numa", w.numa}});
  o.error_samples = r.error_samples;
  const ErrorSpread spread = r.error_spread();
  o.error_files = spread.files;
  o.error_files_exact = spread.complete;
  return o;
}

void RunResults::merge(const RunResults& o) {
  if (timeline.interval_ns() != o.timeline.interval_ns())
    throw UsageError(fmt::format("cannot merge results with timeline intervals of {} s and {} s: their timelines "
                                 "cannot be added interval by interval",
                                 timeline.interval_s(), o.timeline.interval_s()));
  timeline.merge(o.timeline);
  samples += o.samples;
  bytes += o.bytes;
  io_bytes += o.io_bytes;
  errors += o.errors;
  elapsed_s = std::max(elapsed_s, o.elapsed_s);
  epochs_completed = std::min(epochs_completed, o.epochs_completed);
  if ((stop_reason.empty() || stop_reason == "completed") && !o.stop_reason.empty()) stop_reason = o.stop_reason;
  first_batch_s = std::max(first_batch_s, o.first_batch_s);
  file_latency.merge(o.file_latency);
  open_latency.merge(o.open_latency);
  batch_wait.merge(o.batch_wait);
  consumer_wait_s += o.consumer_wait_s;
  cpu_user_s += o.cpu_user_s;
  cpu_sys_s += o.cpu_sys_s;
  if (!workers.is_array()) workers = nlohmann::json::array();
  for (const auto& w : o.workers) workers.push_back(w);
  for (const auto& e : o.error_samples) add_error(error_samples, e, kMaxErrorSamples);
  // As LoaderResult::merge: exact while only one part failed, else the larger as a lower bound.
  if (o.errors > 0 && errors > o.errors) {
    error_files = std::max(error_files, o.error_files);
    error_files_exact = false;
  } else if (o.errors > 0) {
    error_files = o.error_files;
    error_files_exact = o.error_files_exact;
  }
  decoded += o.decoded;
  decode_errors += o.decode_errors;
  decoded_pixels += o.decoded_pixels;
  decode_cpu_ns += o.decode_cpu_ns;
}

nlohmann::json run_results_json(const RunResults& r) {
  const double elapsed = r.elapsed_s;
  const double cpu_s = r.cpu_user_s + r.cpu_sys_s;
  nlohmann::json j = {{"samples", r.samples},
                      {"bytes", r.bytes},
                      {"io_bytes", r.io_bytes},
                      {"errors", r.errors},
                      {"elapsed_s", elapsed},
                      {"samples_per_s", elapsed > 0 ? static_cast<double>(r.samples) / elapsed : 0.0},
                      {"bytes_per_s", elapsed > 0 ? static_cast<double>(r.bytes) / elapsed : 0.0},
                      {"files_per_s", elapsed > 0 ? static_cast<double>(r.samples + r.errors) / elapsed : 0.0},
                      {"epochs_completed", r.epochs_completed},
                      {"stop_reason", r.stop_reason},
                      {"first_batch_s", r.first_batch_s},
                      {"file_latency_us", latency_us_json(r.file_latency)},
                      {"open_close_latency_us", latency_us_json(r.open_latency)},
                      {"batch_wait_us", latency_us_json(r.batch_wait)},
                      {"consumer_wait_s", r.consumer_wait_s},
                      {"cpu",
                       {{"user_s", r.cpu_user_s},
                        {"sys_s", r.cpu_sys_s},
                        {"per_sample_us", r.samples ? cpu_s * 1e6 / static_cast<double>(r.samples) : 0.0}}},
                      {"timeline_interval_s", r.timeline.interval_s()},
                      {"timeline", timeline_points_json(r.timeline)},
                      {"workers", r.workers.is_array() ? r.workers : nlohmann::json::array()},
                      {"error_samples", nlohmann::json::array()},
                      {"error_details", nlohmann::json::array()}};
  for (const ErrorRecord& e : r.error_samples) {
    j["error_samples"].push_back(error_text(e));
    j["error_details"].push_back(error_record_json(e));
  }
  ErrorSpread spread = error_spread(r.error_samples, r.errors);
  if (r.error_files_exact && r.errors > 0) spread = {r.error_files, true};
  else spread.files = std::max(spread.files, r.error_files);
  j["error_files"] = spread.files;
  j["error_files_complete"] = spread.complete;
  if (r.decoded + r.decode_errors > 0) {
    const double dcpu = static_cast<double>(r.decode_cpu_ns) / 1e9, mp = static_cast<double>(r.decoded_pixels) / 1e6;
    const uint64_t n = r.decoded + r.decode_errors;
    j["decode"] = {{"codec", "libjpeg-turbo"},
                   {"samples", r.decoded},
                   {"errors", r.decode_errors},
                   {"cpu_s", dcpu},
                   {"cpu_us_per_sample", dcpu * 1e6 / static_cast<double>(n)},
                   {"megapixels", mp},
                   {"us_per_megapixel", mp > 0 ? dcpu * 1e6 / mp : 0.0}};
  }
  return j;
}

RunResults run_results_from_json(const nlohmann::json& j, const std::string& where) {
  auto get = [&](const char* key) -> const nlohmann::json& { return json_at(j, key, where); };
  RunResults r;
  try {
    r.samples = get("samples").get<uint64_t>();
    r.bytes = get("bytes").get<uint64_t>();
    r.io_bytes = get("io_bytes").get<uint64_t>();
    r.errors = get("errors").get<uint64_t>();
    r.elapsed_s = get("elapsed_s").get<double>();
    r.epochs_completed = get("epochs_completed").get<uint32_t>();
    r.stop_reason = get("stop_reason").get<std::string>();
    r.first_batch_s = get("first_batch_s").get<double>();
    r.consumer_wait_s = get("consumer_wait_s").get<double>();
    const nlohmann::json& cpu = get("cpu");
    r.cpu_user_s = json_at(cpu, "user_s", where + ".cpu").get<double>();
    r.cpu_sys_s = json_at(cpu, "sys_s", where + ".cpu").get<double>();
    r.workers = get("workers");
    if (!r.workers.is_array()) throw UsageError(fmt::format("{}: 'workers' is not an array", where));
    if (j.contains("error_details")) {
      for (const auto& e : get("error_details"))
        r.error_samples.push_back(error_record_from_json(e, where + ".error_details"));
    } else {  // a document written before error_details: the texts, with no errno
      for (const auto& s : get("error_samples").get<std::vector<std::string>>())
        r.error_samples.push_back({.detail = s});
    }
    r.error_files = j.value("error_files", uint64_t{0});
    r.error_files_exact = j.value("error_files_complete", false);
    if (j.contains("decode")) {  // --decode runs only
      const nlohmann::json& d = get("decode");
      const std::string dw = where + ".decode";
      r.decoded = json_at(d, "samples", dw).get<uint64_t>();
      r.decode_errors = json_at(d, "errors", dw).get<uint64_t>();
      r.decode_cpu_ns = static_cast<int64_t>(std::llround(json_at(d, "cpu_s", dw).get<double>() * 1e9));
      r.decoded_pixels = static_cast<uint64_t>(std::llround(json_at(d, "megapixels", dw).get<double>() * 1e6));
    }
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: a value has the wrong type: {}", where, e.what()));
  }
  r.file_latency = latency_from_us_json(get("file_latency_us"), where + ".file_latency_us");
  r.open_latency = latency_from_us_json(get("open_close_latency_us"), where + ".open_close_latency_us");
  r.batch_wait = latency_from_us_json(get("batch_wait_us"), where + ".batch_wait_us");
  const nlohmann::json& iv = get("timeline_interval_s");
  if (!iv.is_number()) throw UsageError(fmt::format("{}: timeline_interval_s {} is not a number", where, iv.dump()));
  r.timeline = timeline_from_json(get("timeline"), iv.get<double>(), where);
  return r;
}

void to_json(nlohmann::json& j, const RunResults& r) { j = run_results_json(r); }
void from_json(const nlohmann::json& j, RunResults& r) { r = run_results_from_json(j, "results"); }

nlohmann::json loader_results_json(const LoaderResult& r) { return run_results_json(run_results_of(r)); }

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

nlohmann::json ingest_json(const IngestResult& in, double sample_bytes) {
  const Demand& d = in.demand;
  return {{"accelerator", d.accelerator},
          {"accelerator_name", d.accelerator_name},
          {"model", d.model},
          {"gpus", d.gpus},
          {"rate_family", d.rate_family},
          {"samples_per_s_per_gpu", d.samples_per_s_per_gpu},
          {"source", d.source},
          {"required_samples_per_s", in.required_samples_per_s},
          {"required_bytes_per_s", in.required_bytes_per_s},
          {"sample_bytes", sample_bytes},
          {"delivered_samples_per_s", in.delivered_samples_per_s},
          {"delivered_bytes_per_s", in.delivered_bytes_per_s},
          {"accelerator_utilization", in.accelerator_utilization},
          {"accelerator_utilization_min", in.accelerator_utilization_min},
          {"au_target", d.au_target},
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
}

void add_consumer_model(nlohmann::json& loader, const LoaderConfig& l, const std::string& cal_path,
                        const nlohmann::json& cal) {
  loader["main_cpu_per_batch_us"] = l.main_cpu_per_batch_us;
  // Of the loop cost, the read the worker does itself (not burned; loader_run.hpp loop_burn_us).
  loader["own_read_cpu_per_file_us"] = l.engine == "psync" ? l.own_read_psync_us : l.own_read_io_uring_us;
  loader["worker_startup_cpu_us"] = l.worker_startup_cpu_us;
  loader["worker_put_cpu_per_sample_us"] = l.worker_put_cpu_per_sample_us;
  if (l.python_gil) {
    loader["worker_put_gil_share"] = l.worker_put_gil_share;
    // Measured by the calibration, or its stand-in (all of the put) with the reason.
    const nlohmann::json* g = cal.is_object() && cal.contains("figures") && cal.at("figures").contains("feeder_gil")
                                  ? &cal.at("figures").at("feeder_gil")
                                  : nullptr;
    const bool measured = g && g->value("measured", false);
    const std::string why = g ? g->value("method", std::string()) : std::string();
    loader["worker_put_gil_share_basis"] = measured
                                               ? "measured"
                                               : "not measured (" +
                                                     (why.empty() ? std::string("the calibration predates the figure")
                                                                  : why) +
                                                     ")";
  }
  loader["worker_other_cpu_per_sample_us"] = l.worker_other_cpu_per_sample_us;
  loader["tensors_per_batch"] = l.tensors_per_batch;
  loader["main_startup_cpu_us"] = l.main_startup_cpu_us;
  loader["decode"] = l.decode_jpeg ? "jpeg" : "none";
  loader["pin_memory"] = l.pin_memory;
  loader["pin_bytes_per_batch"] = l.pin_bytes_per_batch;
  if (cal.is_object())
    loader["calibration"] = {{"file", escape_bytes(cal_path)},
                             {"code", cal.at("code").value("file", "")},
                             {"function", cal.at("code").value("function", "")},
                             {"host", cal.at("host").value("hostname", "")},
                             {"torch_version", cal.at("python").value("torch_version", "")},
                             {"batch_size", cal.value("batch_size", 0)},
                             {"created", cal.value("created", "")}};
}

}  // namespace ioprobe
