// The sharded dataset kind: records inside shards, read as an IterableDataset (webdataset's
// split_by_node then split_by_worker): each worker streams its own shards of the epoch
// (shard_plan.hpp shards_for_worker) from start to end in reads of cfg.read_size bytes
// (record_fetch.hpp ShardStream) and builds whole batches from them; batches are delivered
// round-robin over the workers that still have records (iterable_batch_order).
#pragma once

#include <vector>

#include "loader/record_fetch.hpp"
#include "loader/sample_source.hpp"
#include "loader/worker_readers.hpp"

namespace ioprobe {

class ShardSource final : public SampleSource {
 public:
  explicit ShardSource(const SourceEnv& env);
  uint64_t index_space() const override { return env_.layout->files(); }
  EpochPlan plan_epoch(uint32_t epoch) override;
  void init_worker(uint32_t w) override;
  /// Batch::bytes: the shard bytes read while the batch was built (over an epoch, the shards'
  /// sizes). A failed open or read turns the shard's remaining records into errors.
  Batch fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) override;
  bool bytes_counted_as_read() const override { return false; }

 private:
  SourceEnv env_;
  WorkerRangeReaders readers_;        // after env_: it points at env_
  std::vector<ShardStream> streams_;  // one per worker
};

}  // namespace ioprobe
