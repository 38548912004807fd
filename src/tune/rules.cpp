#include "tune/rules.hpp"

#include <set>
#include <utility>

#include <fmt/format.h>

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

std::string prefetch_slots_warning(const std::vector<TunePoint>& table, uint64_t batches_per_rank_epoch, uint32_t ranks,
                                   uint32_t batch_size) {
  if (batches_per_rank_epoch == 0) return "";
  std::set<std::pair<uint32_t, uint32_t>> settings, over;  // (num_workers, prefetch_factor), NUMA placements as one
  uint64_t most = 0;
  std::pair<uint32_t, uint32_t> largest;
  for (const TunePoint& p : table) {
    settings.insert({p.num_workers, p.prefetch_factor});
    const uint64_t slots = uint64_t{p.num_workers} * p.prefetch_factor;
    if (slots <= batches_per_rank_epoch) continue;
    over.insert({p.num_workers, p.prefetch_factor});
    if (slots > most) {
      most = slots;
      largest = {p.num_workers, p.prefetch_factor};
    }
  }
  if (over.empty()) return "";
  return fmt::format(
      "{} of the {} settings swept keep more batches in flight than the {} batch{} per rank per epoch (up to {} "
      "prefetch slots: num_workers={} x prefetch_factor={}): each epoch ends before their pipeline is full, so "
      "their runs never reach a steady state and measure the epoch start, not the storage; use more --files (at "
      "least {} samples for {} batches per rank at {} rank{} of batch size {}), or fewer --workers or "
      "--prefetch-factors",
      over.size(), settings.size(), batches_per_rank_epoch, batches_per_rank_epoch == 1 ? "" : "es", most,
      largest.first, largest.second, most * ranks * batch_size, most, ranks, ranks == 1 ? "" : "s", batch_size);
}

}  // namespace ioprobe
