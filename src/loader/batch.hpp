// The values that flow through a rank's loader: a BatchTask (what a worker is asked to build)
// and a Batch (what it built). A Batch goes from the worker (SampleSource::fetch) through the
// in-order queue (prefetch_queue.hpp), the pin thread (pin_stage.hpp) and the copy to the GPU
// (h2d_stage.hpp) to the training step (consumer.hpp), moved from stage to stage, never copied.
// It carries no sample contents: workers read into their engine's buffer and the loader measures
// sizes and times only, so the pin and H2D stages copy a stand-in of `bytes`. A consumer that
// needs the real contents would add them here, filled by the sources' fetch.
#pragma once

#include <cstdint>
#include <vector>

namespace ioprobe {

/// One batch of work: its sequence number within the epoch and its range of sample positions.
struct BatchTask {
  uint64_t seq = 0;
  uint64_t begin = 0;  // first position in the rank's epoch order (sharded: in the worker's record stream)
  uint64_t end = 0;    // one past the last
  int worker = -1;     // >= 0: this worker builds the batch (IterableDataset); -1: next in the round-robin
};

/// One batch a worker built and the training loop receives.
struct Batch {
  uint64_t seq = 0;        // position in the epoch's delivery order (set by the queue)
  int worker = -1;         // the worker that built it (set by the queue)
  uint64_t samples = 0;    // samples read successfully
  uint64_t bytes = 0;      // bytes delivered: each sample's bytes (files, token), or the shard bytes read while
                           // building the batch (sharded: over an epoch, the shards' sizes)
  uint64_t errors = 0;     // samples that failed
  bool cancelled = false;  // the batch was abandoned because the run stopped
  /// The samples delivered, in order: the file's index in the FileIndex (files datasets), or the
  /// global record index file x records_per_file + record (sharded and token datasets). One
  /// entry per successful sample (size() == samples).
  std::vector<uint64_t> sample_ids;
  uint32_t epoch = 0;         // the epoch it belongs to (set when it is delivered)
  int64_t delivered_ns = -1;  // when it was handed to the training step, ns since the run started (the DDP
                              // barrier included); -1 until then
};

}  // namespace ioprobe
