#include "report/compare_text.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace ioprobe {

namespace {
using json = nlohmann::json;

// A document's "kind" when it is a string, else "" (a document that is not ioprobe's).
std::string kind_of(const json& d) {
  const auto it = d.is_object() ? d.find("kind") : d.end();
  return it != d.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double us(uint64_t ns) { return static_cast<double>(ns) / 1e3; }

// A tune's recommended point in its table (else its best point): the row its table shows; none
// when neither is a measured point.
std::optional<size_t> tune_point(const TuneDocument& d) {
  for (const size_t i : {d.recommendation.point, d.recommendation.best})
    if (i < d.points.size() && tune_point_measured(d.points[i])) return i;
  return std::nullopt;
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

// The dataset a document read, in one line.
std::string dataset_text(const DatasetSection& ds) {
  return fmt::format("{} files, {} in '{}' ({})", format_count(ds.files), format_bytes(ds.bytes), ds.root,
                     ds.preset.empty() ? "?" : ds.preset);
}

char column(size_t i) { return static_cast<char>('A' + i % 26); }

}  // namespace

ComparedDocument compared_document(const RunDocument& d) {
  ComparedDocument c{.kind = "run",
                     .created_utc = d.header.created_utc,
                     .partial = d.partial,
                     .target = d.target,
                     .dataset = d.dataset};
  const LoaderResult& r = d.results.loader;
  const ResultRates x = result_rates(r);
  ComparedFigures& f = c.figures;
  f.samples_per_s = x.samples_per_s;
  f.bytes_per_s = x.bytes_per_s;
  if (const auto& in = d.ingest.result) {
    f.au = in->accelerator_utilization;
    f.demand_samples_per_s = in->required_samples_per_s;
  }
  f.latency_p50_us = us(r.file_latency.percentile(50));
  f.latency_p99_us = us(r.file_latency.percentile(99));
  f.num_workers = d.loader.num_workers;
  f.prefetch_factor = d.loader.prefetch_factor;
  f.gpus = static_cast<double>(d.loader.gpus);
  f.samples = static_cast<double>(r.samples);
  f.elapsed_s = x.elapsed_s;
  return c;
}

ComparedDocument compared_document(const TuneDocument& d) {
  ComparedDocument c{.kind = "tune",
                     .created_utc = d.header.created_utc,
                     .partial = d.partial,
                     .target = d.target,
                     .dataset = d.dataset,
                     .recommends = d.recommendation.dataloader};
  ComparedFigures& f = c.figures;
  if (const auto i = tune_point(d)) {
    const TunePoint& p = d.points[*i].point;
    c.tune_point = true;
    f.samples_per_s = p.samples_per_s;
    f.bytes_per_s = p.bytes_per_s;
    f.num_workers = p.num_workers;
    f.prefetch_factor = p.prefetch_factor;
  }
  f.demand_samples_per_s = d.demand.required_samples_per_s;
  if (const auto& r = d.best_run) {
    f.latency_p50_us = us(r->file_latency.percentile(50));
    f.latency_p99_us = us(r->file_latency.percentile(99));
    f.samples = static_cast<double>(r->samples);
  }
  f.gpus = d.loader.gpus;
  f.elapsed_s = d.tune.elapsed_s;
  return c;
}

ComparedDocument compared_document_from_json(const json& doc, const std::string& where) {
  const std::string kind = kind_of(doc);
  if (kind == "run") return compared_document(run_document_from_json(doc, where));
  if (kind == "tune") return compared_document(tune_document_from_json(doc, where));
  throw UsageError(fmt::format("{}: a {} document has none of a comparison's figures (run or tune only)", where,
                               kind.empty() ? "kindless" : kind));
}

LatencyMeasure latency_measure(const ComparedDocument& d) {
  return d.dataset.kind != "files" ? LatencyMeasure::kPerRead : LatencyMeasure::kPerFile;
}

std::string latency_measure_note(const std::vector<ComparedDocument>& docs) {
  std::string per_file, per_read;
  for (size_t i = 0; i < docs.size(); ++i) {
    std::string& list = latency_measure(docs[i]) == LatencyMeasure::kPerFile ? per_file : per_read;
    list += (list.empty() ? "" : ", ") + std::string(1, column(i));
  }
  if (per_file.empty() || per_read.empty()) return "";
  return fmt::format(
      "{} measured latency per file (open, read, close of a sample's file) and {} per read (a record or token window "
      "read inside a file): different measures, shown on their own rows and not divided",
      per_file, per_read);
}

MeasurementConditions measurement_conditions(const std::vector<ComparedDocument>& docs) {
  MeasurementConditions m;
  for (const auto& d : docs) {
    const TargetSection& t = d.target;
    std::string cache;
    if (const auto& r = t.reading)
      cache = r->cache + (r->cache.empty() ? "" : ", ") + (r->direct ? "O_DIRECT" : "buffered");
    m.cache.push_back(cache.empty() ? "?" : cache);
    std::string where = t.path;
    if (!t.fs_type.empty()) where += fmt::format(" ({}{})", t.fs_type, t.device.empty() ? "" : " on " + t.device);
    m.target.push_back(where.empty() ? "?" : where);
  }
  for (size_t i = 1; i < docs.size(); ++i) {
    const char a = 'A', b = column(i);
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
    const std::string k = kind_of(d);
    return k == "run" || k == "tune";
  };
  if (std::all_of(docs.begin(), docs.end(), comparable)) return "";
  std::string got;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string k = kind_of(docs[i]);
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

std::string render_comparison_text(const std::vector<ComparedDocument>& docs, const std::vector<std::string>& names) {
  using F = std::optional<double> ComparedFigures::*;
  struct Row {
    const char* label;
    const char* unit;
    F figure;
    double scale;
    Fmt f;
    std::optional<LatencyMeasure> measure;  // a latency row: only the documents that measured it so
  };
  const Row rows[] =
      {{"throughput", "samples/s", &ComparedFigures::samples_per_s, 1, Fmt::rate},
       {"throughput", "MB/s", &ComparedFigures::bytes_per_s, 1 / kMB, Fmt::rate},
       {"throughput", "MiB/s", &ComparedFigures::bytes_per_s, 1 / kMiB, Fmt::rate},
       {"accelerator util.", "%", &ComparedFigures::au, 100, Fmt::percent},
       {"GPU demand", "samples/s", &ComparedFigures::demand_samples_per_s, 1, Fmt::rate},
       {"file latency p50", "µs", &ComparedFigures::latency_p50_us, 1, Fmt::micros, LatencyMeasure::kPerFile},
       {"file latency p99", "µs", &ComparedFigures::latency_p99_us, 1, Fmt::micros, LatencyMeasure::kPerFile},
       {"read latency p50", "µs", &ComparedFigures::latency_p50_us, 1, Fmt::micros, LatencyMeasure::kPerRead},
       {"read latency p99", "µs", &ComparedFigures::latency_p99_us, 1, Fmt::micros, LatencyMeasure::kPerRead},
       {"num_workers", "count", &ComparedFigures::num_workers, 1, Fmt::count},
       {"prefetch_factor", "count", &ComparedFigures::prefetch_factor, 1, Fmt::count},
       {"GPU ranks", "count", &ComparedFigures::gpus, 1, Fmt::count},
       {"samples read", "count", &ComparedFigures::samples, 1, Fmt::count},
       {"elapsed", "s", &ComparedFigures::elapsed_s, 1, Fmt::seconds}};
  std::string o = "Comparison\n";
  for (size_t i = 0; i < docs.size(); ++i)
    o += fmt::format("  {}: {} ({}, {}){}; target {}\n", column(i), names[i], docs[i].kind, docs[i].created_utc,
                     docs[i].partial ? " [PARTIAL]" : "", measurement_conditions({docs[i]}).target[0]);
  // The conditions first, beside the numbers they qualify; columns as wide as the widest.
  const MeasurementConditions cond = measurement_conditions(docs);
  size_t cw = 14;
  for (const auto& c : cond.cache) cw = std::max(cw, c.size() + 1);
  o += fmt::format("\n  {:<18} {:<10}", "figure", "unit");
  for (size_t i = 0; i < docs.size(); ++i) o += fmt::format(" {:>{}}", column(i), cw);
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
    // -1: the document has no such figure (a negative figure prints as missing too).
    std::vector<double> v;
    for (const auto& d : docs)
      v.push_back(r.measure && latency_measure(d) != *r.measure ? -1 : (d.figures.*r.figure).value_or(-1));
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
    if (docs[i].tune_point)
      o += fmt::format("  {}: a tune: throughput and num_workers are its recommended point's (its table's steady "
                       "rate); latency and samples read its fastest run's\n",
                       column(i));
  if (const std::string note = latency_measure_note(docs); !note.empty()) o += "  note: " + note + "\n";
  for (const auto& w : cond.warnings) o += "  warning: " + w + "\n";
  // Ratios of runs over different data compare different work: say so.
  const DatasetSection& first = docs[0].dataset;
  for (size_t i = 1; i < docs.size(); ++i) {
    const DatasetSection& other = docs[i].dataset;
    if (first.root != other.root || first.files != other.files || first.bytes != other.bytes)
      o += fmt::format(
          "  warning: {} and {} read different datasets ({}: {}; {}: {}); their ratios compare different work\n", 'A',
          column(i), 'A', dataset_text(first), column(i), dataset_text(other));
  }
  for (size_t i = 0; i < docs.size(); ++i)
    if (docs[i].kind == "tune") o += fmt::format("  {} recommends: {}\n", column(i), docs[i].recommends);
  return o;
}

}  // namespace ioprobe
