#include "checkpoint/resident_state.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "checkpoint/tensor_data.hpp"
#include "core/interrupt.hpp"

namespace ioprobe::checkpoint {

ResidentState::ResidentState(const RankState& rank, uint64_t region_cap, uint64_t seed, bool fill, bool huge_pages)
    : rank_(rank), cap_(region_cap) {
  for (const auto& r : rank_.regions) {
    Buf b;
    // The buffer starts at the region's offset modulo the page size (2 MiB on huge pages, else
    // 4 KiB), so that memory and file offsets of an uncompressed shard are congruent: O_DIRECT
    // can write straight from the state (UringFileWriter::append_stable), and each io_size
    // request at an io_size-aligned file offset starts on a huge page, as the raw baseline's
    // buffers do. Cyclic windows are whole pages, so the wrap keeps it. Measured on this
    // project's virtio VM (same request sizes in /proc/diskstats): a 4-region 1 GiB state
    // congruent only modulo 4 KiB saved at ~0.87 of a 1-region state, modulo 2 MiB at ~0.98.
    const uint64_t page = huge_pages ? kHugePageBytes : 4096;
    b.size = std::min<uint64_t>(r.bytes, std::max<uint64_t>(region_cap & ~(page - 1), page));
    const size_t skew = static_cast<size_t>(r.offset % page);
    b.mem = alloc_io_memory(b.size + skew, huge_pages);
    b.skew = skew;
    uint8_t* p = b.mem.get() + skew;
    if (fill) {
      // Blocks of 16 MiB, each seeded by its index, generated on all allowed CPUs.
      constexpr uint64_t kBlock = 16u << 20;
      const uint64_t blocks = (b.size + kBlock - 1) / kBlock;
      std::atomic<uint64_t> next{0};
      auto work = [&] {
        for (uint64_t i; !interrupted() && (i = next.fetch_add(1)) < blocks;)  // Ctrl-C: stop generating
          generate_tensor_bytes(r.kind, (seed * 16 + static_cast<uint64_t>(r.kind)) * 1000003 + i, p + i * kBlock,
                                std::min(kBlock, b.size - i * kBlock));
      };
      unsigned n = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), static_cast<unsigned>(blocks)));
      std::vector<std::jthread> th;
      for (unsigned t = 1; t < n; ++t) th.emplace_back(work);
      work();
      for (auto& t : th) t.join();
    } else {
      std::memset(p, 0, b.size);  // fault the pages in before any timing
    }
    bufs_.push_back(std::move(b));
  }
}

Span ResidentState::span(uint64_t offset, size_t max_len) const {
  // Regions are few (<= 4): a linear search is the simplest correct lookup.
  for (size_t i = 0; i < rank_.regions.size(); ++i) {
    const Region& r = rank_.regions[i];
    if (offset >= r.offset + r.bytes) continue;
    uint64_t in_region = offset - r.offset;
    uint64_t pos = in_region % bufs_[i].size;
    uint64_t n = std::min<uint64_t>({max_len, bufs_[i].size - pos, r.bytes - in_region});
    return Span{bufs_[i].data() + pos, static_cast<size_t>(n), element_bytes(r.kind)};
  }
  return Span{nullptr, 0, 1};
}

void ResidentState::copy_out(uint64_t offset, size_t len, uint8_t* dst) const {
  while (len > 0) {
    Span s = span(offset, len);
    if (s.len == 0) return;
    std::memcpy(dst, s.data, s.len);
    dst += s.len;
    offset += s.len;
    len -= s.len;
  }
}

void ResidentState::copy_from(const ResidentState& other) {
  for (size_t i = 0; i < bufs_.size() && i < other.bufs_.size(); ++i)
    std::memcpy(bufs_[i].data(), other.bufs_[i].data(), std::min(bufs_[i].size, other.bufs_[i].size));
}

void ResidentState::overwrite(const std::function<void(uint8_t*, size_t, size_t)>& fill) {
  for (size_t i = 0; i < bufs_.size(); ++i) fill(bufs_[i].data(), bufs_[i].size, i);
}

uint64_t ResidentState::resident_bytes() const {
  uint64_t s = 0;
  for (const auto& b : bufs_) s += b.size;
  return s;
}

uint64_t ResidentState::huge_page_bytes() const {
  uint64_t s = 0;
  for (const auto& b : bufs_) s += std::min(ioprobe::huge_page_bytes(b.data(), b.size), b.size);
  return s;
}

bool ResidentState::cyclic() const { return resident_bytes() < rank_.bytes; }

}  // namespace ioprobe::checkpoint
