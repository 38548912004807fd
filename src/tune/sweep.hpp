// The tune sweep: which DataLoader settings to try (num_workers x prefetch_factor x NUMA
// placement), how long each run lasts within the time budget, and the measured table of points.
// Pure values; the runner (tune/tune_run.hpp) fills the measurements, tune/recommend.hpp reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/numa.hpp"

namespace ioprobe {

/// One measured repetition of one setting.
struct TuneSample {
  double samples_per_s = 0;  // steady state (first timeline interval dropped), samples/s
  double bytes_per_s = 0;    // steady state, B/s
  double au = 0;             // accelerator utilization of the run, fraction 0..1 (mean over ranks)
  double au_min = 0;         // the lowest rank's AU in the same window, fraction 0..1
  double cpu_used = 0;       // CPUs busy on average: (user + sys CPU s) / wall s
  double worker_busy = 0;    // mean fraction of wall time workers spent fetching
  double elapsed_s = 0;
  uint64_t steady_samples = 0;    // samples delivered inside the steady window
  size_t intervals = 0;           // timeline intervals the run recorded (kSteadyMinIntervals needed)
  bool steady = false;            // >= kSteadyMinIntervals intervals and the window held
                                  // >= kSteadyBatchesPerWorker batches per worker
  bool from_completions = false;  // rates from batch completion times (Delivery), not interval counts
};

/// Each tune run records its timeline in intervals of this many seconds. Chosen by us.
constexpr double kTuneIntervalS = 0.5;

/// The steady window of a run is its timeline intervals after the first (warm-up) and before the
/// last (cut short by the run's end), so a run needs at least this many intervals to have one.
constexpr size_t kSteadyMinIntervals = 3;

/// The shortest run (--point-time) tune accepts, seconds: kSteadyMinIntervals intervals of
/// kTuneIntervalS (1.5 s) plus one more interval, so that the window keeps at least one whole
/// interval when start-up delays the first delivery. The budget planner's minimum share as well.
constexpr double kMinRunS = (kSteadyMinIntervals + 1) * kTuneIntervalS;

/// A run counts as a measurement of its setting only when, after the warm-up interval, every
/// worker delivered this many batches on average: fewer means the window saw less than the
/// round-robin cycle repeated (start-up, or a host too loaded for the point time), and its rate
/// is not the setting's. Chosen by us (not a published figure): two cycles.
constexpr uint32_t kSteadyBatchesPerWorker = 2;

/// A run with long GPU steps lasts at least kMinWarmupS plus enough steps for its steady window
/// (longer than --point-time when the steps are long): capacity's points kMinStepsPerPoint steps
/// (every rank completes several batches in the window), tune's settings tune_steps(). Chosen by us.
constexpr double kMinWarmupS = 1.0;
constexpr uint32_t kMinStepsPerPoint = 8;

/// max(run_s, kMinWarmupS + steps x step_time_s), seconds.
double lengthened_run_s(double run_s, double step_time_s, uint32_t steps);

/// The GPU steps a tune run of `num_workers` needs so its window can hold kSteadyBatchesPerWorker
/// batches per worker (a rank takes one batch per step): that many per worker plus one, at least
/// kMinStepsPerPoint.
uint32_t tune_steps(uint32_t num_workers);

/// One setting of the sweep and what its repetitions measured.
struct TunePoint {
  uint32_t num_workers = 1;  // per GPU rank
  uint32_t prefetch_factor = 2;
  std::string numa = "none";  // Placement::text(): "none" | "node:N"
  bool pin_memory = false;    // its runs ran PyTorch's pin_memory thread (the sweep's --pin-memory; run_sweep sets it)
  double run_s = 0;           // seconds each run lasts: the plan's, or lengthened (lengthen_runs); 0 = the plan's
  std::vector<TuneSample> runs;
  // Summary over runs (summarize_point()): medians, and the spread of samples/s.
  double samples_per_s = 0, bytes_per_s = 0, au = 0, cpu_used = 0, worker_busy = 0;
  double samples_per_s_min = 0, samples_per_s_max = 0;
  double spread = 0;       // (max - min) / median of samples/s, fraction; 0 with one run
  size_t steady_runs = 0;  // runs that reached a steady state (TuneSample::steady)
};

/// Fills the summary fields of `p` from p.runs: medians and spread over the steady runs, or over
/// all runs when none was steady (then steady_runs = 0 and the point is not used for the
/// recommendation). No runs: zeros.
void summarize_point(TunePoint& p);

/// The default num_workers list: 1, 2, 4, ... up to max(4, 8 x cpus_allowed), capped at 64.
/// The bound goes past the CPU count on purpose: workers that wait on I/O (cold storage) keep
/// helping beyond it, and the sweep is there to measure where they stop.
std::vector<uint32_t> default_worker_list(int cpus_allowed);

/// Parses "4,8,16,32" (each 1..4096, no duplicates) into a sorted list. Throws UsageError
/// naming `option` and the value.
std::vector<uint32_t> parse_uint_list(const std::string& text, const std::string& option, uint32_t lo, uint32_t hi);

/// The placements worth sweeping: "none", the device's node and each node, de-duplicated.
/// With one node (or none) only "none": binding cannot change anything; `why` says so.
std::vector<std::string> placements_to_sweep(const Topology& topo, int device_node, std::string* why);

/// The sweep's settings in run order, and the time each run gets.
struct SweepPlan {
  std::vector<TunePoint> points;  // measurements empty
  uint32_t repeats = 3;
  double run_s = 0;        // wall time of each run (--duration of the loader), seconds
  double estimated_s = 0;  // runs x (run_s + per-run overhead)
};

/// Plans the cross product of `workers` x `prefetch` x `placements` with `repeats` runs each,
/// giving each run the share of `budget_s` left after `setup_s`, clamped to [min_run_s, max_run_s].
/// Throws UsageError when even min_run_s per run does not fit the budget, naming the budget
/// needed and how to narrow the sweep.
SweepPlan make_plan(const std::vector<uint32_t>& workers, const std::vector<uint32_t>& prefetch,
                    const std::vector<std::string>& placements, uint32_t repeats, double budget_s, double setup_s,
                    double min_run_s = kMinRunS, double max_run_s = 20.0);

/// Lengthens the runs of each setting whose GPU steps of `step_time_s` would leave no steady
/// window in plan.run_s: TunePoint::run_s = lengthened_run_s(plan.run_s, step_time_s,
/// tune_steps(num_workers)), the way capacity lengthens its points; estimated_s grows to match.
void lengthen_runs(SweepPlan& plan, double step_time_s);

/// Seconds of overhead per run assumed by make_plan (worker start/stop, engine setup).
constexpr double kRunOverheadS = 0.3;

}  // namespace ioprobe
