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

}  // namespace ioprobe
