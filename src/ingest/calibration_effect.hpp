// How a calibration (ioprobe calibrate's document, applied by --calibration) changes what a run
// predicts: the loader's CPU ceiling modelled from the calibrated costs beside the same model
// with the costs a run without --calibration takes (LoaderConfig's defaults: no CPU per sample,
// no main-process cost). A model, not a measurement: the figures are computed from per-sample
// and per-batch CPU costs and the CPU count, never timed.
//
// The model (samples/s, each 0 = no bound from that part):
//   workers:      ranks x num_workers x 1e6 / (the slowest of a worker's threads per sample, µs);
//                 with python_gil the loop, the GIL-holding share of the put and the other
//                 threads take turns on one lock: loop + put x gil_share + other; without it
//                 the loop, the put and the other threads run side by side: the largest of them
//   GIL:          a thread pipeline (LoaderCosts::threads_share_gil) only: ranks x 1e6 /
//                 (loop x loop_gil_share), its threads taking turns on one process's GIL
//   main process: ranks x batch_size x 1e6 / main_cpu_per_batch_us (one main process per rank)
//   CPUs:         cpus x 1e6 / (loop + put + other + main_cpu_per_batch_us / batch_size), every
//                 thread's CPU sharing the CPUs the loader may use
// and the ceiling is the lowest of those that bound. The loop cost is the whole Dataset's
// (its own read included, loader/config.hpp); start-up CPU per epoch is left out (a one-off
// per epoch, not a rate).
#pragma once

#include <cstdint>
#include <string>

#include "loader/config.hpp"

namespace ioprobe {

/// A loader's CPU ceiling by the model above. samples/s; 0 means that part sets no bound.
struct CpuCeiling {
  double worker_us_per_sample = 0;   // a worker's serial CPU per sample (see the model), µs
  double cpu_us_per_sample = 0;      // all threads' CPU per sample, µs
  double workers_samples_per_s = 0;  // the workers' bound
  double main_samples_per_s = 0;     // the main processes' bound
  double cpus_samples_per_s = 0;     // the CPUs' bound
  double samples_per_s = 0;          // the lowest bound; 0: none (no CPU cost modelled)
  std::string bound = "none";        // "workers" | "GIL" | "main process" | "CPUs" | "none"
  double gil_samples_per_s = 0;      // a thread pipeline's one GIL's bound (not in the document)
};

/// The ceiling of `l` at its own ranks x num_workers / CPUs (the worker costs resolved from its
/// cost curve at that level, as the run takes them). Never throws.
CpuCeiling modelled_cpu_ceiling(const LoaderConfig& l);

/// `l` with its costs (LoaderConfig::costs, every figure --calibration sets) put back to the defaults
/// of a run without it: --cpu-per-sample and --main-cpu-per-batch at 0, no GIL, no feeder or sharer
/// CPU, no start-up CPU, no cost curve.
LoaderConfig without_calibration(LoaderConfig l);

/// The calibrated and the uncalibrated ceilings of one loader setting.
struct CalibrationEffect {
  uint32_t ranks = 0;        // GPU ranks of the setting modelled
  uint32_t num_workers = 0;  // workers per rank
  uint32_t batch_size = 0;
  int cpus = 0;             // CPUs the loader shares
  CpuCeiling calibrated;    // modelled_cpu_ceiling(l)
  CpuCeiling uncalibrated;  // modelled_cpu_ceiling(without_calibration(l))
};

/// The effect for `l`, a configuration with the calibration applied. Never throws.
CalibrationEffect calibration_effect(const LoaderConfig& l);

}  // namespace ioprobe
