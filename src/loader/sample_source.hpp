// Where a rank's samples come from: one SampleSource per dataset kind, made by one factory from
// the dataset's layout (seastar's io_tester has a class per workload the same way). The rank's
// loop (loader_run.cpp) knows only this interface:
//   - plan_epoch: the sampler over the kind's index space (files, records or shards), cut into the
//     epoch's batches in delivery order, and the files the rank reads in it;
//   - init_worker: a worker's own readers, set up in the worker's thread;
//   - fetch: one batch built by one worker with its reader;
//   - bytes_counted_as_read: whether the live byte counter advances as reads complete or as
//     batches are delivered.
// The kinds (dataset/spec.hpp DatasetKind):
//   files   (file_source.hpp)   one sample per file, map-style: DistributedSampler + BatchSampler
//                               over the files, one whole-file read per sample;
//   sharded (shard_source.hpp)  records inside shards read as an IterableDataset: each worker
//                               streams its own shards (shard_plan.hpp, record_fetch.hpp);
//   token   (token_source.hpp)  fixed-size windows inside token files, map-style over the
//                               records: one positioned read per sample (record_fetch.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error_record.hpp"
#include "dataset/file_index.hpp"
#include "dataset/record_layout.hpp"
#include "loader/batch.hpp"
#include "loader/config.hpp"
#include "loader/loader_result.hpp"
#include "loader/worker_gil.hpp"

namespace ioprobe {

/// What a rank's source needs from the run. Pointers stay valid for the source's life.
struct SourceEnv {
  const LoaderConfig* cfg = nullptr;
  const FileIndex* index = nullptr;      // paths relative to dirfd
  const RecordLayout* layout = nullptr;  // null, or kind files: one sample per file
  int dirfd = -1;
  uint32_t rank = 0;                            // this rank among all GPU ranks of the job (DistributedSampler's rank)
  uint32_t world = 1;                           // GPU ranks of the job (num_replicas)
  const std::atomic<bool>* run_stop = nullptr;  // the run's stop: per-sample CPU work ends at it
  std::atomic<uint64_t>* bytes_read = nullptr;  // live progress: bytes read, per MiB and per batch (may be null)
  std::function<void(const ErrorRecord&)> on_error;  // a failed read or decode, for LoaderResult::error_samples
  std::function<void()> on_canceled_read;            // a read io_uring completed with ECANCELED (the run may stop)
  const WorkerGils* gils = nullptr;                  // per worker: the lock its CPU burns take (null: none)
};

/// One epoch of a rank: its batches in delivery order, and the files it reads (cache preparation:
/// eviction and residency before the epoch).
struct EpochPlan {
  std::vector<BatchTask> tasks;
  std::vector<uint64_t> files;  // indices into the FileIndex
};

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  /// What the epoch's sampler permutes: files (files), records (token) or shards (sharded).
  virtual uint64_t index_space() const = 0;
  /// Plans epoch `epoch` (0-based) for this rank. Called between epochs only, with no batch of
  /// the rank in flight. Never throws for I/O.
  virtual EpochPlan plan_epoch(uint32_t epoch) = 0;
  /// Sets up worker `w`'s readers, in that worker's thread, before its first fetch. Throws Error
  /// when the engine cannot be set up; fetch then counts the worker's samples as errors.
  virtual void init_worker(uint32_t w) = 0;
  /// Builds the batch `t` on worker `w`'s thread with its reader: counts into `ws` (files, bytes,
  /// latencies, errors, per-sample CPU) and returns what the batch delivered. Stops early, with
  /// `cancelled` set, when `cancel` turns true. Never throws.
  virtual Batch fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) = 0;
  /// True: the live byte counter (SourceEnv::bytes_read) advances inside fetch as reads complete,
  /// per MiB and at the batch's end (a sample may be one huge file); false: the loop adds
  /// Batch::bytes when the batch is delivered.
  virtual bool bytes_counted_as_read() const = 0;
};

/// The source for `env.layout`'s kind (files when null), with state for cfg.num_workers workers.
std::unique_ptr<SampleSource> make_sample_source(const SourceEnv& env);

/// A map-style source (files, token): a DistributedSampler share of a permutation of
/// index_space() samples per epoch, cut by a BatchSampler. Workers take batches round-robin.
class MapStyleSource : public SampleSource {
 public:
  explicit MapStyleSource(const SourceEnv& env) : env_(env) {}
  EpochPlan plan_epoch(uint32_t epoch) override;

 protected:
  /// The files read in an epoch whose sample order is `order` (this rank's share).
  virtual std::vector<uint64_t> epoch_files(const std::vector<uint64_t>& order) const = 0;

  SourceEnv env_;
  std::vector<uint64_t> order_;  // this rank's samples of the epoch, in sampler order
};

/// The emulated per-sample CPU work (LoaderConfig::costs: worker.loop_us) on the calling worker `w`
/// (through its lock, env.gils, when there is one), added to ws.cpu_work_ns; ends early at the
/// run's stop or, when given, at `cancel`.
void per_sample_cpu(const SourceEnv& env, uint32_t w, WorkerStats& ws, const std::atomic<bool>* cancel = nullptr);

}  // namespace ioprobe
