#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/engine.hpp"
#include "topology/target.hpp"

using namespace ioprobe;

namespace {

constexpr uint32_t kBlock = 4096;
constexpr unsigned kBlocks = 256;  // 1 MiB file

// Byte i of block b: known, distinct per block and position.
unsigned char expected_byte(uint64_t block, size_t i) {
  return static_cast<unsigned char>((block * 131 + i * 7 + (i >> 8)) & 0xff);
}

struct TempFile {
  std::string path;
  TempFile() {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/ioprobe-engine-test.XXXXXX";
    int fd = mkstemp(path.data());
    REQUIRE(fd >= 0);
    std::vector<unsigned char> buf(kBlock);
    for (uint64_t b = 0; b < kBlocks; ++b) {
      for (size_t i = 0; i < kBlock; ++i) buf[i] = expected_byte(b, i);
      REQUIRE(pwrite(fd, buf.data(), kBlock, static_cast<off_t>(b * kBlock)) == kBlock);
    }
    fsync(fd);
    close(fd);
  }
  ~TempFile() { unlink(path.c_str()); }
};

bool block_matches(const void* buf, uint64_t block) {
  auto* p = static_cast<const unsigned char*>(buf);
  for (size_t i = 0; i < kBlock; ++i)
    if (p[i] != expected_byte(block, i)) return false;
  return true;
}

// Sets up `name` on `path`; returns nullptr (after WARN) when the mechanism is unavailable here.
std::unique_ptr<Engine> open_engine(const std::string& name, const std::string& path, bool direct, EngineOptions eo,
                                    int& fd) {
  fd = open(path.c_str(), O_RDWR | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) {
    WARN("skipped: cannot open " << path << (direct ? " with O_DIRECT: " : ": ") << std::strerror(errno));
    return nullptr;
  }
  auto e = make_engine(engine_kind_from_string(name).value());
  REQUIRE(e);
  eo.direct = direct;
  try {
    e->setup(fd, eo);
  } catch (const IoError& err) {
    WARN("skipped: " << name << " unavailable: " << err.what());
    close(fd);
    return nullptr;
  }
  return e;
}

// Reads blocks `blocks` through `e` and checks each against the known pattern.
void read_back(Engine& e, const std::vector<uint64_t>& blocks) {
  std::vector<IoCompletion> done(e.depth());
  size_t next = 0, checked = 0;
  while (checked < blocks.size()) {
    for (unsigned s = 0; s < e.depth() && next < blocks.size(); ++s) {
      if (e.slot(s).in_flight) continue;
      REQUIRE(e.prep(s, IoDir::read, blocks[next] * kBlock, kBlock) == 0);
      uint64_t b = blocks[next++];
      QueueStatus q = e.queue(s);
      REQUIRE(q != QueueStatus::busy);
      if (q == QueueStatus::completed) {
        CHECK(e.slot(s).res == static_cast<int>(kBlock));
        CHECK(block_matches(e.slot(s).buf, b));
        ++checked;
      } else {
        e.slot(s).offset = b * kBlock;  // already set by prep; kept for clarity
      }
    }
    if (e.in_flight() == 0) continue;
    int n = e.commit_and_reap(done.data(), e.depth(), 1);
    REQUIRE(n > 0);
    for (int k = 0; k < n; ++k) {
      IoSlot& sl = e.slot(done[k].slot);
      CHECK(done[k].res == static_cast<int>(kBlock));
      CHECK(block_matches(sl.buf, sl.offset / kBlock));
      ++checked;
    }
  }
  CHECK(e.in_flight() == 0);
}

}  // namespace

TEST_CASE("engine: io_uring and psync read back known data at known offsets", "[engine]") {
  TempFile f;
  const std::vector<uint64_t> blocks = {0, 3, 17, 100, 255, 1, 128, 64, 200, 99};
  for (const char* name : {"io_uring", "psync"}) {
    for (bool direct : {false, true}) {
      DYNAMIC_SECTION(name << (direct ? " O_DIRECT" : " buffered")) {
        if (direct && probe_o_direct(f.path) != 0) {
          WARN("skipped: the filesystem of " << f.path << " refuses O_DIRECT");
          continue;
        }
        EngineOptions eo;
        eo.depth = 4;
        eo.buffer_bytes = kBlock;
        int fd = -1;
        auto e = open_engine(name, f.path, direct, eo, fd);
        if (!e) continue;
        CHECK(e->caps().async == (std::string(name) == "io_uring"));
        CHECK(e->depth() == (e->caps().async ? 4u : 1u));
        read_back(*e, blocks);
        e->teardown();
        close(fd);
      }
    }
  }
}

