#include "loader/loader_result_json.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "stats/latency_json.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

LatencyHistogram hist_of(const json& j, const char* key, const std::string& where) {
  return histogram_from_ns_json(json_at(j, key, where), json_path(where, key));
}

WorkerStats worker_of(const json& x, const std::string& w) {
  WorkerStats s;
  s.rank = json_field<int>(x, "rank", w);
  s.worker = json_field<int>(x, "worker", w);
  s.files = json_field<uint64_t>(x, "files", w);
  s.bytes = json_field<uint64_t>(x, "bytes", w);
  s.io_bytes = json_field<uint64_t>(x, "io_bytes", w);
  s.errors = json_field<uint64_t>(x, "errors", w);
  s.busy_ns = json_field<int64_t>(x, "busy_ns", w);
  s.cpu_work_ns = json_field<int64_t>(x, "cpu_work_ns", w);
  s.put_cpu_ns = json_field_or<int64_t>(x, "put_cpu_ns", w, 0);       // older senders: no feeder thread
  s.other_cpu_ns = json_field_or<int64_t>(x, "other_cpu_ns", w, 0);   // older senders: no sharer thread
  s.runq_wait_ns = json_field_or<int64_t>(x, "runq_wait_ns", w, -1);  // older senders: not measured
  // --decode jpeg's counters; older senders decoded nothing.
  s.decoded = json_field_or<uint64_t>(x, "decoded", w, 0);
  s.decode_errors = json_field_or<uint64_t>(x, "decode_errors", w, 0);
  s.decode_cpu_ns = json_field_or<int64_t>(x, "decode_cpu_ns", w, 0);
  s.decoded_pixels = json_field_or<uint64_t>(x, "decoded_pixels", w, 0);
  s.file_latency = hist_of(x, "file_latency", w);
  s.open_latency = hist_of(x, "open_latency", w);
  s.cpu_list = json_field<std::string>(x, "cpu_list", w);
  s.numa = json_field<std::string>(x, "numa", w);
  return s;
}

RankStats rank_of(const json& x, const std::string& w) {
  RankStats k;
  k.rank = json_field<int>(x, "rank", w);
  k.batches = json_field<uint64_t>(x, "batches", w);
  k.samples = json_field<uint64_t>(x, "samples", w);
  k.bytes = json_field<uint64_t>(x, "bytes", w);
  k.wait_ns = json_field<int64_t>(x, "wait_ns", w);
  k.compute_ns = json_field<int64_t>(x, "compute_ns", w);
  k.nominal_compute_ns = json_field<int64_t>(x, "nominal_compute_ns", w);
  k.first_batch_ns = json_field<int64_t>(x, "first_batch_ns", w);
  k.elapsed_ns = json_field<int64_t>(x, "elapsed_ns", w);
  k.batch_wait = hist_of(x, "batch_wait", w);
  k.timeline = timeline_from_ns_json(json_at(x, "timeline", w), json_path(w, "timeline"));
  k.max_outstanding = json_field<uint64_t>(x, "max_outstanding", w);
  // The main-process and pin-thread counters came with --calibration / --pin-memory, the copy's
  // with --h2d; older senders ran no such stage.
  k.main_busy_ns = json_field_or<int64_t>(x, "main_busy_ns", w, 0);
  k.main_cpu_ns = json_field_or<int64_t>(x, "main_cpu_ns", w, 0);
  k.pin_busy_ns = json_field_or<int64_t>(x, "pin_busy_ns", w, 0);
  k.pin_cpu_ns = json_field_or<int64_t>(x, "pin_cpu_ns", w, 0);
  k.pin_bytes = json_field_or<uint64_t>(x, "pin_bytes", w, 0);
  k.h2d_ns = json_field_or<int64_t>(x, "h2d_ns", w, 0);
  k.h2d_bytes = json_field_or<uint64_t>(x, "h2d_bytes", w, 0);
  k.h2d_copies = json_field_or<uint64_t>(x, "h2d_copies", w, 0);
  k.h2d_device = json_field_or<int>(x, "h2d_device", w, -1);
  k.h2d_error = json_field_or<std::string>(x, "h2d_error", w, "");
  if (x.contains("deliveries")) {  // written only when recorded (LoaderConfig::record_deliveries)
    const json& d = json_array_at(x, "deliveries", w);
    for (size_t i = 0; i < d.size(); ++i) {
      const std::string dw = json_path(json_path(w, "deliveries"), i);
      if (!d[i].is_array() || d[i].size() != 4)
        throw UsageError(fmt::format("{}: a delivery is not [t_ns, samples, bytes, wait_ns]", dw));
      k.deliveries.push_back({json_as<int64_t>(d[i][0], dw + "[0]"), json_as<uint64_t>(d[i][1], dw + "[1]"),
                              json_as<uint64_t>(d[i][2], dw + "[2]"), json_as<int64_t>(d[i][3], dw + "[3]")});
    }
  }
  return k;
}

}  // namespace

