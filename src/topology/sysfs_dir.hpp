// Listing of sysfs (or fixture) directories, shared by the topology readers.
#pragma once

#include <string>
#include <vector>

namespace ioprobe {

/// Entry names of `dir` except "." and "..", sorted; empty when the directory cannot be read.
std::vector<std::string> list_dir(const std::string& dir);

/// The first line of file `path`, trimmed of blanks; "" when it cannot be read.
std::string read_sysfs_line(const std::string& path);

/// The leading integer of read_sysfs_line(path); `fallback` when there is none.
long read_sysfs_long(const std::string& path, long fallback);

/// Whether `path` exists (stat succeeds).
bool sysfs_exists(const std::string& path);

/// realpath(path), "" when it does not resolve.
std::string sysfs_resolve(const std::string& path);

/// The last component of `path` ("nvme0n1" of "/sys/devices/.../nvme0n1").
inline std::string sysfs_base_name(const std::string& p) { return p.substr(p.rfind('/') + 1); }

/// `path` without its last component.
inline std::string sysfs_dir_name(const std::string& p) { return p.substr(0, p.rfind('/')); }

}  // namespace ioprobe
