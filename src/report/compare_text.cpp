#include "report/compare_text.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "core/units.hpp"

namespace ioprobe {

namespace {
using json = nlohmann::json;

// A tune's recommended point in its "points" (else its best point): the row its table shows;
// -1 when neither is a measured point.
long tune_point(const json& d) {
  if (!d.contains("recommendation") || !d.contains("points") || !d["points"].is_array()) return -1;
  const json& rec = d["recommendation"];
  for (const char* k : {"point", "best"}) {
    const long i = rec.contains(k) && rec[k].is_number_integer() ? rec[k].get<long>() : -1;
    if (i >= 0 && static_cast<size_t>(i) < d["points"].size() &&
        d["points"][static_cast<size_t>(i)].value("status", "measured") == "measured")
      return i;
  }
  return -1;
}

// Returns -1 when absent. A tune pointer "/@point/KEY" is KEY of its recommended point.
double fig(const json& d, const std::string& run_ptr, const std::string& tune_ptr) {
  std::string p = d.value("kind", "") == "tune" ? tune_ptr : run_ptr;
  if (p.rfind("/@point/", 0) == 0) {
    const long i = tune_point(d);
    if (i < 0) return -1;
    p = fmt::format("/points/{}/{}", i, p.substr(8));
  }
  if (p.empty()) return -1;
  json::json_pointer jp(p);
  return d.contains(jp) && d.at(jp).is_number() ? d.at(jp).get<double>() : -1;
}

// How a row's values print: every row of one kind prints the same way, with its unit in its own column.
enum class Fmt { count, rate, percent, micros, seconds };

std::string value_text(double v, Fmt f) {
  switch (f) {
    case Fmt::count:
      return format_count(static_cast<uint64_t>(std::llround(v)));  // counts are never negative
    case Fmt::rate:
    case Fmt::percent:
    case Fmt::micros:
      return fmt::format("{:.1f}", v);
    case Fmt::seconds:
      return fmt::format("{:.3f}", v);
  }
  return "?";
}

// The dataset a document read, in one line, and the fields that identify it.
struct DatasetId {
  bool known = false;
  std::string root, preset;
  uint64_t files = 0, bytes = 0;
  std::string text() const {
    return fmt::format("{} files, {} in '{}' ({})", format_count(files), format_bytes(bytes), root,
                       preset.empty() ? "?" : preset);
  }
};

DatasetId dataset_of(const json& d) {
  DatasetId id;
  if (!d.contains("dataset") || !d["dataset"].is_object()) return id;
  const json& ds = d["dataset"];
  id.known = true;
  id.root = ds.value("root", "");
  id.preset = ds.value("preset", "");
  if (ds.contains("files") && ds["files"].is_number()) id.files = ds["files"].get<uint64_t>();
  if (ds.contains("bytes") && ds["bytes"].is_number()) id.bytes = ds["bytes"].get<uint64_t>();
  return id;
}

}  // namespace

LatencyMeasure latency_measure(const json& d) {
  const json ds = d.contains("dataset") && d["dataset"].is_object() ? d["dataset"] : json::object();
  const json kind = ds.value("kind", json("files"));
  return kind.is_string() && kind.get<std::string>() != "files" ? LatencyMeasure::kPerRead : LatencyMeasure::kPerFile;
}

std::string latency_measure_note(const std::vector<json>& docs) {
  std::string per_file, per_read;
  for (size_t i = 0; i < docs.size(); ++i) {
    std::string& list = latency_measure(docs[i]) == LatencyMeasure::kPerFile ? per_file : per_read;
    list += (list.empty() ? "" : ", ") + std::string(1, static_cast<char>('A' + i % 26));
  }
  if (per_file.empty() || per_read.empty()) return "";
  return fmt::format(
      "{} measured latency per file (open, read, close of a sample's file) and {} per read (a record or token window "
      "read inside a file): different measures, shown on their own rows and not divided",
      per_file, per_read);
}

MeasurementConditions measurement_conditions(const std::vector<json>& docs) {
  MeasurementConditions m;
  for (const auto& d : docs) {
    const json t = d.contains("target") && d["target"].is_object() ? d["target"] : json::object();
    std::string cache = t.value("cache", "");
    if (t.contains("direct") && t["direct"].is_boolean())
      cache += (cache.empty() ? "" : ", ") + std::string(t["direct"].get<bool>() ? "O_DIRECT" : "buffered");
    m.cache.push_back(cache.empty() ? "?" : cache);
    std::string where = t.value("path", "");
    const std::string fs = t.value("fs_type", ""),
                      dev = t.is_object() && t.contains("device") && t["device"].is_string()
                                ? t["device"].get<std::string>()
                                : "";
    if (!fs.empty()) where += fmt::format(" ({}{})", fs, dev.empty() ? "" : " on " + dev);
    m.target.push_back(where.empty() ? "?" : where);
  }
  for (size_t i = 1; i < docs.size(); ++i) {
    const char a = 'A', b = static_cast<char>('A' + i % 26);
    if (m.cache[i] != m.cache[0] && m.cache[i] != "?" && m.cache[0] != "?")
      m.warnings.push_back(fmt::format("{} was measured {} and {} {}: the ratio compares cache states, not only "
                                       "settings",
                                       b, m.cache[i], a, m.cache[0]));
    if (m.target[i] != m.target[0] && m.target[i] != "?" && m.target[0] != "?")
      m.warnings.push_back(fmt::format("{} read {} and {} {}: the ratio compares targets, not only settings", b,
                                       m.target[i], a, m.target[0]));
  }
  return m;
}

std::string comparison_refusal(const std::vector<json>& docs, const std::vector<std::string>& names) {
  auto comparable = [](const json& d) {
    const std::string k = d.value("kind", "");
    return k == "run" || k == "tune";
  };
  bool ok = true;
  for (const auto& d : docs) ok = ok && comparable(d);
  if (ok) return "";
  std::string got;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string k = docs[i].value("kind", "");
    got += fmt::format("{}'{}' is {}",
                       i == 0                 ? ""
                       : i + 1 == docs.size() ? " and "
                                              : ", ",
                       names[i], k.empty() ? "a document without a kind" : fmt::format("a {} result", k));
  }
  return fmt::format("report: comparison works on run results (ioprobe run) and tune results (ioprobe tune); {}. "
                     "Give run or tune documents, or report one file at a time",
                     got);
}

