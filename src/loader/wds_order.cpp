#include "loader/wds_order.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace ioprobe {

namespace {

constexpr size_t kMtWords = 624;

// The seed sequence that hands std::mt19937 the state CPython's init_by_array builds from `key`
// (init_genrand(19650218), the two mixing passes, mt[0] = 0x80000000). std::mt19937::seed(q)
// takes the 624 words as its state and starts with a twist, as CPython's first genrand_uint32 does.
class PySeedSeq {
 public:
  using result_type = uint32_t;
  explicit PySeedSeq(std::vector<uint32_t> key) : key_(std::move(key)) {}

  template <class It>
  void generate(It begin, It end) const {
    std::array<uint32_t, kMtWords> mt{};
    mt[0] = 19650218U;
    for (uint32_t i = 1; i < kMtWords; ++i) mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i;
    size_t i = 1;
    size_t j = 0;
    for (size_t k = std::max(kMtWords, key_.size()); k; --k) {
      mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key_[j] + static_cast<uint32_t>(j);
      if (++i >= kMtWords) {
        mt[0] = mt[kMtWords - 1];
        i = 1;
      }
      if (++j >= key_.size()) j = 0;
    }
    for (size_t k = kMtWords - 1; k; --k) {
      mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - static_cast<uint32_t>(i);
      if (++i >= kMtWords) {
        mt[0] = mt[kMtWords - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000U;
    for (size_t w = 0; begin != end; ++begin, ++w) *begin = mt[w % kMtWords];
  }

 private:
  std::vector<uint32_t> key_;
};

// CPython's key for an integer seed: abs(seed) in 32-bit words, least significant first, at
// least one word (seed 0 is the key {0}).
std::vector<uint32_t> python_key(uint64_t seed) {
  std::vector<uint32_t> key{static_cast<uint32_t>(seed)};
  if (seed >> 32) key.push_back(static_cast<uint32_t>(seed >> 32));
  return key;
}

std::mt19937 python_mt(uint64_t seed) {
  PySeedSeq seq(python_key(seed));
  return std::mt19937(seq);
}

// webdataset's pick(): a random slot's item is taken and the last item moved into its place.
uint64_t pick(std::vector<uint64_t>& buf, PyRandom& rng) {
  const uint64_t k = rng.randbelow(buf.size());
  const uint64_t item = buf[k];
  buf[k] = buf.back();
  buf.pop_back();
  return item;
}

}  // namespace

PyRandom::PyRandom(uint64_t seed) : mt_(python_mt(seed)) {}

uint64_t PyRandom::getrandbits(unsigned k) {
  k = std::clamp(k, 1u, 64u);
  uint64_t r = 0;
  for (unsigned shift = 0; shift < k; shift += 32) {
    uint64_t word = mt_();
    const unsigned left = k - shift;
    if (left < 32) word >>= 32 - left;
    r |= word << shift;
  }
  return r;
}

uint64_t PyRandom::randbelow(uint64_t n) {
  if (n == 0) return 0;  // Python refuses an empty range; callers never ask for one
  const auto k = static_cast<unsigned>(std::bit_width(n));
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

WdsShuffle wds_shuffle(uint64_t n, uint64_t bufsize, uint64_t initial, uint64_t seed) {
  WdsShuffle out;
  out.order.reserve(n);
  out.pulled.reserve(n);
  PyRandom rng(seed);
  initial = std::min(initial, bufsize);
  std::vector<uint64_t> buf;
  buf.reserve(std::min<uint64_t>(bufsize + 1, n));
  uint64_t next = 0;  // the next input item; also the count pulled so far
  while (next < n) {
    buf.push_back(next++);
    if (buf.size() < bufsize && next < n) buf.push_back(next++);
    if (buf.size() >= initial) {
      out.order.push_back(pick(buf, rng));
      out.pulled.push_back(next);
    }
  }
  while (!buf.empty()) {
    out.order.push_back(pick(buf, rng));
    out.pulled.push_back(next);
  }
  return out;
}

std::vector<uint64_t> wds_shards_for_worker(uint64_t n_shards, uint64_t shard_shuffle, uint64_t seed, uint32_t rank,
                                            uint32_t world, uint32_t worker, uint32_t num_workers) {
  world = std::max(1u, world);
  num_workers = std::max(1u, num_workers);
  std::vector<uint64_t> mine;  // islice(islice(shards, rank, None, world), worker, None, num_workers)
  for (uint64_t s = rank + static_cast<uint64_t>(worker) * world; s < n_shards;
       s += static_cast<uint64_t>(world) * num_workers)
    mine.push_back(s);
  const WdsShuffle sh = wds_shuffle(mine.size(), shard_shuffle, kWdsDefaultInitial, seed);
  std::vector<uint64_t> out;
  out.reserve(mine.size());
  for (uint64_t i : sh.order) out.push_back(mine[i]);
  return out;
}

}  // namespace ioprobe
