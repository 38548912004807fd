#include "core/io_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace ioprobe {

void IoMemoryFree::operator()(void* p) const { std::free(p); }

IoMemory alloc_io_memory(size_t bytes, bool huge) {
  bytes = std::max<size_t>(bytes, 1);
  const bool advise = huge && bytes >= kHugePageBytes;
  void* p = nullptr;
  if (posix_memalign(&p, advise ? kHugePageBytes : 4096, bytes) != 0) throw std::bad_alloc();
  if (advise) madvise(p, bytes, MADV_HUGEPAGE);  // advice only; failure (e.g. THP "never") is harmless
  return IoMemory(static_cast<uint8_t*>(p));
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
