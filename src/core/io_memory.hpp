// Memory for I/O buffers and state that is written with O_DIRECT.
//
// Why huge pages: a direct write is sent to the device straight from user pages, and the block
// layer can put at most max_segments (e.g. 254 on virtio-blk) physically contiguous runs in one
// request. Memory faulted in 4 KiB pages by several threads is scattered, so a 16 MiB write is
// cut into ~1 MiB requests; 2 MiB transparent huge pages keep requests at the device's
// max_sectors_kb. Measured on this project's 2-vCPU virtio VM (tools/bench-checkpoint, 1 GiB
// uncompressed save): 0.5-2.6 MiB requests and ~750 MB/s from scattered 4 KiB pages against
// 4 MiB requests and ~1,100 MB/s from huge pages (docs/checkpoint.md; docs/benchmarks/README.md lists it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ioprobe {

/// Size of a transparent huge page on x86-64 and arm64 with 4 KiB base pages (bytes).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

/// Frees memory from alloc_io_memory: munmap of its own mapping (`mapped` bytes) or free().
struct IoMemoryFree {
  size_t mapped = 0;
  void operator()(void* p) const;
};
using IoMemory = std::unique_ptr<uint8_t[], IoMemoryFree>;

/// Allocates `bytes` (at least 1) aligned to 4 KiB, and, when `huge` and `bytes` >= 2 MiB, as a
/// mapping of its own aligned to 2 MiB and advised as transparent huge pages (madvise
/// MADV_HUGEPAGE; advice only: the kernel may still use 4 KiB pages, see huge_page_bytes). A
/// mapping of its own keeps the advice off memory malloc hands out later. The memory is not
/// touched (huge mappings read as zeros). Throws std::bad_alloc when memory is short.
IoMemory alloc_io_memory(size_t bytes, bool huge = true);

/// Bytes of [p, p + len) that the kernel backs with transparent huge pages now, read from
/// /proc/self/smaps (AnonHugePages of the mappings that overlap the range, each capped at the
/// overlap). Returns 0 where smaps cannot be read.
uint64_t huge_page_bytes(const void* p, size_t len);

}  // namespace ioprobe
