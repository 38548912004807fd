// Page-cache control for cold/warm runs: evict a file's clean pages, measure how much of a
// file is resident, and drop all caches when permitted. The loader calls these between epochs;
// none of them throws, so they are safe on the hot path (errors come back as negative errno or in
// the result struct).
//
// Wiring: for `--cache cold` without O_DIRECT, call evict_file() on each dataset file before an
// epoch (or drop_caches() first when root and --drop-caches), then measure_residency() on the
// dataset to report "cold, 0.3% resident" per epoch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ioprobe {

/// posix_fadvise(POSIX_FADV_DONTNEED) over the whole file, after fdatasync() so dirty pages (a
/// freshly generated dataset) become clean and evictable. Works unprivileged. Returns 0 or
/// -errno. On tmpfs/ramfs it succeeds but evicts nothing: the pages are the file's only copy.
int evict_file(const std::string& path);

/// Same on an open descriptor.
int evict_fd(int fd);

/// Residency of one file or a set of files.
struct Residency {
  uint64_t resident_pages = 0;  // pages in the page cache
  uint64_t total_pages = 0;     // pages the file(s) span (size rounded up to the page size)
  std::string method;           // "cachestat" (Linux 6.5+, syscall 451) or "mincore"
  double fraction() const { return total_pages ? static_cast<double>(resident_pages) / total_pages : 0.0; }
};

/// Counts `fd`'s resident pages with cachestat(2), falling back to mmap + mincore(2) when the
/// kernel lacks cachestat (ENOSYS) or refuses it. Returns 0 or -errno; `out` accumulates (adds to
/// its counts), so one Residency can sum many files.
int file_residency(int fd, Residency& out);

/// The mincore(2) path alone (what file_residency falls back to); exposed for tests.
int file_residency_mincore(int fd, Residency& out);

/// Opens `path` read-only and calls file_residency(). Returns 0 or -errno (-ENOENT, -EACCES, ...).
int file_residency(const std::string& path, Residency& out);

/// Residency of a dataset: sums at most `max_files` files spread evenly over `paths` (all when
/// max_files is 0 or >= paths.size()). Files that cannot be opened are counted in `failed`.
struct DatasetResidency {
  Residency residency;
  uint64_t files_sampled = 0;
  uint64_t failed = 0;
};
DatasetResidency measure_residency(const std::vector<std::string>& paths, size_t max_files = 0);

/// Where an epoch's reads came from, judged by the share of the data resident in the page cache
/// just before it: at or above kPageCacheResidency "page cache", at or below kDeviceResidency
/// "device", between them "mixed" (neither a memory nor a device figure). The one place these
/// thresholds are named.
inline constexpr double kPageCacheResidency = 0.95;
inline constexpr double kDeviceResidency = 0.05;

/// "page cache", "device" or "mixed" for a resident fraction 0..1.
const char* residency_source(double fraction);

/// Outcome of drop_caches().
struct DropCachesResult {
  bool dropped = false;
  int err = 0;         // errno when refused: EACCES (not root), EROFS (read-only /proc/sys, containers), ...
  std::string reason;  // one line for the report, e.g. "cannot drop caches: /proc/sys/vm/drop_caches is
                       // read-only (EROFS), as in a container; evicting per file instead"
};

/// sync(), then writes "3" to `proc_file` (page cache, dentries and inodes). Needs root; refusals
/// come back in the result, never as an exception. `proc_file` is overridable for tests.
DropCachesResult drop_caches(const std::string& proc_file = "/proc/sys/vm/drop_caches");

/// The report's sentence for a drop_caches refusal with `err` (EACCES, EPERM, EROFS, other).
std::string drop_caches_refusal(int err, const std::string& proc_file);

}  // namespace ioprobe
