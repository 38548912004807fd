#include "loader/sampler.hpp"

#include <numeric>
#include <utility>

#include "core/rng.hpp"

namespace ioprobe {

std::vector<uint64_t> sample_order(uint64_t n, bool shuffle, uint64_t seed, uint32_t epoch) {
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (!shuffle || n < 2) return order;
  Xoshiro256 rng(seed * 0x9E3779B97F4A7C15ULL + epoch + 1);  // core/rng.hpp: the project's one generator
  // Fisher-Yates with our own bounded draw: std::uniform_int_distribution differs between
  // standard libraries, and the order must be reproducible from (seed, epoch).
  for (uint64_t i = n - 1; i > 0; --i) {
    unsigned __int128 m = static_cast<unsigned __int128>(rng.next()) * (i + 1);
    uint64_t j = static_cast<uint64_t>(m >> 64);
    std::swap(order[i], order[j]);
  }
  return order;
}

std::vector<uint64_t> shard_for_rank(const std::vector<uint64_t>& order, uint32_t rank, uint32_t world) {
  std::vector<uint64_t> out;
  if (world == 0) return out;
  out.reserve(order.size() / world + 1);
  for (uint64_t i = rank; i < order.size(); i += world) out.push_back(order[i]);
  return out;
}

std::vector<BatchRange> cut_batches(uint64_t n, uint32_t batch_size, bool drop_last) {
  std::vector<BatchRange> out;
  if (batch_size == 0) return out;
  for (uint64_t b = 0; b < n; b += batch_size) {
    uint64_t e = std::min<uint64_t>(n, b + batch_size);
    if (drop_last && e - b < batch_size) break;
    out.push_back({b, e});
  }
  return out;
}

}  // namespace ioprobe
