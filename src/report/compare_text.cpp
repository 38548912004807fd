#include "report/compare_text.hpp"

#include <fmt/format.h>

namespace ioprobe {

namespace {
using json = nlohmann::json;

// Returns -1 when absent.
double fig(const json& d, const std::string& run_ptr, const std::string& tune_ptr) {
  const std::string& p = d.value("kind", "") == "tune" ? tune_ptr : run_ptr;
  if (p.empty()) return -1;
  json::json_pointer jp(p);
  return d.contains(jp) && d.at(jp).is_number() ? d.at(jp).get<double>() : -1;
}
}  // namespace

std::string render_comparison_text(const std::vector<json>& docs, const std::vector<std::string>& names) {
  struct Row { const char* label; const char* run; const char* tune; double scale; };
  const Row rows[] = {{"samples/s", "/results/samples_per_s", "/best_run/samples_per_s", 1},
                      {"MB/s (10^6 B/s)", "/results/bytes_per_s", "/best_run/bytes_per_s", 1e-6},
                      {"AU %", "/ingest/accelerator_utilization", "", 100},
                      {"demand samples/s", "/ingest/required_samples_per_s", "/demand/required_samples_per_s", 1},
                      {"file latency p50 µs", "/results/file_latency_us/p50", "/best_run/file_latency_us/p50", 1},
                      {"file latency p99 µs", "/results/file_latency_us/p99", "/best_run/file_latency_us/p99", 1},
                      {"num_workers", "/loader/num_workers", "", 1},
                      {"prefetch_factor", "/loader/prefetch_factor", "", 1},
                      {"GPU ranks", "/loader/gpus", "/loader/gpus", 1},
                      {"elapsed s", "/results/elapsed_s", "/tune/elapsed_s", 1}};
  std::string o = "Comparison\n";
  for (size_t i = 0; i < docs.size(); ++i)
    o += fmt::format("  {}: {} ({}, {}){}\n", static_cast<char>('A' + i % 26), names[i], docs[i].value("kind", "?"),
                     docs[i].value("created_utc", ""), docs[i].value("partial", false) ? " [PARTIAL]" : "");
  o += fmt::format("\n  {:<22}", "figure");
  for (size_t i = 0; i < docs.size(); ++i) o += fmt::format(" {:>12}", static_cast<char>('A' + i % 26));
  if (docs.size() == 2) o += fmt::format(" {:>8}", "B/A");
  o += "\n";
  for (const auto& r : rows) {
    std::vector<double> v;
    for (const auto& d : docs) v.push_back(fig(d, r.run, r.tune));
    bool any = false;
    for (double x : v) any |= x >= 0;
    if (!any) continue;
    o += fmt::format("  {:<22}", r.label);
    for (double x : v) o += x >= 0 ? fmt::format(" {:>12.1f}", x * r.scale) : fmt::format(" {:>12}", "-");
    if (docs.size() == 2) o += v[0] > 0 && v[1] >= 0 ? fmt::format(" {:>7.2f}x", v[1] / v[0]) : fmt::format(" {:>8}", "-");
    o += "\n";
  }
  for (size_t i = 0; i < docs.size(); ++i)
    if (docs[i].value("kind", "") == "tune" && docs[i].contains("recommendation"))
      o += fmt::format("  {} recommends: {}\n", static_cast<char>('A' + i % 26),
                       docs[i]["recommendation"].value("dataloader", "-"));
  return o;
}

}  // namespace ioprobe
