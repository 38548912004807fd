// How a rank's DataLoader reads a sharded dataset as an IterableDataset
// (PyTorch's torch/utils/data/dataloader.py): no sampler in the main process; each worker iterates its own
// share of the shards, builds whole batches from the records it reads, and the main process
// takes the workers' batches round-robin, in order.
//
// Dealing convention (what PyTorch users of webdataset get; webdataset/webdataset
// webdataset/shardlists.py @059bf6e): the epoch's shard list, shuffled with the same seed on
// every rank, is split by node first, split_by_node = islice(shards, rank, None, world_size),
// then by worker, split_by_worker = islice(node_share, worker, None, num_workers). So the shard at
// position p of the epoch's order goes to rank p % world and to worker (p / world) % num_workers:
// every shard is read exactly once per epoch across ranks x workers. The records inside a shard
// are read in file order; the in-memory shuffle buffer users add after that costs no I/O and is
// not emulated.
#pragma once

#include <cstdint>
#include <vector>

namespace ioprobe {

/// Shard indices that worker `worker` of rank `rank` reads in `epoch`, in reading order.
/// With `shuffle` the shard order is sample_order(n_shards, true, seed, epoch) (a fresh seeded
/// permutation per epoch, identical on all ranks), else 0..n_shards-1. world, num_workers >= 1.
std::vector<uint64_t> shards_for_worker(uint64_t n_shards, bool shuffle, uint64_t seed, uint32_t epoch, uint32_t rank,
                                        uint32_t world, uint32_t worker, uint32_t num_workers);

/// One batch a worker builds: records [begin, end) of its own record stream (the records of its
/// shards, shard after shard, counted from 0 each epoch).
struct WorkerBatch {
  uint32_t worker = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// The order in which a rank's DataLoader delivers the batches of an IterableDataset: worker w
/// cuts its `records_per_worker[w]` records into batches of `batch_size` (its last partial batch
/// kept unless `drop_last`, as each worker's fetcher does), and the main process takes batches
/// round-robin over the workers (itertools.cycle), skipping a worker once it is exhausted.
/// PyTorch also sends each exhausted worker one more task that returns StopIteration without
/// I/O; those tasks deliver nothing and are left out here.
std::vector<WorkerBatch> iterable_batch_order(const std::vector<uint64_t>& records_per_worker, uint32_t batch_size,
                                              bool drop_last);

}  // namespace ioprobe
