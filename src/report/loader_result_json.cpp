#include "report/loader_result_json.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/error_text.hpp"
#include "report/latency_json.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

// j[key] as T, or UsageError naming the key and where it was looked for.
template <class T>
T get(const json& j, const char* key, const std::string& where) {
  const json& v = json_at(j, key, where);
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    throw UsageError(fmt::format("{}: key '{}' has the wrong type ({})", where, key, v.dump()));
  }
}

json timeline_json(const Timeline& t) {
  return {{"interval_ns", t.interval_ns()}, {"points", timeline_points_json(t)}};
}

Timeline timeline_of(const json& j, const std::string& where) {
  const std::string w = where + " timeline";
  const json& t = json_at(j, "timeline", where);
  const auto ns = get<int64_t>(t, "interval_ns", w);
  if (ns <= 0) throw UsageError(fmt::format("{}: interval_ns {} must be > 0", w, ns));
  return Timeline::from_points(ns, timeline_points_from_json(json_at(t, "points", w), w));
}

LatencyHistogram hist_of(const json& j, const char* key, const std::string& where) {
  return histogram_from_ns_json(json_at(j, key, where), where + " " + key);
}

const json& array_at(const json& j, const char* key, const std::string& where) {
  const json& a = json_at(j, key, where);
  if (!a.is_array()) throw UsageError(fmt::format("{}: key '{}' is not an array", where, key));
  return a;
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
                     {"timeline", timeline_json(k.timeline)},
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
          {"stop_reason", r.stop_reason},
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
          {"timeline", timeline_json(r.timeline)},
          {"wait_ns", r.wait_ns},
          {"first_batch_ns", r.first_batch_ns},
          {"cpu_user_s", r.cpu_user_s},
          {"cpu_sys_s", r.cpu_sys_s},
          {"epoch_resident_fraction", r.epoch_resident_fraction},
          {"epoch_samples", r.epoch_samples},
          {"epoch_bytes", r.epoch_bytes},
          {"epoch_ns", r.epoch_ns},
          {"residency_method", r.residency_method},
          {"cache_notes", r.cache_notes},
          {"workers", workers},
          {"ranks", ranks}};
}

