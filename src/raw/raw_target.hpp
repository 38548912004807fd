// The file or block device a raw job runs on: checks, safe creation ("layout") and size.
//
// Safety rules: a missing file is created (filled with pseudo-random bytes in a temporary file,
// fsync'd, marked with the xattr user.ioprobe, then renamed into place, so an interrupted layout
// never leaves a file that looks complete). An existing file is never rewritten, extended or
// written to unless it carries ioprobe's mark or --allow-overwrite was given; block devices are
// never written without --allow-overwrite, nor while in use (mounted, or held by LVM/md/swap):
// both refusals come before the device is opened for writing. Creating or extending a file is
// refused (exit 1) when the filesystem has fewer free bytes than it needs; an extension that fails
// or is interrupted truncates the file back to its old size, and the file keeps its mark.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "raw/raw_config.hpp"

namespace ioprobe {

/// Name of the extended attribute marking files ioprobe laid out.
constexpr const char* kLayoutXattr = "user.ioprobe";

struct RawTarget {
  std::string path;  // as given
  bool block_device = false;
  uint64_t file_bytes = 0;      // size of the file / device (bytes)
  uint64_t region_bytes = 0;    // bytes each job covers: min(--size or file size), a multiple of bs
  bool created = false;         // laid out by this run
  bool ioprobe_marked = false;  // carries the user.ioprobe xattr (or was created now)
  std::string note;             // one line for the report, e.g. "laid out 1.00 GiB in 2.1 s"
  int evicted = 1;              // page-cache eviction before the run (raw_evicts): 0 done, -errno failed, 1 not tried
  /// Write tests on a block device: a read-only O_EXCL descriptor of it, held while any copy of
  /// this RawTarget lives, so the device cannot be mounted or claimed during the run.
  std::shared_ptr<void> exclusive_claim;
};

/// What to do when opening block device `path` for reading failed with `err`: EACCES or EPERM for
/// a user other than root (`euid` != 0): read permission (root or the disk group). As root the
/// file mode cannot be the cause, so the text names what can refuse root: a container's device
/// cgroup, a security module (SELinux, AppArmor) or kernel lockdown. Other errors: "".
std::string device_open_hint(const std::string& path, int err, unsigned euid);

/// Checks `cfg.filename` and creates or extends it when allowed (see above).
/// Throws UsageError for a refused path, size or busy device (with what to do), IoError for failed system
/// calls, and returns with target.note saying "interrupted" when SIGINT stopped the layout.
RawTarget prepare_raw_target(const RawConfig& cfg);

/// Fraction (0..1) of the first `bytes` of regular file `path` resident in the page cache
/// (mmap + mincore); -1 when it cannot be told (block device, mmap refused).
double page_cache_residency(const std::string& path, uint64_t bytes);

}  // namespace ioprobe