json loader_result_to_json(const LoaderResult& r) {
  json error_records = json::array();
  for (const ErrorRecord& e : r.error_samples) error_records.push_back(error_record_json(e));
  json workers = json::array();
  for (const auto& w : r.workers)
    workers.push_back({{"rank", w.rank},
                       {"worker", w.worker},
                       {"files", w.files},
                       {"bytes", w.bytes},
                       {"io_bytes", w.io_bytes},
                       {"errors", w.errors},
                       {"busy_ns", w.busy_ns},
                       {"cpu_work_ns", w.cpu_work_ns},
                       {"put_cpu_ns", w.put_cpu_ns},
                       {"other_cpu_ns", w.other_cpu_ns},
                       {"runq_wait_ns", w.runq_wait_ns},
                       {"decoded", w.decoded},
                       {"decode_errors", w.decode_errors},
                       {"decode_cpu_ns", w.decode_cpu_ns},
                       {"decoded_pixels", w.decoded_pixels},
                       {"file_latency", histogram_ns_json(w.file_latency)},
                       {"open_latency", histogram_ns_json(w.open_latency)},
                       {"cpu_list", w.cpu_list},
                       {"numa", w.numa}});
  json ranks = json::array();
  for (const auto& k : r.ranks) {
    ranks.push_back({{"rank", k.rank},
                     {"batches", k.batches},
                     {"samples", k.samples},
                     {"bytes", k.bytes},
                     {"wait_ns", k.wait_ns},
                     {"compute_ns", k.compute_ns},
                     {"nominal_compute_ns", k.nominal_compute_ns},
                     {"first_batch_ns", k.first_batch_ns},
                     {"elapsed_ns", k.elapsed_ns},
                     {"batch_wait", histogram_ns_json(k.batch_wait)},
                     {"timeline", timeline_ns_json(k.timeline)},
                     {"max_outstanding", k.max_outstanding},
                     {"main_busy_ns", k.main_busy_ns},
                     {"main_cpu_ns", k.main_cpu_ns},
                     {"pin_busy_ns", k.pin_busy_ns},
                     {"pin_cpu_ns", k.pin_cpu_ns},
                     {"pin_bytes", k.pin_bytes},
                     {"h2d_ns", k.h2d_ns},
                     {"h2d_bytes", k.h2d_bytes},
                     {"h2d_copies", k.h2d_copies},
                     {"h2d_device", k.h2d_device},
                     {"h2d_error", k.h2d_error}});
    // Recorded only for tune and capacity (LoaderConfig::record_deliveries): their rates come
    // from these completion times, on the merging host too. Compact: [t_ns, samples, bytes, wait_ns].
    if (!k.deliveries.empty()) {
      json d = json::array();
      for (const auto& x : k.deliveries) d.push_back({x.t_ns, x.samples, x.bytes, x.wait_ns});
      ranks.back()["deliveries"] = std::move(d);
    }
  }
  return {{"elapsed_ns", r.elapsed_ns},
          {"epochs_completed", r.epochs_completed},
          {"partial", r.partial},
          {"stop_reason", to_string(r.stop)},
          {"stopped_on_errors", r.stopped_on_errors},
          {"samples", r.samples},
          {"bytes", r.bytes},
          {"errors", r.errors},
          {"io_bytes", r.io_bytes},
          {"error_samples", error_records},
          {"error_files", r.error_files},
          {"error_files_exact", r.error_files_exact},
          {"file_latency", histogram_ns_json(r.file_latency)},
          {"open_latency", histogram_ns_json(r.open_latency)},
          {"batch_wait", histogram_ns_json(r.batch_wait)},
          {"timeline", timeline_ns_json(r.timeline)},
          {"wait_ns", r.wait_ns},
          {"first_batch_ns", r.first_batch_ns},
          {"cpu_user_s", r.cpu_user_s},
          {"cpu_sys_s", r.cpu_sys_s},
          {"cache_prep_cpu_s", r.cache_prep_cpu_s},
          {"epoch_resident_fraction", r.epoch_resident_fraction},
          {"epoch_samples", r.epoch_samples},
          {"epoch_bytes", r.epoch_bytes},
          {"epoch_ns", r.epoch_ns},
          {"residency_method", r.residency_method},
          {"cache_notes", r.cache_notes},
          {"workers", workers},
          {"ranks", ranks}};
}

