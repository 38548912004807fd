// webdataset's access order over tar shards (webdataset 1.0.2, PyPI; webdataset/compat.py
// WebDataset, shardlists.py split_by_node / split_by_worker, filters.py _shuffle and pick), for
//   WebDataset(urls, shardshuffle=K, seed=S, nodesplitter=split_by_node).shuffle(N, initial=I, seed=S)
// read by a PyTorch DataLoader with num_workers workers on each of world ranks:
//   1. the shard list in the order given (SimpleShardList, no seed), split by node
//      (islice(rank, None, world)), then by worker (islice(worker, None, num_workers));
//   2. each worker's shards through _shuffle(K, initial=min(100, K)) with random.Random(S)
//      (shardshuffle; 0 or False keeps the order);
//   3. each shard streamed front to back, its samples in file order, through _shuffle(N, I) with
//      its own random.Random(S): the buffer is filled to I samples (two pulled per yield while
//      it is under N) before the first sample is yielded, then each yield takes a random slot.
// The reads stay each shard front to back; the buffer changes which samples a batch holds and
// how many samples a worker has read when it yields each one (WdsShuffle::pulled).
// Each _shuffle makes a fresh random.Random(S) each time the pipeline is iterated, so with a
// fixed seed every epoch repeats the same order, as webdataset 1.0.2 does.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ioprobe {

/// Python's random.Random(seed) for an integer seed (CPython 3.11 Modules/_randommodule.c
/// random_seed + init_by_array, Lib/random.py _randbelow_with_getrandbits): the same 32-bit
/// words and draws as Python. std::mt19937 seeded with Python's init_by_array state gives
/// Python's genrand_uint32 stream (tests/unit/test_wds_order.cpp checks it against Python's).
class PyRandom {
 public:
  explicit PyRandom(uint64_t seed);
  /// random.getrandbits(k), 1 <= k <= 64: one 32-bit word per 32 bits, least significant word
  /// first, each word's surplus low bits dropped.
  uint64_t getrandbits(unsigned k);
  /// random.randrange(n) (= randint(0, n - 1)), n >= 1: getrandbits(n.bit_length()) drawn
  /// until below n. Draws even for n == 1, as Python does.
  uint64_t randbelow(uint64_t n);

 private:
  std::mt19937 mt_;
};

/// What _shuffle yields for an input of n items 0..n-1.
struct WdsShuffle {
  std::vector<uint64_t> order;   // the input positions in the order they are yielded
  std::vector<uint64_t> pulled;  // pulled[i]: input items read when order[i] was yielded (non-decreasing)
};

/// webdataset's filters._shuffle(range(n), bufsize, initial, seed=seed). bufsize 0 yields the
/// input in order (as shardshuffle=False does); initial is capped at bufsize as webdataset does.
WdsShuffle wds_shuffle(uint64_t n, uint64_t bufsize, uint64_t initial, uint64_t seed);

/// Shard indices worker `worker` of rank `rank` reads, in reading order: split_by_node, then
/// split_by_worker of 0..n_shards-1, then the shardshuffle buffer of `shard_shuffle` shards
/// (0: no shuffle) seeded with `seed`. world, num_workers >= 1.
std::vector<uint64_t> wds_shards_for_worker(uint64_t n_shards, uint64_t shard_shuffle, uint64_t seed, uint32_t rank,
                                            uint32_t world, uint32_t worker, uint32_t num_workers);

/// webdataset's default initial fill of a shuffle buffer (filters._shuffle initial=100), samples.
constexpr uint64_t kWdsDefaultInitial = 100;
/// The shardshuffle buffer webdataset uses for shardshuffle=True (compat.py WebDataset), shards.
constexpr uint64_t kWdsDefaultShardShuffle = 100;

}  // namespace ioprobe
