// The training state held in memory before a save, as a framework holds it: one buffer per
// region of a rank's shard, filled once (untimed) by the tensor generator.
//
// When the state is larger than the memory budget, each region keeps a resident window of
// `region_cap` bytes that is read cyclically (the logical bytes still differ chunk by chunk only
// within a window; every chunk is a separate zstd frame, and windows are >= 64 MiB, above
// zstd's default match window, so compression sees no repetition). cyclic() says so and the
// report states it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "checkpoint/state_spec.hpp"
#include "core/io_memory.hpp"

namespace ioprobe::checkpoint {

/// A contiguous run of resident bytes: pointer, length, and element size of its tensor kind.
struct Span {
  const uint8_t* data;
  size_t len;
  uint32_t elem_bytes;
};

class ResidentState {
 public:
  /// Allocates (and, when `fill`, generates) each region of `rank`, at most `region_cap` bytes
  /// per region, on transparent huge pages when `huge_pages` (core/io_memory.hpp says why).
  /// Throws std::bad_alloc when memory is short.
  ResidentState(const RankState& rank, uint64_t region_cap, uint64_t seed, bool fill = true, bool huge_pages = true);

  /// The longest contiguous run starting at logical `offset` (< bytes()), at most `max_len`,
  /// never crossing a region boundary.
  Span span(uint64_t offset, size_t max_len) const;
  /// Copies logical bytes [offset, offset+len) into dst.
  void copy_out(uint64_t offset, size_t len, uint8_t* dst) const;
  /// Copies all resident buffers from `other` (same shape): the staging copy of async saves.
  void copy_from(const ResidentState& other);
  /// Overwrites the resident bytes: `fill(dst, len, region_index)` once per region. For content
  /// other than tensor data (construct with fill = false first).
  void overwrite(const std::function<void(uint8_t* dst, size_t len, size_t region)>& fill);

  uint64_t bytes() const { return rank_.bytes; }
  uint64_t region_cap() const { return cap_; }
  uint64_t resident_bytes() const;
  /// Resident bytes the kernel backs with transparent huge pages now (measured, /proc/self/smaps).
  uint64_t huge_page_bytes() const;
  bool cyclic() const;
  const RankState& rank() const { return rank_; }

 private:
  struct Buf {
    IoMemory mem;  // 4 KiB-aligned (2 MiB on huge pages)
    uint64_t size = 0;
    size_t skew = 0;  // the region's first byte is at mem + skew (region offset mod the page size: 2 MiB on huge pages,
                      // else 4 KiB)
    uint8_t* data() const { return mem.get() + skew; }
  };
  RankState rank_;
  uint64_t cap_;
  std::vector<Buf> bufs_;  // one per region
};

}  // namespace ioprobe::checkpoint
