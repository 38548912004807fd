// The file life cycle in the engine interface (engine/file_engine.hpp): every reader engine opens,
// closes and invalidates its files, and the checkpoint's writer is a FileWriter made by name.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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
  std::unique_ptr<FileWriter> w = make_file_writer(EngineKind::kIoUring, path, wo);
  CHECK(std::string(w->engine_name()) == "io_uring");
  REQUIRE(w->append(data.data(), n) == 0);
  REQUIRE(w->finish() == 0);
  REQUIRE(w->fsync() == 0);
  CHECK(w->stats().bytes_written == n);
  CHECK_THROWS_AS(make_file_writer(EngineKind::kIoUring, path, wo), IoError);  // never overwrites
  CHECK_THROWS_AS(make_file_writer(EngineKind::kPsync, dir.path + "/g.bin", wo), UsageError);
  const bool evict = evictable(dir.path);
  if (evict) {
    REQUIRE(w->invalidate() == 0);
    CHECK(resident(path) < 0.01);
  }
  w.reset();

  for (const char* engine : {"psync", "io_uring"}) {
    CAPTURE(engine);
    std::unique_ptr<FileReader> fr = make_file_reader(engine_kind_from_string(engine).value(), FileReaderOptions{});
    FileReadResult whole = fr->read_file(AT_FDCWD, path.c_str(), -1);
    CHECK(whole.err == 0);
    CHECK(whole.bytes == static_cast<int64_t>(n));

    std::unique_ptr<RangeReader> rr = make_range_reader(engine_kind_from_string(engine).value(), false);
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

TEST_CASE("ByteTally: the shared counter moves per MiB and at flush, not per small read", "[engine]") {
  std::atomic<uint64_t> shared{0};
  {
    ByteTally t(&shared);
    for (int i = 0; i < 255; ++i) t.add(4096);  // 1 MiB less one 4 KiB file
    CHECK(shared.load() == 0);
    CHECK(t.pending() == 255 * 4096);
    t.add(4096);  // reaches 1 MiB: passed on
    CHECK(shared.load() == ByteTally::kStepBytes);
    CHECK(t.pending() == 0);
    t.add(100);
    t.flush();
    CHECK(shared.load() == ByteTally::kStepBytes + 100);
    t.add(7);
  }
  CHECK(shared.load() == ByteTally::kStepBytes + 107);  // destroyed: flushed
  ByteTally none;                                       // no shared counter: counts nothing, never fails
  none.add(ByteTally::kStepBytes * 3);
  none.flush();
  CHECK(none.pending() == 0);
}

TEST_CASE("file readers count a large file's requests into the tally as they complete", "[engine]") {
  TempDir dir("file-tally");
  const std::string path = dir.path + "/f.bin";
  const uint64_t n = 3 * ByteTally::kStepBytes + 5;  // three 1 MiB requests and a 5-byte one
  {
    std::vector<char> data(n, 'x');
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, data.data(), n) == static_cast<ssize_t>(n));
    ::close(fd);
  }
  for (const char* engine : {"psync", "io_uring"}) {
    CAPTURE(engine);
    if (std::string(engine) == "io_uring" && !probe_io_uring().available) {
      WARN("io_uring is not usable here: its reader is not checked");
      continue;
    }
    FileReaderOptions o;
    o.chunk_bytes = ByteTally::kStepBytes;
    std::unique_ptr<FileReader> fr = make_file_reader(engine_kind_from_string(engine).value(), o);
    std::atomic<uint64_t> shared{0};
    ByteTally tally(&shared);
    ReadControl ctl;
    ctl.bytes_read = &tally;
    const FileReadResult r = fr->read_file(AT_FDCWD, path.c_str(), static_cast<int64_t>(n), ctl);
    CHECK(r.err == 0);
    CHECK(r.bytes == static_cast<int64_t>(n));
    CHECK(shared.load() == 3 * ByteTally::kStepBytes);  // each full request passed on as it completed
    CHECK(tally.pending() == 5);                        // the tail waits for the batch's flush
    tally.flush();
    CHECK(shared.load() == n);
  }
}

TEST_CASE("file readers: a reader's buffer grows from file to file and every byte is right", "[engine]") {
  TempDir dir("file-reader-grow");
  // Sizes that grow past the first buffer (256 KiB) and past one request (chunk 1 MiB), then shrink.
  const std::vector<size_t> sizes = {4096, 300000, (3u << 20) + 5, 4096, 1u << 20};
  std::vector<std::vector<uint8_t>> contents;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<uint8_t> d(sizes[k]);
    for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<uint8_t>(i * 13 + k * 29 + 1);
    const std::string p = dir.path + "/f" + std::to_string(k);
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, d.data(), d.size()) == static_cast<ssize_t>(d.size()));
    ::close(fd);
    contents.push_back(std::move(d));
  }
  std::vector<EngineKind> engines = {EngineKind::kPsync};
  if (probe_io_uring().available) engines.push_back(EngineKind::kIoUring);
  for (const EngineKind engine : engines) {
    for (const bool hinted : {true, false}) {
      CAPTURE(to_string(engine), hinted);
      FileReaderOptions o;
      o.chunk_bytes = 1u << 20;
      std::unique_ptr<FileReader> fr = make_file_reader(engine, o);
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t k = 0; k < sizes.size(); ++k) {
          CAPTURE(pass, k);
          const std::string p = dir.path + "/f" + std::to_string(k);
          const FileReadResult r = fr->read_file(AT_FDCWD, p.c_str(), hinted ? static_cast<int64_t>(sizes[k]) : -1);
          REQUIRE(r.err == 0);
          CHECK(r.bytes == static_cast<int64_t>(sizes[k]));
          if (sizes[k] < o.chunk_bytes) {
            REQUIRE(r.data != nullptr);
            CHECK(std::equal(contents[k].begin(), contents[k].end(), r.data));
          }
        }
      }
    }
  }
}
