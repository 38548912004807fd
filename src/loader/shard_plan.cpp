#include "loader/shard_plan.hpp"

#include <algorithm>

#include "loader/sampler.hpp"

namespace ioprobe {

std::vector<uint64_t> shards_for_worker(uint64_t n_shards, bool shuffle, uint64_t seed, uint32_t epoch, uint32_t rank,
                                        uint32_t world, uint32_t worker, uint32_t num_workers) {
  const std::vector<uint64_t> order = sample_order(n_shards, shuffle, seed, epoch);
  std::vector<uint64_t> node_share = shard_for_rank(order, rank, std::max(1u, world));  // split_by_node
  return shard_for_rank(node_share, worker, std::max(1u, num_workers));                 // split_by_worker
}

std::vector<WorkerBatch> iterable_batch_order(const std::vector<uint64_t>& records_per_worker, uint32_t batch_size,
                                              bool drop_last) {
  std::vector<std::vector<BatchRange>> per_worker;
  size_t total = 0;
  for (uint64_t n : records_per_worker) {
    per_worker.push_back(cut_batches(n, batch_size, drop_last));
    total += per_worker.back().size();
  }
  std::vector<WorkerBatch> out;
  out.reserve(total);
  std::vector<size_t> next(per_worker.size(), 0);
  while (out.size() < total)
    for (size_t w = 0; w < per_worker.size(); ++w)
      if (next[w] < per_worker[w].size()) {
        const BatchRange& b = per_worker[w][next[w]++];
        out.push_back({static_cast<uint32_t>(w), b.begin, b.end});
      }
  return out;
}

}  // namespace ioprobe
