// Runs a tune sweep: every setting of the plan, `repeats` times, round-robin (repeat 1 of every
// setting, then repeat 2, ...) so slow drift of the storage affects all settings alike. Each run
// is one run_loader() call of plan.run_s seconds with the GPU consumer of the base config.
#pragma once

#include <functional>
#include <string>

#include "dataset/file_index.hpp"
#include "loader/config.hpp"
#include "loader/loader_run.hpp"
#include "loader/step_barrier.hpp"
#include "topology/numa.hpp"
#include "tune/sweep.hpp"
#include "tune/tune_stop.hpp"

namespace ioprobe {

/// Called before (done == nullptr) and after each run. `run` counts from 0 up to `runs`.
using TuneProgressFn =
    std::function<void(size_t run, size_t runs, const TunePoint& point, uint32_t repeat, const TuneSample* done)>;

struct TuneOutcome {
  bool partial = false;  // stopped early: interrupted or out of budget
  TuneStop stop;         // why the sweep ended (tune_stop.hpp)
  double elapsed_s = 0;
  size_t runs_done = 0;
  LoaderResult best_run;  // the full result of the fastest single run (for its timeline)
  size_t best_point = 0;  // its point index
};

/// Steady-state figures of one loader run. The steady window is the run's timeline intervals
/// after the first (warm-up) and before the last (cut short), when at least kSteadyMinIntervals
/// exist. When the run recorded its deliveries (LoaderConfig::record_deliveries) and every rank
/// has two or more batches in the window, the rates come from completion times: per rank, the
/// samples (bytes) of the batches after its first one in the window divided by the exact time
/// from that first completion to its last, summed over ranks; AU per rank is the nominal step
/// time of the batches from the first to the one before the last (`step_time_s` per batch of
/// `batch_size`, a partial batch its share) over that time, or 1 - waited / time when
/// `step_time_s` is 0; `au` is the mean over ranks, `au_min` the lowest. Otherwise the rates are
/// whole batches counted per interval (quantized to batch_size / interval) and
/// AU = 1 - waited / (ranks x window). With fewer intervals the whole run is used. `steady` is set
/// when the window held at least `min_steady_samples` samples (with fewer than
/// kSteadyMinIntervals intervals: never; TuneSample::intervals tells which condition failed). Pure.
TuneSample steady_sample(const LoaderResult& r, uint32_t ranks, uint64_t min_steady_samples = 0, double step_time_s = 0,
                         uint32_t batch_size = 0);

/// How a sweep runs across the processes of a multi-host job: every setting runs on every
/// process at once (one DDP job over all hosts), and its measurement is the merged result.
/// Default (all empty): this process alone.
struct SweepAcross {
  StepSync* sync = nullptr;  // each loader run's step exchange across processes (loader/step_barrier.hpp)
  /// Agreement before each run: given this process's stop code (0 go on, 1 budget spent,
  /// 2 interrupted), returns the highest over all processes, the same on every process.
  std::function<int(int)> agree_stop;
  /// A run's result merged over every process (LoaderResult::merge), on every process, so that
  /// every process records the same sample and makes the same decisions.
  std::function<LoaderResult(const LoaderResult&)> merge;
};

/// One measured run of tune or capacity, made from `base` (the plan's, read-only): `run_s` seconds
/// (the duration ends it; epochs unbounded, kMaxEpochs), seed base.seed + repeat, timeline
/// intervals of kTuneIntervalS and every batch's delivery time recorded (rates from completion
/// times).
LoaderConfig timed_run_config(const LoaderConfig& base, double run_s, uint32_t repeat);

/// Repeat `repeat` of the setting `p`: timed_run_config with the setting's num_workers,
/// prefetch_factor and NUMA placement (parse_placement of p.numa). Throws as parse_placement does.
LoaderConfig setting_run_config(const LoaderConfig& base, const TunePoint& p, double run_s, uint32_t repeat);

/// Runs `plan` over `index`, filling plan.points[*].runs and their summaries. Stops when
/// `deadline_ns` (core/clock now_ns() scale; 0 = none) is passed or on SIGINT/SIGTERM, keeping
/// what was measured. Throws Error when a worker's engine cannot be set up. `layout`: as for
/// run_loader() (null: one sample per file).
TuneOutcome run_sweep(const FileIndex& index, const LoaderConfig& base, SweepPlan& plan, const Topology& topo,
                      int64_t deadline_ns, const TuneProgressFn& progress, const RecordLayout* layout = nullptr,
                      const SweepAcross& across = {});

}  // namespace ioprobe
