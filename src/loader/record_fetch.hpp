// A worker's fetch of one batch when samples are records inside larger files:
//  - ShardStream (sharded datasets, IterableDataset): the worker reads its shards one after the
//    other from start to end in reads of `read_size` bytes, one read in flight, and yields each
//    record once all its bytes have been read. Bytes of a read count toward the batch being built
//    when the read was made, so over an epoch the bytes equal the shards' sizes.
//  - TokenFetcher (token datasets, map-style): one read per sample, at the sample's offset in its
//    token file (dataset/record_layout.hpp locate_fixed), files held open across samples (as a
//    Megatron worker keeps its np.memmap of the .bin), no whole-file reads.
// Per-read latency goes to WorkerStats::file_latency, open + close per file to open_latency.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error_record.hpp"
#include "dataset/file_index.hpp"
#include "dataset/record_layout.hpp"
#include "engine/range_reader.hpp"
#include "loader/batch.hpp"
#include "loader/loader_result.hpp"

namespace ioprobe {

/// What a record fetch needs from its rank.
struct RecordFetchEnv {
  int dirfd = -1;  // directory the index's paths are relative to
  const FileIndex* index = nullptr;
  const RecordLayout* layout = nullptr;
  uint64_t read_size = 1 << 20;                      // shard reads, bytes (a multiple of 4 KiB)
  std::function<void(const ErrorRecord&)> on_error;  // a failed read, for LoaderResult::error_samples
  std::function<void()> per_sample;                  // the emulated CPU work after each sample
};

/// One worker's sequential reader of its shards. Not thread-safe: one per worker.
class ShardStream {
 public:
  ~ShardStream();
  /// Starts an epoch with the worker's shards in reading order (loader/shard_plan.hpp).
  void reset(std::vector<uint64_t> shards);
  /// Yields records [begin, end) of the worker's stream; `begin` must be where the previous
  /// batch ended. A failed open or read turns the shard's remaining records into errors (so
  /// samples + errors = records), then the stream moves to the next shard. Never throws.
  Batch fetch(RangeReader& reader, const RecordFetchEnv& env, WorkerStats& ws, uint64_t begin, uint64_t end,
              const std::atomic<bool>& cancel);

 private:
  void close_shard(RangeReader& reader, WorkerStats& ws);
  void fail_shard(RangeReader& reader, const RecordFetchEnv& env, const char* op, int err);

  std::vector<uint64_t> shards_;
  size_t shard_pos_ = 0;     // index in shards_ of the shard being read
  uint64_t record_ = 0;      // next record of that shard to yield
  uint64_t record_end_ = 0;  // byte offset in the shard where that record ends
  uint64_t read_off_ = 0;    // bytes of the shard read so far
  uint64_t next_pos_ = 0;    // position of the next record in the worker's stream
  int fd_ = -1;
  bool failed_ = false;  // the current shard's open or a read failed
  int64_t open_ns_ = 0;
};

/// One worker's reads of token samples. Not thread-safe: one per worker.
class TokenFetcher {
 public:
  ~TokenFetcher();
  /// Reads the samples order[begin..end) (global sample indices). Never throws.
  Batch fetch(RangeReader& reader, const RecordFetchEnv& env, WorkerStats& ws, const std::vector<uint64_t>& order,
              uint64_t begin, uint64_t end, const std::atomic<bool>& cancel);

 private:
  std::vector<int> fds_;  // per token file, -1 until opened
};

}  // namespace ioprobe