std::string render_comparison_text(const std::vector<json>& docs, const std::vector<std::string>& names) {
  struct Row {
    const char* label;
    const char* unit;
    const char* run;
    const char* tune;
    double scale;
    Fmt f;
    std::optional<LatencyMeasure> measure;  // a latency row: only the documents that measured it so
  };
  const Row rows[] = {{"throughput", "samples/s", "/results/samples_per_s", "/@point/samples_per_s", 1, Fmt::rate},
                      {"throughput", "MB/s", "/results/bytes_per_s", "/@point/bytes_per_s", 1 / kMB, Fmt::rate},
                      {"throughput", "MiB/s", "/results/bytes_per_s", "/@point/bytes_per_s", 1 / kMiB, Fmt::rate},
                      {"accelerator util.", "%", "/ingest/accelerator_utilization", "", 100, Fmt::percent},
                      {"GPU demand", "samples/s", "/ingest/required_samples_per_s", "/demand/required_samples_per_s", 1,
                       Fmt::rate},
                      {"file latency p50", "µs", "/results/file_latency_us/p50", "/best_run/file_latency_us/p50", 1,
                       Fmt::micros, LatencyMeasure::kPerFile},
                      {"file latency p99", "µs", "/results/file_latency_us/p99", "/best_run/file_latency_us/p99", 1,
                       Fmt::micros, LatencyMeasure::kPerFile},
                      {"read latency p50", "µs", "/results/file_latency_us/p50", "/best_run/file_latency_us/p50", 1,
                       Fmt::micros, LatencyMeasure::kPerRead},
                      {"read latency p99", "µs", "/results/file_latency_us/p99", "/best_run/file_latency_us/p99", 1,
                       Fmt::micros, LatencyMeasure::kPerRead},
                      {"num_workers", "count", "/loader/num_workers", "/@point/num_workers", 1, Fmt::count},
                      {"prefetch_factor", "count", "/loader/prefetch_factor", "/@point/prefetch_factor", 1, Fmt::count},
                      {"GPU ranks", "count", "/loader/gpus", "/loader/gpus", 1, Fmt::count},
                      {"samples read", "count", "/results/samples", "/best_run/samples", 1, Fmt::count},
                      {"elapsed", "s", "/results/elapsed_s", "/tune/elapsed_s", 1, Fmt::seconds}};
  std::string o = "Comparison\n";
  for (size_t i = 0; i < docs.size(); ++i)
    o += fmt::format("  {}: {} ({}, {}){}; target {}\n", static_cast<char>('A' + i % 26), names[i],
                     docs[i].value("kind", "?"), docs[i].value("created_utc", ""),
                     docs[i].value("partial", false) ? " [PARTIAL]" : "", measurement_conditions({docs[i]}).target[0]);
  // The conditions first, beside the numbers they qualify; columns as wide as the widest.
  const MeasurementConditions cond = measurement_conditions(docs);
  size_t cw = 14;
  for (const auto& c : cond.cache) cw = std::max(cw, c.size() + 1);
  o += fmt::format("\n  {:<18} {:<10}", "figure", "unit");
  for (size_t i = 0; i < docs.size(); ++i) o += fmt::format(" {:>{}}", static_cast<char>('A' + i % 26), cw);
  if (docs.size() == 2) o += fmt::format(" {:>8}", "B/A");
  o += "\n";
  bool cache_differs = false, target_differs = false;
  for (size_t i = 0; i < docs.size(); ++i) {
    cache_differs |= cond.cache[i] != cond.cache[0];
    target_differs |= cond.target[i] != cond.target[0];
  }
  o += fmt::format("  {:<18} {:<10}", "cache", cache_differs ? "DIFFERS" : "");
  for (const auto& v : cond.cache) o += fmt::format(" {:>{}}", v, cw);
  o += "\n";
  if (target_differs)
    o += fmt::format("  {:<18} {:<10} (each document's target is in the list above)\n", "target", "DIFFERS");
  for (const auto& r : rows) {
    std::vector<double> v;
    for (const auto& d : docs) v.push_back(r.measure && latency_measure(d) != *r.measure ? -1 : fig(d, r.run, r.tune));
    bool any = false;
    for (double x : v) any |= x >= 0;
    if (!any) continue;
    o += fmt::format("  {:<18} {:<10}", r.label, r.unit);  // fmt pads by display width ("µs" is 2 columns)
    for (double x : v) o += fmt::format(" {:>{}}", x >= 0 ? value_text(x * r.scale, r.f) : "-", cw);
    if (docs.size() == 2)
      o += v[0] > 0 && v[1] >= 0 ? fmt::format(" {:>7.2f}x", v[1] / v[0]) : fmt::format(" {:>8}", "-");
    o += "\n";
  }
  o += "  (MB/s = 10^6 B/s, MiB/s = 2^20 B/s; B/A = column B / column A)\n";
  for (size_t i = 0; i < docs.size(); ++i)
    if (docs[i].value("kind", "") == "tune" && tune_point(docs[i]) >= 0)
      o += fmt::format("  {}: a tune: throughput and num_workers are its recommended point's (its table's steady "
                       "rate); latency and samples read its fastest run's\n",
                       static_cast<char>('A' + i % 26));
  if (const std::string note = latency_measure_note(docs); !note.empty()) o += "  note: " + note + "\n";
  for (const auto& w : cond.warnings) o += "  warning: " + w + "\n";
  // Ratios of runs over different data compare different work: say so.
  const DatasetId first = dataset_of(docs[0]);
  for (size_t i = 1; i < docs.size(); ++i) {
    const DatasetId other = dataset_of(docs[i]);
    if (!first.known || !other.known) continue;
    if (first.root != other.root || first.files != other.files || first.bytes != other.bytes)
      o += fmt::format(
          "  warning: {} and {} read different datasets ({}: {}; {}: {}); their ratios compare different work\n", 'A',
          static_cast<char>('A' + i % 26), 'A', first.text(), static_cast<char>('A' + i % 26), other.text());
  }
  for (size_t i = 0; i < docs.size(); ++i)
    if (docs[i].value("kind", "") == "tune" && docs[i].contains("recommendation"))
      o += fmt::format("  {} recommends: {}\n", static_cast<char>('A' + i % 26),
                       docs[i]["recommendation"].value("dataloader", "-"));
  return o;
}

}  // namespace ioprobe