LoaderResult loader_result_from_json(const json& j) {
  const std::string w = "loader result";
  LoaderResult r;
  r.elapsed_ns = get<int64_t>(j, "elapsed_ns", w);
  r.epochs_completed = get<uint32_t>(j, "epochs_completed", w);
  r.partial = get<bool>(j, "partial", w);
  r.stop_reason = get<std::string>(j, "stop_reason", w);
  r.stopped_on_errors = get<bool>(j, "stopped_on_errors", w);
  r.samples = get<uint64_t>(j, "samples", w);
  r.bytes = get<uint64_t>(j, "bytes", w);
  r.errors = get<uint64_t>(j, "errors", w);
  r.io_bytes = get<uint64_t>(j, "io_bytes", w);
  for (const auto& e : json_at(j, "error_samples", w))
    r.error_samples.push_back(error_record_from_json(e, w + ".error_samples"));
  // Absent from older senders: no count, so the kept records' lower bound stands.
  r.error_files = j.value("error_files", uint64_t{0});
  r.error_files_exact = j.value("error_files_exact", false);
  r.file_latency = hist_of(j, "file_latency", w);
  r.open_latency = hist_of(j, "open_latency", w);
  r.batch_wait = hist_of(j, "batch_wait", w);
  r.timeline = timeline_of(j, w);
  r.wait_ns = get<int64_t>(j, "wait_ns", w);
  r.first_batch_ns = get<int64_t>(j, "first_batch_ns", w);
  r.cpu_user_s = get<double>(j, "cpu_user_s", w);
  r.cpu_sys_s = get<double>(j, "cpu_sys_s", w);
  r.epoch_resident_fraction = get<std::vector<double>>(j, "epoch_resident_fraction", w);
  r.epoch_samples = j.value("epoch_samples", std::vector<uint64_t>{});  // older senders: none
  r.epoch_bytes = j.value("epoch_bytes", std::vector<uint64_t>{});
  r.epoch_ns = j.value("epoch_ns", std::vector<int64_t>{});
  r.residency_method = get<std::string>(j, "residency_method", w);
  r.cache_notes = get<std::vector<std::string>>(j, "cache_notes", w);
  const json& workers = array_at(j, "workers", w);
  for (size_t i = 0; i < workers.size(); ++i) {
    const json& x = workers[i];
    const std::string ww = fmt::format("{} workers[{}]", w, i);
    WorkerStats s;
    s.rank = get<int>(x, "rank", ww);
    s.worker = get<int>(x, "worker", ww);
    s.files = get<uint64_t>(x, "files", ww);
    s.bytes = get<uint64_t>(x, "bytes", ww);
    s.io_bytes = get<uint64_t>(x, "io_bytes", ww);
    s.errors = get<uint64_t>(x, "errors", ww);
    s.busy_ns = get<int64_t>(x, "busy_ns", ww);
    s.cpu_work_ns = get<int64_t>(x, "cpu_work_ns", ww);
    s.put_cpu_ns = x.value("put_cpu_ns", int64_t{0});       // senders without it: no feeder thread
    s.other_cpu_ns = x.value("other_cpu_ns", int64_t{0});   // senders without it: no sharer thread
    s.runq_wait_ns = x.value("runq_wait_ns", int64_t{-1});  // senders without it: not measured
    // --decode jpeg's counters; senders without them decoded nothing.
    s.decoded = x.value("decoded", uint64_t{0});
    s.decode_errors = x.value("decode_errors", uint64_t{0});
    s.decode_cpu_ns = x.value("decode_cpu_ns", int64_t{0});
    s.decoded_pixels = x.value("decoded_pixels", uint64_t{0});
    s.file_latency = hist_of(x, "file_latency", ww);
    s.open_latency = hist_of(x, "open_latency", ww);
    s.cpu_list = get<std::string>(x, "cpu_list", ww);
    s.numa = get<std::string>(x, "numa", ww);
    r.workers.push_back(std::move(s));
  }
  const json& ranks = array_at(j, "ranks", w);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const json& x = ranks[i];
    const std::string rw = fmt::format("{} ranks[{}]", w, i);
    RankStats k;
    k.rank = get<int>(x, "rank", rw);
    k.batches = get<uint64_t>(x, "batches", rw);
    k.samples = get<uint64_t>(x, "samples", rw);
    k.bytes = get<uint64_t>(x, "bytes", rw);
    k.wait_ns = get<int64_t>(x, "wait_ns", rw);
    k.compute_ns = get<int64_t>(x, "compute_ns", rw);
    k.nominal_compute_ns = get<int64_t>(x, "nominal_compute_ns", rw);
    k.first_batch_ns = get<int64_t>(x, "first_batch_ns", rw);
    k.elapsed_ns = get<int64_t>(x, "elapsed_ns", rw);
    k.batch_wait = hist_of(x, "batch_wait", rw);
    k.timeline = timeline_of(x, rw);
    k.max_outstanding = get<uint64_t>(x, "max_outstanding", rw);
    // The main-process and pin-thread counters came with --calibration / --pin-memory; documents
    // written before them read as 0 (no such stage ran).
    k.main_busy_ns = x.value("main_busy_ns", int64_t{0});
    k.main_cpu_ns = x.value("main_cpu_ns", int64_t{0});
    k.pin_busy_ns = x.value("pin_busy_ns", int64_t{0});
    k.pin_cpu_ns = x.value("pin_cpu_ns", int64_t{0});
    k.pin_bytes = x.value("pin_bytes", uint64_t{0});
    k.h2d_ns = x.value("h2d_ns", int64_t{0});  // documents before --h2d: no copy ran
    k.h2d_bytes = x.value("h2d_bytes", uint64_t{0});
    k.h2d_copies = x.value("h2d_copies", uint64_t{0});
    k.h2d_device = x.value("h2d_device", -1);
    k.h2d_error = x.value("h2d_error", "");
    if (x.contains("deliveries")) {
      const json& d = x.at("deliveries");
      if (!d.is_array()) throw UsageError(fmt::format("{}: 'deliveries' is not an array", rw));
      for (const auto& e : d) {
        if (!e.is_array() || e.size() != 4)
          throw UsageError(fmt::format("{}: a delivery is not [t_ns, samples, bytes, wait_ns]", rw));
        k.deliveries.push_back({e[0].get<int64_t>(), e[1].get<uint64_t>(), e[2].get<uint64_t>(), e[3].get<int64_t>()});
      }
    }
    r.ranks.push_back(std::move(k));
  }
  return r;
}

void to_json(json& j, const LoaderResult& r) { j = loader_result_to_json(r); }
void from_json(const json& j, LoaderResult& r) { r = loader_result_from_json(j); }

}  // namespace ioprobe
