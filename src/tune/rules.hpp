// Rules of thumb checked against a measured sweep. Sizing guides for PyTorch repeat
// "num_workers = 4 x CPU cores"; ioprobe neither endorses nor dismisses it: it reads the rule's
// setting off the measured table and puts it beside the best one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tune/recommend.hpp"
#include "tune/sweep.hpp"

namespace ioprobe {

/// "num_workers = 4 x CPU cores" against the sweep.
struct WorkersRule {
  uint32_t rule_workers = 0;      // 4 x cpus_allowed
  bool planned = false;           // the sweep's plan held rule_workers, run or not (an interrupted or
                                  // out-of-budget sweep may stop before it)
  bool swept = false;             // the sweep ran rule_workers (steady or not)
  bool measured = false;          // a steady point at rule_workers exists in the recommendation's placement
  size_t rule_point = 0;          // its index (the best prefetch_factor at that num_workers), when measured
  size_t best_point = 0;          // the fastest point (Recommendation::best)
  double rule_samples_per_s = 0;  // median samples/s at the rule's setting, when measured
  double best_samples_per_s = 0;
  bool holds = false;  // the rule's setting is within the sweep's tolerance of the best
};

/// Reads the rule off `table` with `rec` (a valid recommendation of that table) for a host with
/// `cpus_allowed` CPUs. Not measured when the sweep did not include 4 x cpus_allowed workers, when
/// it did but stopped before running them, or when those runs reached no steady state (`planned`
/// and `swept` tell the three apart).
WorkersRule check_workers_rule(const std::vector<TunePoint>& table, const Recommendation& rec, int cpus_allowed);

/// The warning for sweep settings whose prefetch slots (num_workers x prefetch_factor: the batches
/// a rank's DataLoader keeps in flight) outnumber the `batches_per_rank_epoch` batches one rank
/// gets per epoch: each epoch ends before such a pipeline is full, so those runs never reach a
/// steady state. Names how many settings, the largest (its slots, num_workers and prefetch_factor),
/// the batches per epoch, and what to do (samples for that many batches per rank at `ranks` ranks of
/// `batch_size`). "" when no setting has more slots than batches, or batches_per_rank_epoch is 0.
std::string prefetch_slots_warning(const std::vector<TunePoint>& table, uint64_t batches_per_rank_epoch, uint32_t ranks,
                                   uint32_t batch_size);

}  // namespace ioprobe
