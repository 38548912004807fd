#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "core/io_memory.hpp"

using namespace ioprobe;

namespace {
// The bracketed word of a THP sysfs setting ("always [madvise] never" -> "madvise"), "" if absent.
std::string thp_setting(const char* file) {
  std::ifstream f(std::string("/sys/kernel/mm/transparent_hugepage/") + file);
  std::string s;
  std::getline(f, s);
  auto a = s.find('['), b = s.find(']');
  return a == std::string::npos || b == std::string::npos ? "" : s.substr(a + 1, b - a - 1);
}
}  // namespace

TEST_CASE("I/O memory: 2 MiB-aligned when huge, 4 KiB otherwise, and huge pages measured from smaps", "[io_memory]") {
  constexpr size_t kLen = 8u << 20;
  IoMemory huge = alloc_io_memory(kLen, true);
  IoMemory small = alloc_io_memory(kLen, false);
  REQUIRE(reinterpret_cast<uintptr_t>(huge.get()) % kHugePageBytes == 0);
  REQUIRE(reinterpret_cast<uintptr_t>(small.get()) % 4096 == 0);
  std::memset(huge.get(), 1, kLen);  // fault in: huge pages are allocated at the first touch
  std::memset(small.get(), 1, kLen);
  const uint64_t h = huge_page_bytes(huge.get(), kLen), s = huge_page_bytes(small.get(), kLen);
  CHECK(h <= kLen);
  CHECK(h % kHugePageBytes == 0);
  const std::string enabled = thp_setting("enabled"), defrag = thp_setting("defrag");
  // Advised memory gets huge pages at fault time where THP is on for it and the fault may
  // compact memory to find one (defrag always / madvise / defer+madvise).
  if ((enabled == "always" || enabled == "madvise") && defrag != "never" && defrag != "defer") CHECK(h > 0);
  else
    WARN("transparent huge pages enabled=" << enabled << " defrag=" << defrag << ": advised memory need not get them");
  // Memory not advised gets no huge pages where THP is madvise-only.
  if (enabled == "madvise" || enabled == "never") CHECK(s == 0);
  // An empty range measures nothing.
  CHECK(huge_page_bytes(huge.get(), 0) == 0);
}
