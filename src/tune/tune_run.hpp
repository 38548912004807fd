// Runs a tune sweep: every setting of the plan, `repeats` times, round-robin (repeat 1 of every
// setting, then repeat 2, ...) so slow drift of the storage affects all settings alike. Each run
// is one run_loader() call of plan.run_s seconds with the GPU consumer of the base config.
#pragma once

#include <functional>
#include <string>

#include "dataset/file_index.hpp"
#include "loader/config.hpp"
#include "loader/loader_run.hpp"
#include "loader/step_sync.hpp"
#include "topology/numa.hpp"
#include "tune/sweep.hpp"

namespace ioprobe {

/// Called before (done == nullptr) and after each run. `run` counts from 0 up to `runs`.
using TuneProgressFn = std::function<void(size_t run, size_t runs, const TunePoint& point, uint32_t repeat,
                                          const TuneSample* done)>;

struct TuneOutcome {
  bool partial = false;         // stopped early: interrupted or out of budget
  std::string stop_reason;      // "completed" | "budget" | "interrupted (SIGINT)" ...
  double elapsed_s = 0;
  size_t runs_done = 0;
  LoaderResult best_run;        // the full result of the fastest single run (for its timeline)
  size_t best_point = 0;        // its point index
};

/// Steady-state figures of one loader run: the first timeline interval (warm-up) and the last
/// (cut short) are dropped when at least 3 intervals exist, else the whole run is used.
/// AU in steady state = 1 - waited / (ranks x interval time). `steady` is set when the window
/// held at least `min_steady_samples` samples (with fewer than kSteadyMinIntervals intervals:
/// never; TuneSample::intervals tells which condition failed). Pure.
TuneSample steady_sample(const LoaderResult& r, uint32_t ranks, uint64_t min_steady_samples = 0);

/// How a sweep runs across the processes of a multi-host job: every setting runs on every
/// process at once (one DDP job over all hosts), and its measurement is the merged result.
/// Default (all empty): this process alone.
struct SweepAcross {
  StepSync* sync = nullptr;  // each loader run's step exchange across processes (loader/step_sync.hpp)
  /// Agreement before each run: given this process's stop code (0 go on, 1 budget spent,
  /// 2 interrupted), returns the highest over all processes, the same on every process.
  std::function<int(int)> agree_stop;
  /// A run's result merged over every process (LoaderResult::merge), on every process, so that
  /// every process records the same sample and makes the same decisions.
  std::function<LoaderResult(const LoaderResult&)> merge;
};

/// Runs `plan` over `index`, filling plan.points[*].runs and their summaries. Stops when
/// `deadline_ns` (core/clock now_ns() scale; 0 = none) is passed or on SIGINT/SIGTERM, keeping
/// what was measured. Throws Error when a worker's engine cannot be set up. `layout`: as for
/// run_loader() (null: one sample per file).
TuneOutcome run_sweep(const FileIndex& index, const LoaderConfig& base, SweepPlan& plan, const Topology& topo,
                      int64_t deadline_ns, const TuneProgressFn& progress, const RecordLayout* layout = nullptr,
                      const SweepAcross& across = {});

}  // namespace ioprobe
