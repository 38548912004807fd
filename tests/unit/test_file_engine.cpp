// The file life cycle in the engine interface (engine/file_engine.hpp): every reader engine opens,
// closes and invalidates its files, and the checkpoint's writer is a FileWriter made by name.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/engine_choice.hpp"
#include "engine/file_engine.hpp"
#include "engine/file_reader.hpp"
#include "engine/page_cache.hpp"
#include "engine/range_reader.hpp"
#include "engine/uring_writer.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

namespace {

bool evictable(const std::string& dir) {
  struct statfs s {};
  if (statfs(dir.c_str(), &s) != 0) return false;
  return s.f_type != TMPFS_MAGIC && s.f_type != RAMFS_MAGIC;
}

double resident(const std::string& path) {
  Residency r;
  REQUIRE(file_residency(path, r) == 0);
  return r.fraction();
}

}  // namespace

TEST_CASE("file engines: the writer writes, every reader engine opens, reads, invalidates and closes", "[engine]") {
  if (!probe_io_uring().available) {
    WARN("io_uring is not usable here; the writer engine needs it: skipping");
    return;
  }
  TempDir dir("file-engine");
  const std::string path = dir.path + "/f.bin";
  const size_t n = (1u << 20) + 100;  // an unaligned tail
  std::vector<uint8_t> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);

  UringWriterOptions wo;
  wo.io_size = 256 << 10;
  std::unique_ptr<FileWriter> w = make_file_writer("io_uring", path, wo);
  CHECK(std::string(w->engine_name()) == "io_uring");
  REQUIRE(w->append(data.data(), n) == 0);
  REQUIRE(w->finish() == 0);
  REQUIRE(w->fsync() == 0);
  CHECK(w->stats().bytes_written == n);
  CHECK_THROWS_AS(make_file_writer("io_uring", path, wo), IoError);  // never overwrites
  CHECK_THROWS_AS(make_file_writer("gds", dir.path + "/g.bin", wo), UsageError);
  const bool evict = evictable(dir.path);
  if (evict) {
    REQUIRE(w->invalidate() == 0);
    CHECK(resident(path) < 0.01);
  }
  w.reset();

  for (const char* engine : {"psync", "io_uring"}) {
    CAPTURE(engine);
    std::unique_ptr<FileReader> fr = make_file_reader(engine, FileReaderOptions{});
    FileReadResult whole = fr->read_file(AT_FDCWD, path.c_str(), -1);
    CHECK(whole.err == 0);
    CHECK(whole.bytes == static_cast<int64_t>(n));

    std::unique_ptr<RangeReader> rr = make_range_reader(engine, false);
    for (FileEngine* fe : {static_cast<FileEngine*>(fr.get()), static_cast<FileEngine*>(rr.get())}) {
      CHECK(std::string(fe->engine_name()) == engine);
      int64_t ns = -1;
      const int fd = fe->open(AT_FDCWD, path.c_str(), &ns);
      REQUIRE(fd >= 0);
      CHECK(ns >= 0);
      std::vector<uint8_t> back(4096);
      REQUIRE(pread(fd, back.data(), back.size(), 4096) == 4096);
      CHECK(std::equal(back.begin(), back.end(), data.begin() + 4096));
      if (evict) {
        CHECK(resident(path) > 0);
        REQUIRE(fe->invalidate(fd) == 0);
        CHECK(resident(path) < 0.01);
      }
      CHECK(fe->close(fd, &ns) == 0);
      CHECK(fe->close(fd, &ns) == -EBADF);
      CHECK(fe->open(AT_FDCWD, (dir.path + "/missing").c_str(), &ns) == -ENOENT);
    }
    int64_t ns = 0;
    const int fd = rr->open(AT_FDCWD, path.c_str(), &ns);
    REQUIRE(fd >= 0);
    RangeReadResult r = rr->read(fd, n - 50, 100);
    CHECK(r.err == 0);
    CHECK(r.bytes == 50);
    CHECK(rr->close(fd, &ns) == 0);
  }
}
