// The emulated DataLoader's CPU costs: what each worker process and the main process burn per
// sample, per batch and per epoch. Given by hand (--cpu-per-sample, --main-cpu-per-batch) or read
// from a calibration document (cli/run_calibration.cpp: the user's own Dataset measured by
// `ioprobe calibrate`); burned by the loader (loader_run.cpp, consumer.cpp, sharer_thread.hpp,
// worker_gil.hpp); modelled by ingest/calibration_effect; written by report/ under the document's
// own names (given beside each field below). All figures are CPU time in microseconds; 0 means
// "not modelled" (nothing is burned).
#pragma once

#include <cstdint>
#include <vector>

namespace ioprobe {

/// A DataLoader worker's CPU costs at one level of crowding (worker processes per CPU): the
/// figures a calibration's crowding curve varies (loader/worker_costs.hpp). µs of CPU time.
struct WorkerCosts {
  // The worker's loop (fetch + collate) per sample, after its read; its burn leaves out the own
  // read figure of the run's engine (LoaderCosts::own_read_*_us). Document: cpu_per_sample_us.
  double loop_us = 0;
  // The worker's queue feeder thread per sample (multiprocessing.Queue pickling the batch into
  // shared memory): burned per batch (x its samples) by a feeder thread per worker after the batch
  // is built and before the rank's consumer can take it, overlapping the worker's next fetch; 0: no
  // feeder thread, the batch is visible once fetched. Document: worker_put_cpu_per_sample_us.
  double put_us = 0;
  // The worker's other threads per sample (chiefly multiprocessing's resource sharer handing each
  // tensor's fd to the main process): burned by a thread per worker (loader/sharer_thread.hpp) in
  // LoaderCosts::tensors_per_batch round trips with the rank's consumer as it receives the batch.
  // Document: worker_other_cpu_per_sample_us.
  double other_us = 0;
  // A fresh worker's one-time CPU at each epoch's start, before its first sample (fork, start-up and
  // the first batches' one-time costs). Document: worker_startup_cpu_us.
  double startup_cpu_us = 0;

  bool operator==(const WorkerCosts&) const = default;
};

/// The worker's costs measured at one level of crowding.
struct WorkerCostPoint {
  double workers_per_cpu = 0;  // worker processes per CPU the costs were measured at (> 0)
  WorkerCosts costs;
};

/// Measured points, workers_per_cpu strictly increasing. The first is the uncrowded host's
/// figures and stands for every level up to its own (a calibration's base point sits at 1 worker
/// process per CPU); between points the costs are linear in workers_per_cpu; beyond the last, the
/// last point's figures hold (not measured there: worker_costs_at says so). Empty: no curve, the
/// config's own figures stand at every level.
struct WorkerCostCurve {
  std::vector<WorkerCostPoint> points;
  bool empty() const { return points.empty(); }
};

/// Every CPU cost of the emulated DataLoader: LoaderConfig::costs. The defaults are a run without
/// --calibration and without --cpu-per-sample / --main-cpu-per-batch: nothing burned.
struct LoaderCosts {
  // The worker's costs at the run's own crowding: with a curve, each run takes them from it at its
  // own ranks x num_workers / CPUs (loader/worker_costs.hpp), so a tune or capacity point has its
  // level's costs; without one these stand at every level.
  WorkerCosts worker;
  WorkerCostCurve worker_curve;  // a calibration's --oversubscribe points; empty: `worker` everywhere
  // Of the loop cost (and each curve point's), the part that is the sample's read from the page
  // cache, which the worker does itself with the engine: ioprobe's own read's CPU per file with
  // io_uring / psync, µs (a calibration's figure, cli/calibrate_read.hpp). The burn leaves out the
  // figure of the run's engine, for one file per sample (not records in shards); 0: nothing left out.
  double own_read_io_uring_us = 0;
  double own_read_psync_us = 0;
  // Each worker's loop, feeder and sharer burns take turns on one lock, as a real worker's Python
  // threads share CPython's GIL (loader/worker_gil.hpp); set by --calibration.
  bool python_gil = false;
  // With python_gil, the share (0..1) of the feeder's CPU that holds the lock; the rest runs beside
  // the worker's other threads (torch copies tensors into shared memory without the GIL): a
  // calibration's measured figure (python/ioprobe_gil.py); 1: all of it. Document: worker_put_gil_share.
  double put_gil_share = 1.0;
  // A thread pipeline (torchdata.nodes ParallelMapper(method="thread"), SPDL, a ThreadPoolExecutor
  // mapping a decode over the files) instead of a DataLoader: with python_gil, the num_workers
  // workers are threads of one process and take turns on ONE lock (one interpreter's GIL), and each
  // sample's loop CPU holds it for loop_gil_share (0..1) of it (a calibration's figure, derived from
  // the pipeline's rates at 1 and more threads: python/ioprobe_threads.py). The process has no
  // feeder, sharer or main-process costs: a thread-pipeline calibration sets those figures to 0.
  bool threads_share_gil = false;
  double loop_gil_share = 1.0;
  // Tensors in a delivered batch: the main process's round trips with the worker's sharer; 0: one.
  uint32_t tensors_per_batch = 0;
  // The main process at each epoch's start (iter(): forking the workers), burned by the rank's
  // consumer thread. Document: main_startup_cpu_us.
  double main_startup_cpu_us = 0;
  // The main process per full batch (receive, unpickle, shared-memory attach), burned beside the GPU
  // step (loader/consumer.hpp); a partial batch its share. Document: main_cpu_per_batch_us.
  double main_cpu_per_batch_us = 0;
};

}  // namespace ioprobe
