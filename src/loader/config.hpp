// The loader's slice of the run plan: the options parsed and validated by cli/ (run_config_from_vm),
// then finished once by cli/ prepare_run (engine, O_DIRECT, eviction, placement, step time).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/engine_kind.hpp"
#include "loader/costs.hpp"
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
  double duration_s = 0;  // stop after this many seconds (0: no time limit)
  // The worker processes' and the main process's CPU costs (loader/costs.hpp), µs: the loop,
  // feeder, other threads and start-up of each worker (at the run's crowding, from the curve when
  // a calibration has one), the own read left out of the loop, the GIL, the main process's work.
  LoaderCosts costs;
  bool decode_jpeg = false;  // each worker decodes every sample it read with libjpeg-turbo (jpeg_decode.hpp),
                             // before the loop burn (costs.worker.loop_us); a file that does not decode is
                             // an error
  uint64_t seed = 0;         // sampler seed
  uint32_t ranks = 1;        // GPU ranks in this process, each with its own loader (DDP)
  uint32_t world_ranks = 0;  // GPU ranks of the whole job, all hosts (0: just `ranks`)
  uint32_t first_rank = 0;   // the job-wide rank of this process's first GPU rank
  double step_time_s = 0;    // GPU compute per batch, seconds (0: no consumer delay)
  int cpus =
      0;  // CPUs the loader's threads share, for the crowding level of costs.worker_curve; 0: sched_getaffinity's
  bool pin_memory = false;         // a pin thread per rank copies each batch into page-locked memory (pin_stage.hpp)
  double pin_bytes_per_batch = 0;  // bytes a full batch pins (a calibration's bytes per batch); 0: the bytes read
  bool h2d_cuda = false;           // copy each delivered batch to a GPU (loader/h2d_stage.hpp); the preflight
                                   // has checked that CUDA and a device are there
  int h2d_devices = 0;             // CUDA devices: rank r copies to device r mod h2d_devices
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
  // step of step_time_s beside costs.main_cpu_per_batch_us. A later GPU-side consumer (a CUDA copy of
  // the batch's buffer) plugs in here.
  std::function<std::unique_ptr<Consumer>(uint32_t rank)> consumer_factory;
};

// The plan's LoaderConfig is read-only once the preflight has built it (cli/run_plan.hpp): each
// variation of it (a process's place in the job, a tune setting, a capacity point, the device
// marks of one run) is a new value made from it by one of these, and the plan stays as it was.

/// `l` for process `process` of a job of `processes` processes that each run l.ranks GPU ranks:
/// the DistributedSampler's world (processes x ranks) and this process's first rank (process x ranks).
LoaderConfig in_job(const LoaderConfig& l, uint32_t processes, uint32_t process);

/// `l` with `ranks` GPU ranks in this process.
LoaderConfig with_ranks(const LoaderConfig& l, uint32_t ranks);

/// `l` with `num_workers` DataLoader workers per rank.
LoaderConfig with_num_workers(const LoaderConfig& l, uint32_t num_workers);

/// `l` with `mark` as its epoch_mark (called by rank 0 at each epoch's start and once at the end).
LoaderConfig with_epoch_mark(const LoaderConfig& l, std::function<void()> mark);

}  // namespace ioprobe
