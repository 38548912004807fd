#include "topology/btrfs_info.hpp"
#include "topology/sysfs_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

namespace ioprobe {

namespace {

bool is_profile(const std::string& n) {
  static const char* kProfiles[] = {"single", "dup",   "raid0",   "raid1",  "raid10",
                                    "raid5",  "raid6", "raid1c3", "raid1c4"};
  for (const char* p : kProfiles)
    if (n == p) return true;
  return false;
}

unsigned long long read_u64(const std::string& path) {
  std::ifstream in(path);
  unsigned long long v = 0;
  in >> v;
  return v;
}

// Profiles present under allocation/<kind>/, largest total_bytes first.
std::vector<std::string> profiles(const std::string& dir) {
  std::vector<std::pair<unsigned long long, std::string>> found;
  for (const auto& n : list_dir(dir))
    if (is_profile(n)) found.emplace_back(read_u64(dir + "/" + n + "/total_bytes"), n);
  std::stable_sort(found.begin(), found.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

std::string fsid_by_ioctl(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  btrfs_ioctl_fs_info_args args{};
  int rc = ioctl(fd, BTRFS_IOC_FS_INFO, &args);
  close(fd);
  if (rc != 0) return "";
  const unsigned char* u = args.fsid;
  return fmt::format(
      "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", u[0],
      u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

}  // namespace

BtrfsInfo describe_btrfs_fsid(const std::string& fsid, const std::string& sysfs_root) {
  BtrfsInfo b;
  std::string dir = sysfs_root + "/fs/btrfs/" + fsid;
  struct stat st {};
  if (fsid.empty() || stat(dir.c_str(), &st) != 0) return b;
  b.fsid = fsid;
  b.data_profiles = profiles(dir + "/allocation/data");
  if (!b.data_profiles.empty()) b.data_profile = b.data_profiles.front();
  auto meta = profiles(dir + "/allocation/metadata");
  if (!meta.empty()) b.metadata_profile = meta.front();
  b.members = list_dir(dir + "/devices");
  return b;
}

BtrfsInfo describe_btrfs(const std::string& path, const std::string& mount_source, const std::string& sysfs_root) {
  std::string fsid = fsid_by_ioctl(path);
  if (fsid.empty() && !mount_source.empty()) {
    char* r = realpath(mount_source.c_str(), nullptr);
    std::string dev = r ? r : mount_source;
    free(r);
    dev = dev.substr(dev.rfind('/') + 1);
    for (const auto& id : list_dir(sysfs_root + "/fs/btrfs")) {
      struct stat st {};
      if (stat((sysfs_root + "/fs/btrfs/" + id + "/devices/" + dev).c_str(), &st) == 0) fsid = id;
    }
  }
  return describe_btrfs_fsid(fsid, sysfs_root);
}

}  // namespace ioprobe
