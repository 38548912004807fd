// The loader's slice of the run plan: the options parsed and validated by cli/ (run_config_from_vm),
// then finished once by cli/ prepare_run (engine, O_DIRECT, eviction, placement, step time).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/engine_kind.hpp"
#include "loader/worker_costs.hpp"
#include "topology/numa.hpp"

namespace ioprobe {

class Consumer;  // loader/consumer.hpp

/// The most epochs a run takes (--epochs' upper bound), and the count a --duration run without
/// --epochs uses: reports show it as "until --duration", not as a count.
constexpr uint32_t kMaxEpochs = 1000000;

struct LoaderConfig {
  uint32_t num_workers = 8;      // DataLoader num_workers (worker threads per rank)
  uint32_t batch_size = 256;     // samples per batch
  uint32_t prefetch_factor = 2;  // batches outstanding per worker
  bool shuffle = true;           // RandomSampler, fresh permutation per epoch
  bool drop_last = false;
  uint32_t epochs = 1;
  double duration_s = 0;                      // stop after this many seconds (0: no time limit)
  double cpu_per_sample_us = 0;               // real CPU work per sample after its read, microseconds
  double own_read_io_uring_us = 0;            // of cpu_per_sample_us (and each curve point's loop cost), the part
  double own_read_psync_us = 0;               // that is the sample's read from the page cache, which the worker
                                              // does itself with the engine: ioprobe's own read's CPU per file with
                                              // io_uring / psync, µs (a calibration's figure, cli/calibrate_read.hpp);
                                              // the burn leaves out the figure of the run's engine, for one file per
                                              // sample (not records in shards); 0: nothing left out
  double worker_put_cpu_per_sample_us = 0;    // CPU of the DataLoader worker's queue feeder thread per sample
                                              // (multiprocessing.Queue pickling the batch into shared memory),
                                              // microseconds: burned per batch (x its samples) by a feeder thread
                                              // per worker after the batch is built and before the rank's
                                              // consumer can take it, overlapping the worker's next fetch; 0: none
                                              // (no feeder thread, the batch is visible once fetched)
  bool python_gil = false;                    // each worker's loop, feeder and sharer burns take turns on one lock,
                                              // as a real worker's Python threads share CPython's GIL
                                              // (loader/worker_gil.hpp); set by --calibration
  double worker_put_gil_share = 1.0;          // with python_gil, the share (0..1) of the feeder's CPU that holds the
                                              // lock; the rest runs beside the worker's other threads (torch
                                              // copies tensors into shared memory without the GIL): a calibration's
                                              // measured figure (python/ioprobe_gil.py); 1: all of it
  double worker_other_cpu_per_sample_us = 0;  // CPU of the DataLoader worker's other threads per sample (chiefly
                                              // multiprocessing's resource sharer handing each tensor's fd to the
                                              // main process), microseconds: burned by a thread per worker
                                              // (loader/sharer_thread.hpp) in tensors_per_batch round trips with
                                              // the rank's consumer as it receives the batch; 0: none
  uint32_t tensors_per_batch = 0;             // tensors in a delivered batch (the round trips above); 0: one
  bool decode_jpeg = false;          // each worker decodes every sample it read with libjpeg-turbo (jpeg_decode.hpp),
                                     // before the cpu_per_sample_us burn; a file that does not decode is an error
  uint64_t seed = 0;                 // sampler seed
  uint32_t ranks = 1;                // GPU ranks in this process, each with its own loader (DDP)
  uint32_t world_ranks = 0;          // GPU ranks of the whole job, all hosts (0: just `ranks`)
  uint32_t first_rank = 0;           // the job-wide rank of this process's first GPU rank
  double step_time_s = 0;            // GPU compute per batch, seconds (0: no consumer delay)
  double worker_startup_cpu_us = 0;  // CPU each worker burns at each epoch's start before its first sample: a
                                     // fresh DataLoader worker's fork, start-up and first batches' one-time
                                     // costs (a calibration's figure), microseconds; 0: none
  // The per-worker costs above as a function of worker processes per CPU (a calibration's
  // --oversubscribe points, loader/worker_costs.hpp): when not empty, each run sets them from it at
  // its own ranks x num_workers / cpus. Empty: the figures above stand at every level.
  WorkerCostCurve worker_cost_curve;
  int cpus = 0;                      // CPUs the loader's threads share for that level; 0: sched_getaffinity's
  double main_startup_cpu_us = 0;    // main-process CPU at each epoch's start (iter(): forking the workers),
                                     // microseconds, burned by the rank's consumer thread; 0: none
  double main_cpu_per_batch_us = 0;  // main-process CPU per full batch (receive, unpickle, shared-memory attach),
                                     // microseconds, burned beside the GPU step (loader/consumer.hpp); 0: none
  bool pin_memory = false;           // a pin thread per rank copies each batch into page-locked memory (pin_stage.hpp)
  double pin_bytes_per_batch = 0;    // bytes a full batch pins (a calibration's bytes per batch); 0: the bytes read
  bool h2d_cuda = false;             // copy each delivered batch to a GPU (loader/h2d_stage.hpp); the preflight
                                     // has checked that CUDA and a device are there
  int h2d_devices = 0;               // CUDA devices: rank r copies to device r mod h2d_devices
  EngineKind engine = EngineKind::kIoUring;  // resolved by prepare_run (never auto)
  bool direct = true;                        // O_DIRECT
  bool evict_before_epoch = false;           // buffered cold runs: posix_fadvise(DONTNEED) every file first
  bool drop_caches = false;                  // also write 3 to /proc/sys/vm/drop_caches before each epoch (root); when
                                             // that succeeds the per-file eviction is skipped (it would reread every
                                             // file's inode and start the epoch with warm metadata)
  std::string drop_caches_file = "/proc/sys/vm/drop_caches";  // where drop_caches writes (tests: a plain file)
  bool measure_residency = false;  // page-cache residency of (up to 1000 of) the files before each epoch
  Placement placement;             // --numa, resolved (never Local here)
  double timeline_interval_s = 1.0;
  bool record_deliveries = false;   // keep every batch's delivery time in RankStats::deliveries (tune, capacity:
                                    // rates from completion times, not whole batches per timeline interval)
  uint64_t read_size = 1ULL << 20;  // sharded datasets: bytes per sequential shard read (multiple of 4 KiB)
  // Sharded datasets read as webdataset does (loader/wds_order.hpp) when shuffle_buffer > 0:
  // WebDataset(shardshuffle=wds_shard_shuffle, seed=seed).shuffle(shuffle_buffer, initial=shuffle_initial,
  // seed=seed) in each worker. 0: the plain IterableDataset order (shard_plan.hpp).
  uint64_t shuffle_buffer = 0;       // samples each worker's buffer holds
  uint64_t shuffle_initial = 100;    // samples in the buffer before it yields the first (webdataset's default)
  uint64_t wds_shard_shuffle = 100;  // shards in the shardshuffle buffer (webdataset's for True); 0: list order
  // Called by rank 0 just before each epoch's first read (after the cache preparation) and once
  // more after every rank has finished: N epochs started give N + 1 calls. Device accounting
  // (topology/device_io.hpp) reads its counters here. Must not throw; may be empty.
  std::function<void()> epoch_mark;
  // The training side of each rank (loader/consumer.hpp), called once per rank in the rank's
  // thread with the job-wide rank; may return null (no step). Empty: make_consumer(*this), the GPU
  // step of step_time_s beside main_cpu_per_batch_us. A later GPU-side consumer (a CUDA copy of
  // the batch's buffer) plugs in here.
  std::function<std::unique_ptr<Consumer>(uint32_t rank)> consumer_factory;
};

}  // namespace ioprobe
