#include "checkpoint/chunker.hpp"

#include <algorithm>

namespace ioprobe::checkpoint {

std::vector<Chunk> make_chunks(uint64_t bytes, uint64_t chunk_size) {
  std::vector<Chunk> out;
  if (chunk_size == 0) chunk_size = 1;
  for (uint64_t off = 0; off < bytes; off += chunk_size) out.push_back(Chunk{off, std::min(chunk_size, bytes - off)});
  return out;
}

void for_each_piece(const RankState& rank, uint64_t offset, uint64_t len, size_t max_piece,
                    const std::function<void(uint64_t, size_t, uint32_t)>& fn) {
  const uint64_t end = offset + len;
  for (const Region& r : rank.regions) {
    uint64_t lo = std::max(offset, r.offset), hi = std::min(end, r.offset + r.bytes);
    for (uint64_t p = lo; p < hi;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(max_piece, hi - p));
      fn(p, n, element_bytes(r.kind));
      p += n;
    }
  }
}

}  // namespace ioprobe::checkpoint
