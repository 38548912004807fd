#include "tune/rules.hpp"

namespace ioprobe {

WorkersRule check_workers_rule(const std::vector<TunePoint>& table, const Recommendation& rec, int cpus_allowed) {
  WorkersRule w;
  w.rule_workers = static_cast<uint32_t>(4 * (cpus_allowed > 0 ? cpus_allowed : 1));
  for (const TunePoint& p : table) {
    w.planned = w.planned || p.num_workers == w.rule_workers;
    w.swept = w.swept || (p.num_workers == w.rule_workers && !p.runs.empty());
  }
  if (!rec.valid || rec.best >= table.size()) return w;
  w.best_point = rec.best;
  w.best_samples_per_s = table[rec.best].samples_per_s;
  for (size_t i = 0; i < table.size(); ++i) {
    const TunePoint& p = table[i];
    if (p.num_workers != w.rule_workers || p.numa != rec.numa) continue;
    w.swept = w.swept || !p.runs.empty();
    if (p.steady_runs == 0) continue;
    if (!w.measured || p.samples_per_s > w.rule_samples_per_s) {
      w.measured = true;
      w.rule_point = i;
      w.rule_samples_per_s = p.samples_per_s;
    }
  }
  w.holds = w.measured && w.rule_samples_per_s >= (1 - rec.tolerance) * w.best_samples_per_s;
  return w;
}

}  // namespace ioprobe