TEST_CASE("engine: unaligned O_DIRECT request is rejected with a reason", "[engine]") {
  TempFile f;
  if (probe_o_direct(f.path) != 0) {
    WARN("skipped: the filesystem of " << f.path << " refuses O_DIRECT");
    return;
  }
  for (const char* name : {"io_uring", "psync"}) {
    EngineOptions eo;
    eo.depth = 2;
    eo.buffer_bytes = 2 * kBlock;
    int fd = -1;
    auto e = open_engine(name, f.path, true, eo, fd);
    if (!e) continue;
    CHECK(e->prep(0, IoDir::read, 100, kBlock) == -EINVAL);
    CHECK(e->misalignment(100, kBlock).find("offset 100 B") != std::string::npos);
    CHECK(e->prep(0, IoDir::read, kBlock, 1000) == -EINVAL);
    CHECK(e->misalignment(kBlock, 1000).find("length 1000 B") != std::string::npos);
    CHECK(e->prep(0, IoDir::read, 0, 4 * kBlock) == -EINVAL);  // larger than the slot buffer
    CHECK(e->misalignment(0, kBlock).empty());
    CHECK(reinterpret_cast<uintptr_t>(e->slot(0).buf) % kDirectAlign == 0);
    CHECK(e->prep(0, IoDir::read, kBlock, kBlock) == 0);
    close(fd);
  }
}

TEST_CASE("engine: io_uring queue gives back-pressure when the submission queue is full", "[engine]") {
  TempFile f;
  EngineOptions eo;
  eo.depth = 8;
  eo.sq_entries = 4;
  eo.buffer_bytes = kBlock;
  int fd = -1;
  auto e = open_engine("io_uring", f.path, false, eo, fd);
  if (!e) return;
  for (unsigned s = 0; s < 4; ++s) {
    REQUIRE(e->prep(s, IoDir::read, s * kBlock, kBlock) == 0);
    CHECK(e->queue(s) == QueueStatus::queued);
  }
  REQUIRE(e->prep(4, IoDir::read, 4 * kBlock, kBlock) == 0);
  CHECK(e->queue(4) == QueueStatus::busy);              // SQ full until commit
  CHECK(e->prep(0, IoDir::read, 0, kBlock) == -EBUSY);  // slot 0 is in flight
  CHECK(e->commit() == 4);
  CHECK(e->queue(4) == QueueStatus::queued);  // room again
  std::vector<IoCompletion> done(8);
  unsigned got = 0;
  while (got < 5) {
    int n = e->commit_and_reap(done.data(), 8, 1);
    REQUIRE(n > 0);
    for (int k = 0; k < n; ++k) {
      CHECK(done[k].res == static_cast<int>(kBlock));
      CHECK(block_matches(e->slot(done[k].slot).buf, done[k].slot));  // slot s read block s
    }
    got += static_cast<unsigned>(n);
  }
  CHECK(e->in_flight() == 0);
  e->teardown();
  close(fd);
}

TEST_CASE("engine: writes land at their offsets", "[engine]") {
  TempFile f;
  for (const char* name : {"io_uring", "psync"}) {
    EngineOptions eo;
    eo.depth = 2;
    eo.buffer_bytes = kBlock;
    int fd = -1;
    auto e = open_engine(name, f.path, false, eo, fd);
    if (!e) continue;
    std::memset(e->slot(0).buf, 0xA5, kBlock);
    REQUIRE(e->prep(0, IoDir::write, 5 * kBlock, kBlock) == 0);
    QueueStatus q = e->queue(0);
    if (q == QueueStatus::queued) {
      IoCompletion c;
      REQUIRE(e->commit_and_reap(&c, 1, 1) == 1);
      CHECK(c.res == static_cast<int>(kBlock));
    } else {
      CHECK(e->slot(0).res == static_cast<int>(kBlock));
    }
    std::vector<unsigned char> back(kBlock);
    REQUIRE(pread(fd, back.data(), kBlock, 5 * kBlock) == kBlock);
    CHECK(back[0] == 0xA5);
    CHECK(back[kBlock - 1] == 0xA5);
    std::vector<unsigned char> next(kBlock);
    REQUIRE(pread(fd, next.data(), kBlock, 6 * kBlock) == kBlock);
    CHECK(block_matches(next.data(), 6));  // the neighbour is untouched
    e->teardown();
    close(fd);
  }
}
