#include "report/tune_document.hpp"

#include <fmt/format.h>

namespace ioprobe {

bool tune_point_measured(const nlohmann::json& p) {
  return p.value("status", std::string("measured")) != kTuneNotMeasured && p.value("repeats", 0) > 0;
}

nlohmann::json tune_points_json(const std::vector<TunePoint>& points) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& p : points) {
    if (p.runs.empty()) {  // the sweep stopped before this setting ran: no figure, not zeros
      const nlohmann::json none(nullptr);
      a.push_back({{"num_workers", p.num_workers},
                   {"prefetch_factor", p.prefetch_factor},
                   {"numa", p.numa},
                   {"status", kTuneNotMeasured},
                   {"repeats", 0},
                   {"steady_runs", 0},
                   {"samples_per_s", none},
                   {"samples_per_s_min", none},
                   {"samples_per_s_max", none},
                   {"spread", none},
                   {"bytes_per_s", none},
                   {"au", none},
                   {"cpu_used", none},
                   {"worker_busy", none},
                   {"runs", nlohmann::json::array()}});
      continue;
    }
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& r : p.runs)
      runs.push_back({{"samples_per_s", r.samples_per_s},
                      {"bytes_per_s", r.bytes_per_s},
                      {"au", r.au},
                      {"au_min", r.au_min},
                      {"rate_basis", r.from_completions ? "completion times" : "interval counts"},
                      {"cpu_used", r.cpu_used},
                      {"elapsed_s", r.elapsed_s},
                      {"steady_samples", r.steady_samples},
                      {"steady", r.steady}});
    a.push_back({{"num_workers", p.num_workers},
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
                 {"spread", p.spread},
                 {"bytes_per_s", p.bytes_per_s},
                 {"au", p.au},
                 {"cpu_used", p.cpu_used},
                 {"worker_busy", p.worker_busy},
                 {"runs", runs}});
  }
  return a;
}

nlohmann::json recommendation_json(const Recommendation& r) {
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

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string render_tune_csv(const nlohmann::json& doc) {
  std::string o =
      "num_workers,prefetch_factor,numa,repeats,samples_per_s,samples_per_s_min,samples_per_s_max,spread_pct,"
      "MB_per_s,au_pct,cpu_used_cpus,worker_busy_pct,status\n";
  for (const auto& p : doc.at("points")) {
    o += fmt::format("{},{},{},{},", p.value("num_workers", 0), p.value("prefetch_factor", 0),
                     csv_field(p.value("numa", "")), p.value("repeats", 0));
    if (!tune_point_measured(p)) {  // empty figures: a setting the sweep never ran
      o += fmt::format(",,,,,,,,{}\n", kTuneNotMeasured);
      continue;
    }
    o += fmt::format("{:.1f},{:.1f},{:.1f},{:.1f},{:.2f},{:.1f},{:.2f},{:.1f},measured\n",
                     p.value("samples_per_s", 0.0), p.value("samples_per_s_min", 0.0),
                     p.value("samples_per_s_max", 0.0), 100 * p.value("spread", 0.0), p.value("bytes_per_s", 0.0) / 1e6,
                     100 * p.value("au", 0.0), p.value("cpu_used", 0.0), 100 * p.value("worker_busy", 0.0));
  }
  return o;
}

nlohmann::json tune_rules_json(const WorkersRule& w, const std::vector<TunePoint>& points) {
  const bool best_known = w.best_point < points.size() && w.best_samples_per_s > 0;
  return nlohmann::json::array(
      {{{"rule", "num_workers = 4 x CPU cores"},
        {"value", w.rule_workers},
        {"in_sweep", w.planned},
        {"swept", w.swept},
        {"measured", w.measured},
        {"num_workers", w.rule_workers},
        {"samples_per_s", w.measured ? nlohmann::json(w.rule_samples_per_s) : nlohmann::json(nullptr)},
        {"best_num_workers", best_known ? nlohmann::json(points[w.best_point].num_workers) : nlohmann::json(nullptr)},
        {"best_samples_per_s", best_known ? nlohmann::json(w.best_samples_per_s) : nlohmann::json(nullptr)},
        {"holds", w.holds}}});
}

}  // namespace ioprobe
