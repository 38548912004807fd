#include "engine/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe {

namespace {

// cachestat(2), Linux 6.5 (include/uapi/linux/mman.h); Debian 12's headers predate it.
constexpr long kSysCachestat = 451;
struct CachestatRange {
  uint64_t off;
  uint64_t len;  // 0 = to the end of the file
};
struct Cachestat {
  uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

uint64_t page_size() {
  static const uint64_t ps = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return ps;
}

int residency_by_mincore(int fd, uint64_t size, uint64_t& resident) {
  const uint64_t ps = page_size();
  const uint64_t window = 256ULL << 20;  // map 256 MiB at a time: bounded address space and vector
  std::vector<unsigned char> vec(window / ps);
  for (uint64_t off = 0; off < size; off += window) {
    uint64_t len = std::min(window, size - off);
    void* p = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(off));
    if (p == MAP_FAILED) return -errno;
    int rc = mincore(p, len, vec.data());
    int err = errno;
    munmap(p, len);
    if (rc != 0) return -err;
    uint64_t pages = (len + ps - 1) / ps;
    for (uint64_t i = 0; i < pages; ++i) resident += vec[i] & 1;
  }
  return 0;
}

}  // namespace

int evict_fd(int fd) {
  if (fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS) return -errno;  // EINVAL: no sync support
  int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  return -rc;  // posix_fadvise returns the error number itself
}

int evict_file(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = evict_fd(fd);
  close(fd);
  return rc;
}

int file_residency(int fd, Residency& out) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return -errno;
  const uint64_t ps = page_size();
  uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t pages = (size + ps - 1) / ps;
  if (pages == 0) {
    if (out.method.empty()) out.method = "cachestat";
    return 0;
  }
  CachestatRange range{0, 0};
  Cachestat cs{};
  if (syscall(kSysCachestat, fd, &range, &cs, 0) == 0) {
    out.resident_pages += std::min<uint64_t>(cs.nr_cache, pages);
    out.total_pages += pages;
    out.method = "cachestat";
    return 0;
  }
  return file_residency_mincore(fd, out);
}

int file_residency_mincore(int fd, Residency& out) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return -errno;
  const uint64_t ps = page_size();
  uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t pages = (size + ps - 1) / ps;
  uint64_t resident = 0;
  int rc = size ? residency_by_mincore(fd, size, resident) : 0;
  if (rc != 0) return rc;
  out.resident_pages += resident;
  out.total_pages += pages;
  out.method = "mincore";
  return 0;
}

int file_residency(const std::string& path, Residency& out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = file_residency(fd, out);
  close(fd);
  return rc;
}

DatasetResidency measure_residency(const std::vector<std::string>& paths, size_t max_files) {
  DatasetResidency d;
  size_t n = paths.size();
  size_t take = (max_files == 0 || max_files >= n) ? n : max_files;
  for (size_t i = 0; i < take; ++i) {
    size_t idx = take == n ? i : (i * n) / take;  // evenly spread sample
    if (file_residency(paths[idx], d.residency) != 0) ++d.failed;
    else ++d.files_sampled;
  }
  return d;
}

std::string drop_caches_refusal(int err, const std::string& proc_file) {
  switch (err) {
    case EACCES:
    case EPERM:
      return fmt::format("cannot drop caches: writing {} needs root ({}); evicting per file with "
                         "posix_fadvise(DONTNEED) instead",
                         proc_file, errno_name(err));
    case EROFS:
      return fmt::format("cannot drop caches: {} is read-only (EROFS), as in a container; evicting per file "
                         "with posix_fadvise(DONTNEED) instead",
                         proc_file);
    default:
      return fmt::format("cannot drop caches: {}: {}; evicting per file with posix_fadvise(DONTNEED) instead",
                         proc_file, errno_text(err));
  }
}

DropCachesResult drop_caches(const std::string& proc_file) {
  DropCachesResult r;
  sync();
  int fd = open(proc_file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    r.err = errno;
  } else {
    if (write(fd, "3", 1) != 1) r.err = errno ? errno : EIO;
    close(fd);
  }
  if (r.err == 0) {
    r.dropped = true;
    r.reason = "page cache, dentries and inodes dropped (" + proc_file + ")";
  } else {
    r.reason = drop_caches_refusal(r.err, proc_file);
  }
  return r;
}

const char* residency_source(double fraction) {
  if (fraction >= kPageCacheResidency) return "page cache";
  if (fraction <= kDeviceResidency) return "device";
  return "mixed";
}

}  // namespace ioprobe
