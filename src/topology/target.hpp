// The storage target under a path: filesystem type, mount, backing device, and whether O_DIRECT
// is accepted (probed by opening a file, never assumed).
#pragma once

#include <cstdint>
#include <string>

namespace ioprobe {

/// What a measurement ran against.
struct TargetInfo {
  std::string path;          // the path probed, as given
  std::string fs_type;       // from statfs f_type: "ext4", "xfs", "btrfs", "tmpfs", "nfs", "fuse", ...
  uint64_t fs_magic = 0;     // statfs f_type
  std::string mount_point;   // from /proc/self/mountinfo
  std::string mount_source;  // e.g. "/dev/nvme0n1p2", "server:/export"
  std::string mount_fstype;  // mountinfo's fs type, e.g. "fuse.sshfs"
  std::string mount_options;
  std::string device;        // block device name, e.g. "nvme0n1p2", "" when none (tmpfs, network)
  int rotational = -1;       // 1 spinning, 0 solid state, -1 unknown
  bool memory_backed = false;  // tmpfs / ramfs: a RAM measurement, not a device one
  bool network = false;        // nfs, cifs, fuse.sshfs, lustre, ...
  uint64_t free_bytes = 0;
  uint64_t free_inodes = 0;
};

/// Probes the filesystem holding `path` (which must exist). Throws IoError when statfs fails.
TargetInfo probe_target(const std::string& path);

/// Name of a statfs magic number ("ext4" for EXT4_SUPER_MAGIC), "unknown(0x...)" otherwise.
std::string fs_type_name(uint64_t magic);

/// Tries open(O_RDONLY|O_DIRECT) on `file` and a 4 KiB aligned read. Returns 0 when accepted,
/// else the negative errno (-EINVAL on filesystems without O_DIRECT support).
int probe_o_direct(const std::string& file);

}  // namespace ioprobe
