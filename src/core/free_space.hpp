// Free space of a filesystem as an unprivileged writer sees it, for the space checks before a
// write (dataset generation, raw layouts, checkpoints) and the messages after ENOSPC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ioprobe {

struct FreeSpace {
  uint64_t bytes = 0;           // statvfs f_bavail x f_frsize (bytes an unprivileged writer may still use)
  uint64_t inodes = 0;          // statvfs f_favail
  bool reported = true;         // false when the filesystem reports no size at all (f_blocks 0: ramfs)
  bool inodes_reported = true;  // false when it reports no inode count (f_files 0: btrfs, ramfs)
};

/// statvfs of `path` (any file or directory on the filesystem); std::nullopt when statvfs fails
/// (errno tells why). Never throws.
std::optional<FreeSpace> free_space(const std::string& path);

}  // namespace ioprobe
