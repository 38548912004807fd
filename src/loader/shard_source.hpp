// The sharded dataset kind: records inside shards, read as an IterableDataset (webdataset's
// split_by_node then split_by_worker): each worker streams its own shards of the epoch
// (shard_plan.hpp shards_for_worker) from start to end in reads of cfg.read_size bytes
// (record_fetch.hpp ShardStream) and builds whole batches from them; batches are delivered
// round-robin over the workers that still have records (iterable_batch_order).
// With LoaderConfig::shuffle_buffer > 0 the order is webdataset's (wds_order.hpp): each worker's
// shards split and shuffled as WebDataset does, its samples delivered through the shuffle buffer;
// a batch reads the stream up to the last sample the buffer had pulled when the batch's last sample
// was yielded, so the first batch waits for the buffer's initial fill.
#pragma once

#include <vector>

#include "loader/record_fetch.hpp"
#include "loader/sample_source.hpp"
#include "loader/wds_order.hpp"
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
  // A worker's webdataset epoch: its shards in reading order, the buffer's delivery order over
  // the positions of its record stream, how far the stream has been read, which positions read.
  struct WdsWorker {
    std::vector<uint64_t> shards;
    WdsShuffle delivery;
    uint64_t read_pos = 0;
    std::vector<uint8_t> read_ok;  // per stream position: 1 once its record was read successfully
  };
  Batch fetch_wds(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel);

  SourceEnv env_;
  WorkerRangeReaders readers_;        // after env_: it points at env_
  std::vector<ShardStream> streams_;  // one per worker
  std::vector<WdsWorker> wds_;        // one per worker with a shuffle buffer, else empty
};

}  // namespace ioprobe
