// LoaderRun: one DataLoader per GPU rank (DDP), each with its sampler, BatchSampler,
// PrefetchQueue of num_workers worker threads and a consumer that spends the GPU's step time
// on every batch. Produces plain measured values; report/ formats them.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "dataset/file_index.hpp"
#include "dataset/record_layout.hpp"
#include "loader/config.hpp"
#include "loader/step_sync.hpp"
#include "stats/histogram.hpp"
#include "stats/timeline.hpp"

namespace ioprobe {

/// What one worker thread did over the whole run.
struct WorkerStats {
  int rank = 0;
  int worker = 0;
  uint64_t files = 0;          // files read successfully (records datasets: samples delivered)
  uint64_t bytes = 0;
  uint64_t io_bytes = 0;       // bytes transferred, O_DIRECT alignment padding and dropped reads included
  uint64_t errors = 0;
  int64_t busy_ns = 0;         // wall time spent fetching batches (I/O + CPU work)
  int64_t cpu_work_ns = 0;     // thread CPU time spent in the emulated per-sample work
  LatencyHistogram file_latency;  // open + read + close per file, ns (records datasets: per read)
  LatencyHistogram open_latency;  // open (+ close) part, ns
  std::string cpu_list;        // CPUs the worker thread was allowed on ("0-1"), after NUMA binding
  std::string numa;            // what the binding did ("not bound: ...", "node 1: CPUs 2-3, ...")
};

/// What one rank's consumer (training loop) saw.
struct RankStats {
  uint64_t batches = 0;
  uint64_t samples = 0;
  uint64_t bytes = 0;
  int64_t wait_ns = 0;          // time the consumer waited for the next batch
  int64_t compute_ns = 0;       // emulated GPU step time spent (wall time of the step's sleep)
  int64_t nominal_compute_ns = 0;  // step time the GPUs' rate asks for, summed over delivered batches
  int64_t first_batch_ns = 0;   // from the epoch start to the first batch of the first epoch
  int64_t elapsed_ns = 0;
  LatencyHistogram batch_wait;  // per-batch wait, ns
  Timeline timeline;
  uint64_t max_outstanding = 0; // most batches in flight (<= num_workers x prefetch_factor)
};

struct LoaderResult {
  std::vector<WorkerStats> workers;
  std::vector<RankStats> ranks;
  int64_t elapsed_ns = 0;       // first dispatch to the last batch delivered, all ranks
  uint32_t epochs_completed = 0;
  bool partial = false;         // stopped by a signal or --duration before the epochs ended
  std::string stop_reason;      // "completed", "duration", "interrupted (SIGINT)", ...
  bool stopped_on_errors = false;  // stopped early because io_uring canceled reads (no verdict on storage)
  uint64_t samples = 0, bytes = 0, errors = 0;
  uint64_t io_bytes = 0;                    // sum of WorkerStats::io_bytes
  std::vector<std::string> error_samples;  // the first few failures, "open PATH: ENOENT ..."
  LatencyHistogram file_latency;            // merged over all workers
  LatencyHistogram open_latency;
  double cpu_user_s = 0, cpu_sys_s = 0;     // getrusage(RUSAGE_SELF) during the run, all threads
  std::vector<double> epoch_resident_fraction;  // page-cache residency before each epoch (rank 0's files)
  std::string residency_method;                 // "cachestat" | "mincore" | "" (not measured)
  std::vector<std::string> cache_notes;         // drop_caches refusals and the like
};

/// Live counters a progress display may read while the run goes on.
struct LoaderProgress {
  std::atomic<uint64_t> samples{0};
  std::atomic<uint64_t> bytes{0};
};

/// Runs the loader over `index` (paths relative to index.root()). Never throws for per-file I/O
/// errors (they are counted); throws Error when a worker's engine cannot be set up.
/// `progress`, when given, is updated after every delivered batch.
/// `topo` (may be null) is used to bind each worker thread to cfg.placement.
/// `layout` (may be null: one sample per file) says where records sit when samples are records
/// inside the files: sharded datasets are read as an IterableDataset (loader/shard_plan.hpp),
/// token datasets map-style with one read per sample (loader/record_fetch.hpp).
/// `sync` (may be null: this process alone) joins the DDP step barrier of the other processes of
/// a multi-host job; cfg.world_ranks and cfg.first_rank then place this process's ranks among all.
LoaderResult run_loader(const FileIndex& index, const LoaderConfig& cfg, LoaderProgress* progress = nullptr,
                        const Topology* topo = nullptr, const RecordLayout* layout = nullptr,
                        StepSync* sync = nullptr);

}  // namespace ioprobe
