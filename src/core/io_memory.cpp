#include "core/io_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace ioprobe {

void IoMemoryFree::operator()(void* p) const {
  if (mapped) ::munmap(p, mapped);
  else std::free(p);
}

IoMemory alloc_io_memory(size_t bytes, bool huge) {
  bytes = std::max<size_t>(bytes, 1);
  if (!huge || bytes < kHugePageBytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes) != 0) throw std::bad_alloc();
    return IoMemory(static_cast<uint8_t*>(p));
  }
  // Map one huge page more than needed, then unmap the unaligned head and the rest of the tail.
  const size_t len = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* m = ::mmap(nullptr, len + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t aligned = (base + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned > base) ::munmap(m, aligned - base);
  const size_t tail = base + len + kHugePageBytes - (aligned + len);
  // The addresses from m's own pointer (not cast back from integers).
  uint8_t* const p = static_cast<uint8_t*>(m) + (aligned - base);
  if (tail) ::munmap(p + len, tail);
  ::madvise(p, len, MADV_HUGEPAGE);  // advice only; failure (e.g. THP "never") is harmless
  return IoMemory(p, IoMemoryFree{len});
}

uint64_t huge_page_bytes(const void* p, size_t len) {
  FILE* f = std::fopen("/proc/self/smaps", "re");
  if (!f) return 0;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + len;
  uint64_t total = 0, overlap = 0;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    uintptr_t a = 0, b = 0;
    unsigned long long kb = 0;
    // A mapping's header is "start-end perms ..."; its fields follow as "Name:  value kB" (no
    // field name is hex digits followed by '-', so only headers scan two numbers).
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2) {
      overlap = (a < hi && b > lo) ? std::min(b, hi) - std::max(a, lo) : 0;
    } else if (overlap && std::sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
      total += std::min<uint64_t>(kb * 1024, overlap);
    }
  }
  std::fclose(f);
  return total;
}

}  // namespace ioprobe
