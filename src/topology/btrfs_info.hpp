// A btrfs filesystem's RAID profile and member devices, from /sys/fs/btrfs/<fsid>/ (the sysfs
// equivalent of `btrfs filesystem df` and `btrfs filesystem show`):
//   allocation/data/<profile>/      one directory per profile holding data chunks
//                                   ("single", "dup", "raid0", "raid1", "raid10", "raid5", "raid6", ...)
//   allocation/metadata/<profile>/  likewise for metadata
//   devices/<name>                  one link per member block device
// Kernel source: fs/btrfs/sysfs.c (raid_attr per profile, devices kobject), Linux 5.x and later.
#pragma once

#include <string>
#include <vector>

namespace ioprobe {

struct BtrfsInfo {
  std::string fsid;                        // filesystem UUID, "" when not found
  std::string data_profile;                // the data profile holding the most bytes ("raid0"), "" unknown
  std::string metadata_profile;            // likewise for metadata
  std::vector<std::string> data_profiles;  // every data profile present (more than one mid-balance)
  std::vector<std::string> members;        // member device names, sorted ("loop0", "loop1")
};

/// Describes the btrfs filesystem holding `path`. Finds the fsid with BTRFS_IOC_FS_INFO, or
/// failing that by looking for `mount_source`'s device name under /sys/fs/btrfs/*/devices/.
/// Never throws; returns an empty fsid when neither works.
BtrfsInfo describe_btrfs(const std::string& path, const std::string& mount_source,
                         const std::string& sysfs_root = "/sys");

/// Describes the btrfs filesystem `fsid` from sysfs alone (used by describe_btrfs and by tests).
BtrfsInfo describe_btrfs_fsid(const std::string& fsid, const std::string& sysfs_root = "/sys");

}  // namespace ioprobe