LoaderResult loader_result_from_json(const json& j, const std::string& w) {
  LoaderResult r;
  r.elapsed_ns = json_field<int64_t>(j, "elapsed_ns", w);
  r.epochs_completed = json_field<uint32_t>(j, "epochs_completed", w);
  r.partial = json_field<bool>(j, "partial", w);
  r.stop = loader_stop_field(j, "stop_reason", w);
  r.stopped_on_errors = json_field<bool>(j, "stopped_on_errors", w);
  r.samples = json_field<uint64_t>(j, "samples", w);
  r.bytes = json_field<uint64_t>(j, "bytes", w);
  r.errors = json_field<uint64_t>(j, "errors", w);
  r.io_bytes = json_field<uint64_t>(j, "io_bytes", w);
  const json& errors = json_array_at(j, "error_samples", w);
  for (size_t i = 0; i < errors.size(); ++i)
    r.error_samples.push_back(error_record_from_json(errors[i], json_path(json_path(w, "error_samples"), i)));
  // Absent from older senders: no count, so the kept records' lower bound stands.
  r.error_files = json_field_or<uint64_t>(j, "error_files", w, 0);
  r.error_files_exact = json_field_or<bool>(j, "error_files_exact", w, false);
  r.file_latency = hist_of(j, "file_latency", w);
  r.open_latency = hist_of(j, "open_latency", w);
  r.batch_wait = hist_of(j, "batch_wait", w);
  r.timeline = timeline_from_ns_json(json_at(j, "timeline", w), json_path(w, "timeline"));
  r.wait_ns = json_field<int64_t>(j, "wait_ns", w);
  r.first_batch_ns = json_field<int64_t>(j, "first_batch_ns", w);
  r.cpu_user_s = json_field<double>(j, "cpu_user_s", w);
  r.cpu_sys_s = json_field<double>(j, "cpu_sys_s", w);
  r.cache_prep_cpu_s = json_field_or<double>(j, "cache_prep_cpu_s", w, 0.0);  // absent from older senders
  r.epoch_resident_fraction = json_field<std::vector<double>>(j, "epoch_resident_fraction", w);
  // Per-epoch counts: older senders kept none.
  r.epoch_samples = json_field_or<std::vector<uint64_t>>(j, "epoch_samples", w, {});
  r.epoch_bytes = json_field_or<std::vector<uint64_t>>(j, "epoch_bytes", w, {});
  r.epoch_ns = json_field_or<std::vector<int64_t>>(j, "epoch_ns", w, {});
  r.residency_method = json_field<std::string>(j, "residency_method", w);
  r.cache_notes = json_field<std::vector<std::string>>(j, "cache_notes", w);
  const json& workers = json_array_at(j, "workers", w);
  for (size_t i = 0; i < workers.size(); ++i)
    r.workers.push_back(worker_of(workers[i], json_path(json_path(w, "workers"), i)));
  const json& ranks = json_array_at(j, "ranks", w);
  for (size_t i = 0; i < ranks.size(); ++i) r.ranks.push_back(rank_of(ranks[i], json_path(json_path(w, "ranks"), i)));
  return r;
}

void to_json(json& j, const LoaderResult& r) { j = loader_result_to_json(r); }
void from_json(const json& j, LoaderResult& r) { r = loader_result_from_json(j); }

}  // namespace ioprobe
