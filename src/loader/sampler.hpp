// The samplers of PyTorch's map-style DataLoader, run in the main thread
// (PyTorch's torch/utils/data/sampler.py): RandomSampler / SequentialSampler, DistributedSampler's
// per-rank share, and BatchSampler's cutting into batches.
#pragma once

#include <cstdint>
#include <vector>

namespace ioprobe {

/// Sample indices of one epoch: with `shuffle`, a permutation of [0, n) drawn fresh for each
/// epoch from (seed, epoch) with a Fisher-Yates shuffle; otherwise 0, 1, ..., n-1.
std::vector<uint64_t> sample_order(uint64_t n, bool shuffle, uint64_t seed, uint32_t epoch);

/// DistributedSampler's share of `rank` among `world` ranks: order[rank], order[rank+world], ...
/// Unlike PyTorch, the shares are not padded to equal length (padding would re-read up to
/// world-1 files), so every file is read exactly once per epoch across the ranks.
std::vector<uint64_t> shard_for_rank(const std::vector<uint64_t>& order, uint32_t rank, uint32_t world);

/// A batch as a half-open range [begin, end) of positions in the epoch's order.
struct BatchRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// BatchSampler: consecutive batches of `batch_size`; the last partial batch is kept unless
/// `drop_last`. batch_size must be >= 1.
std::vector<BatchRange> cut_batches(uint64_t n, uint32_t batch_size, bool drop_last);

}  // namespace ioprobe
