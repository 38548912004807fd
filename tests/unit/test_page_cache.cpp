#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/page_cache.hpp"

using namespace ioprobe;

namespace {

// A scratch directory in the build tree (a disk filesystem, unlike /tmp or /dev/shm on some hosts).
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char tmpl[] = "ioprobe-pagecache-XXXXXX";
    char* d = mkdtemp(tmpl);
    path = d ? d : "";
  }
  ~ScratchDir() {
    if (!path.empty()) {
      std::string cmd = "rm -rf '" + path + "'";
      if (std::system(cmd.c_str()) != 0) {
      }
    }
  }
};

bool on_evictable_fs(const std::string& dir) {
  struct statfs sf {};
  if (statfs(dir.c_str(), &sf) != 0) return false;
  return sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC;
}

void write_page_cache_file(const std::string& path, size_t bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  std::vector<char> buf(1 << 20, 'a');
  for (size_t off = 0; off < bytes; off += buf.size())
    REQUIRE(write(fd, buf.data(), buf.size()) == (ssize_t)buf.size());
  close(fd);
}

void read_file(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  std::vector<char> buf(1 << 20);
  while (read(fd, buf.data(), buf.size()) > 0) {
  }
  close(fd);
}

}  // namespace

TEST_CASE("page cache: a read file is resident; DONTNEED evicts it", "[pagecache]") {
  ScratchDir dir;
  REQUIRE_FALSE(dir.path.empty());
  if (!on_evictable_fs(dir.path)) {
    WARN("build directory is on tmpfs/ramfs, where DONTNEED cannot evict; skipping");
    return;
  }
  std::string f = dir.path + "/data.bin";
  write_page_cache_file(f, 8 << 20);  // 8 MiB = 2048 pages of 4 KiB
  REQUIRE(evict_file(f) == 0);        // fdatasync + DONTNEED: even freshly written pages go
  read_file(f);

  Residency warm;
  REQUIRE(file_residency(f, warm) == 0);
  CHECK(warm.total_pages == (8ULL << 20) / static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  CHECK(warm.fraction() > 0.99);

  REQUIRE(evict_file(f) == 0);
  Residency cold;
  REQUIRE(file_residency(f, cold) == 0);
  CHECK(cold.fraction() < 0.01);

  // The mincore fallback agrees with cachestat.
  read_file(f);
  int fd = open(f.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  Residency by_mincore;
  REQUIRE(file_residency_mincore(fd, by_mincore) == 0);
  close(fd);
  CHECK(by_mincore.method == "mincore");
  CHECK(by_mincore.fraction() > 0.99);

  DatasetResidency d = measure_residency({f, dir.path + "/missing.bin"});
  CHECK(d.files_sampled == 1);
  CHECK(d.failed == 1);
  CHECK(d.residency.fraction() > 0.99);
}

TEST_CASE("page cache: residency of an empty file and errors", "[pagecache]") {
  ScratchDir dir;
  std::string f = dir.path + "/empty.bin";
  write_page_cache_file(f, 0);
  Residency r;
  CHECK(file_residency(f, r) == 0);
  CHECK(r.total_pages == 0);
  CHECK(r.fraction() == 0.0);
  CHECK(file_residency(dir.path + "/nope", r) == -ENOENT);
  CHECK(evict_file(dir.path + "/nope") == -ENOENT);
}

TEST_CASE("drop_caches refusal reasons name EACCES and EROFS", "[pagecache]") {
  CHECK(drop_caches_refusal(EACCES, "/proc/sys/vm/drop_caches").find("needs root (EACCES)") != std::string::npos);
  CHECK(drop_caches_refusal(EROFS, "/proc/sys/vm/drop_caches").find("read-only (EROFS)") != std::string::npos);
  ScratchDir dir;  // a directory of our own, so that the missing path is certain to be missing
  REQUIRE_FALSE(dir.path.empty());
  DropCachesResult r = drop_caches(dir.path + "/no-such-dir/drop_caches");
  CHECK_FALSE(r.dropped);
  CHECK(r.err == ENOENT);
  CHECK(r.reason.find("ENOENT") != std::string::npos);
}

TEST_CASE("drop_caches on a read-only file system reports EROFS [root]", "[pagecache][root]") {
  if (geteuid() != 0) {
    WARN("needs root to mount a read-only tmpfs; skipping");
    return;
  }
  ScratchDir dir;
  if (mount("ioprobe-test", dir.path.c_str(), "tmpfs", 0, "size=1m") != 0) {
    WARN("cannot mount tmpfs here (" << errno << "); skipping");
    return;
  }
  std::string f = dir.path + "/drop_caches";
  write_page_cache_file(f, 0);
  bool ro = mount(nullptr, dir.path.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  DropCachesResult r;
  if (ro) r = drop_caches(f);
  umount2(dir.path.c_str(), MNT_DETACH);
  if (!ro) {
    WARN("cannot remount read-only; skipping");
    return;
  }
  CHECK_FALSE(r.dropped);
  CHECK(r.err == EROFS);
  CHECK(r.reason.find("read-only (EROFS)") != std::string::npos);
}
