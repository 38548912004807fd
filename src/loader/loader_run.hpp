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
#include "loader/loader_result.hpp"
#include "loader/step_barrier.hpp"

namespace ioprobe {

/// Live counters a progress display may read while the run goes on.
struct LoaderProgress {
  std::atomic<uint64_t> samples{0};  // samples delivered to the training loop
  std::atomic<uint64_t> bytes{0};    // bytes read so far, counted per MiB and per batch of each worker
};

/// The loop CPU a worker burns per sample: cfg.costs.worker.loop_us (as resolved at the run's level)
/// less the own read figure of cfg.engine (LoaderCosts::own_read_*_us), at least 0; the whole
/// cost for records in shard or token files (`layout` says so), whose reads are not one file each.
double loop_burn_us(const LoaderConfig& cfg, const RecordLayout* layout);

/// Runs the loader over `index` (paths relative to index.root()). Never throws for per-file I/O
/// errors (they are counted); throws Error when a worker's engine cannot be set up.
/// `progress`, when given: samples after every delivered batch, bytes as reads complete, in steps
/// of at most 1 MiB per worker and at each batch's end (a sample may be one huge file). The stop
/// (--duration, a signal) takes effect between read requests, inside a file's read.
/// `topo` (may be null) is used to bind each worker thread to cfg.placement.
/// `layout` (may be null: one sample per file) says where records sit when samples are records
/// inside the files: sharded datasets are read as an IterableDataset (loader/shard_plan.hpp),
/// token datasets map-style with one read per sample (loader/record_fetch.hpp).
/// `sync` (may be null: this process alone) joins the DDP step barrier of the other processes of
/// a multi-host job; cfg.world_ranks and cfg.first_rank then place this process's ranks among all.
/// The workers burn loop_burn_us(cfg, layout) per sample.
LoaderResult run_loader(const FileIndex& index, const LoaderConfig& cfg, LoaderProgress* progress = nullptr,
                        const Topology* topo = nullptr, const RecordLayout* layout = nullptr, StepSync* sync = nullptr);

}  // namespace ioprobe
