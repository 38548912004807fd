#include "report/tune_document.hpp"

#include <fmt/format.h>

namespace ioprobe {

std::vector<TunePointEntry> tune_point_entries(const std::vector<TunePoint>& points) {
  std::vector<TunePointEntry> out;
  out.reserve(points.size());
  for (const auto& p : points) out.push_back(TunePointEntry{p, std::nullopt, std::nullopt});
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string render_tune_csv(const TuneDocument& doc) {
  std::string o =
      "num_workers,prefetch_factor,numa,repeats,samples_per_s,samples_per_s_min,samples_per_s_max,spread_pct,"
      "MB_per_s,au_pct,cpu_used_cpus,worker_busy_pct,status\n";
  for (const auto& e : doc.points) {
    const TunePoint& p = e.point;
    o += fmt::format("{},{},{},{},", p.num_workers, p.prefetch_factor, csv_field(p.numa), p.runs.size());
    if (!tune_point_measured(e)) {  // empty figures: a setting the sweep never ran
      o += fmt::format(",,,,,,,,{}\n", kTuneNotMeasured);
      continue;
    }
    // One repeat has no spread: an empty cell, as the text's "-".
    const std::string spread = p.runs.size() > 1 ? fmt::format("{:.1f}", 100 * p.spread) : "";
    o += fmt::format("{:.1f},{:.1f},{:.1f},{},{:.2f},{:.1f},{:.2f},{:.1f},measured\n", p.samples_per_s,
                     p.samples_per_s_min, p.samples_per_s_max, spread, p.bytes_per_s / 1e6, 100 * p.au, p.cpu_used,
                     100 * p.worker_busy);
  }
  return o;
}

std::vector<TuneRule> tune_rules(const WorkersRule& w, const std::vector<TunePoint>& points) {
  const bool best_known = w.best_point < points.size() && w.best_samples_per_s > 0;
  TuneRule r;
  r.rule = "num_workers = 4 x CPU cores";
  r.value = w.rule_workers;
  r.in_sweep = w.planned;
  r.swept = w.swept;
  r.measured = w.measured;
  r.num_workers = w.rule_workers;
  if (w.measured) r.samples_per_s = w.rule_samples_per_s;
  if (best_known) {
    r.best_num_workers = points[w.best_point].num_workers;
    r.best_samples_per_s = w.best_samples_per_s;
  }
  r.holds = w.holds;
  return {r};
}

}  // namespace ioprobe
