#include "core/free_space.hpp"

#include <sys/statvfs.h>

namespace ioprobe {

std::optional<FreeSpace> free_space(const std::string& path) {
  struct statvfs sv {};
  if (statvfs(path.c_str(), &sv) != 0) return std::nullopt;
  FreeSpace f;
  f.bytes = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
  f.inodes = sv.f_favail;
  f.reported = sv.f_blocks > 0;
  f.inodes_reported = sv.f_files > 0;
  return f;
}

}  // namespace ioprobe
