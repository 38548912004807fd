#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "dataset/file_index.hpp"
#include "dataset/size_sample.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

namespace {
void make_file(const std::string& path, off_t size) {
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, size) == 0);  // sparse: no data written
  close(fd);
}
}  // namespace

TEST_CASE("sample_sizes: a walked dataset (sizes unknown) gets its real size and largest file", "[dataset]") {
  TempDir d("sizes");
  make_file(d.path + "/a", 4096);
  make_file(d.path + "/huge", off_t{64} << 30);  // one 64 GiB sample
  FileIndex idx(d.path);
  idx.add("a", FileIndex::kUnknownSize);
  idx.add("huge", FileIndex::kUnknownSize);
  CHECK(idx.total_known_bytes() == 0);  // known sizes alone would show 0 B
  SizeSample s = sample_sizes(idx);
  CHECK(s.exact);
  CHECK(s.total_bytes() == (uint64_t{64} << 30) + 4096);
  CHECK(s.largest == uint64_t{64} << 30);
  CHECK(std::string(idx.path(s.largest_index)) == "huge");
}

TEST_CASE("sample_sizes: beyond max_files an estimate from an even sample", "[dataset]") {
  TempDir d("sizes");
  FileIndex idx(d.path);
  for (int i = 0; i < 10; ++i) {
    make_file(d.path + "/f" + std::to_string(i), 1000);
    idx.add("f" + std::to_string(i), FileIndex::kUnknownSize);
  }
  SizeSample s = sample_sizes(idx, 5);
  CHECK_FALSE(s.exact);
  CHECK(s.sampled == 5);
  CHECK(s.total_bytes() == 10000);
  // Known sizes are used as they are, without a stat.
  FileIndex known;
  known.add("/nonexistent/x", 7);
  CHECK(sample_sizes(known).total_bytes() == 7);
}
