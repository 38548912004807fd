// The knee of the num_workers curve and the DataLoader recommendation, as pure functions of a
// measured sweep table (tune/sweep.hpp), so recorded tables can be unit-tested.
//
// Definitions (all on the medians of each point's repetitions):
//   curve(w)    best samples/s over prefetch_factor at num_workers = w, for one NUMA placement.
//   tolerance   max(5%, the best point's spread), at most 25%: differences smaller than this are noise.
//   knee        the smallest w with curve(w) >= (1 - tolerance) x max curve: more workers past it
//               buy less than the noise.
//   meets       a point feeds the GPUs when its accelerator utilization (AU) >= the AU target
//               (MLPerf Storage's criterion; the tune runs the GPU consumer, so AU is measured).
//   recommended the smallest (num_workers, prefetch_factor) that meets demand; when none does, the
//               best setting (highest median: the GPUs are starved, every sample/s counts) and the
//               shortfall, with the knee named in a note when it differs.
//   steady      only points with at least one steady run (sweep.hpp, kSteadyBatchesPerWorker) take
//               part; the others are named in the notes.
//   pin_memory  the value the recommended point's runs ran (TunePoint::pin_memory): True only when
//               measured; otherwise pin_memory_note says that True was not measured by the sweep.
//   binding     a bound placement "helped" when its best beats the unbound best by more than the
//               tolerance; only then, on a machine with more than one node, is numactl advised.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "topology/numa.hpp"
#include "tune/sweep.hpp"

namespace ioprobe {

/// What the recommendation needs besides the table.
struct RecommendInputs {
  double required_samples_per_s = 0;  // all GPUs together
  double au_target = 0.9;             // fraction
  uint32_t gpus = 1;                  // ranks, each with its own DataLoader
  int cpus_allowed = 1;               // sched_getaffinity / cpuset
};

struct Recommendation {
  bool valid = false;  // false when no point reached a steady state (TunePoint::steady_runs)
  bool meets_demand = false;
  size_t point = 0;                    // index into the table of the recommended setting
  size_t best = 0;                     // index of the fastest point (chosen placement)
  size_t knee = 0;                     // index of the knee point (chosen placement)
  double tolerance = 0.05;             // fraction
  double shortfall_samples_per_s = 0;  // required - best, when demand is not met
  std::string numa = "none";           // chosen placement
  bool binding_helped = false;
  std::string numa_reason;         // why (not) bind, one sentence
  std::string numactl;             // "numactl --cpunodebind=N --membind=N python train.py" or ""
  std::string dataloader;          // "DataLoader(num_workers=8, prefetch_factor=2, pin_memory=False)"
  std::string pin_memory_note;     // "" when the recommended point ran pin_memory=True; else why True is not advised
  bool oversubscribed = false;     // recommended workers x gpus > cpus_allowed
  std::vector<std::string> notes;  // oversubscription, noise, sweep edge
};

/// Index of the knee among `idx` (points of one placement): see the header comment.
/// `tolerance` receives the tolerance used. Requires a non-empty `idx`.
size_t find_knee(const std::vector<TunePoint>& table, const std::vector<size_t>& idx, double* tolerance = nullptr);

/// The recommendation for `table` (summarized points). `topo` decides whether numactl can apply.
Recommendation recommend(const std::vector<TunePoint>& table, const RecommendInputs& in, const Topology& topo);

}  // namespace ioprobe
