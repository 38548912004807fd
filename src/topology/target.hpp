// The storage target under a path: filesystem type, mount, backing device, and whether O_DIRECT
// is accepted (probed by opening a file, never assumed).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "topology/block_device.hpp"

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
  std::string device;          // block device name, e.g. "nvme0n1p2", "" when none (tmpfs, network)
  int rotational = -1;         // 1 spinning, 0 solid state, -1 unknown
  bool memory_backed = false;  // tmpfs / ramfs: a RAM measurement, not a device one
  bool network = false;        // nfs, cifs, fuse.sshfs, lustre, ...
  uint64_t free_bytes = 0;
  bool free_known = true;  // false when the filesystem reports no size at all (statfs f_blocks 0: ramfs, sysfs)
  uint64_t free_inodes = 0;

  // Device chain and queue facts (topology/block_device.hpp). For btrfs, the facts are those of
  // the first member device and `rotational` is 1 when any member spins.
  std::vector<BlockLink> device_chain;    // outermost first: partition -> disk, loop (backing file),
                                          // md/btrfs array -> each member's chain
  std::string disk;                       // whole disk under `device` ("nvme0n1"), "" when none
  std::string backing_file;               // loop device: its backing file
  std::string backing_device;             // loop device: the block device holding that file ("vda"), "" unknown
  int loop_direct_io = -1;                // loop device: loop/dio, 1 O_DIRECT on the file, 0 through the
                                          // page cache, -1 not a loop device or unknown
  std::string raid_kind;                  // "md" | "btrfs" | "" (no array)
  std::string raid_level;                 // md level or btrfs data profile: "raid0", "raid1", "single", ...
  std::string raid_metadata_level;        // btrfs metadata profile, "" otherwise
  std::vector<std::string> raid_members;  // member device names, sorted ("loop0", "loop1")
  uint32_t logical_block_bytes = 0;       // queue/logical_block_size, 0 unknown
  uint32_t physical_block_bytes = 0;      // queue/physical_block_size, 0 unknown
  int nr_requests = -1;                   // block-layer queue depth (queue/nr_requests), -1 unknown
  std::string scheduler;                  // selected I/O scheduler, "" unknown
  std::string device_model;               // device/model, "" when absent
  bool nvme = false;                      // the disk is an NVMe namespace
  int device_numa_node = -1;              // NUMA node of the device's PCI function, -1 none/unknown

  // O_DIRECT, probed by a real open + aligned read (see probe_o_direct), never assumed.
  int o_direct = -1;                    // 1 accepted, 0 refused, -1 not probed (nothing to read)
  int o_direct_errno = 0;               // errno of the refusal (EINVAL typically), 0 otherwise
  std::string o_direct_probe_file;      // the file read: an existing one, or "(temporary file)"
  uint32_t dio_mem_align_bytes = 0;     // statx STATX_DIOALIGN stx_dio_mem_align; 0 unknown/unsupported
  uint32_t dio_offset_align_bytes = 0;  // stx_dio_offset_align; 0 unknown/unsupported

  std::vector<std::string> warnings;  // for the report: network caching, tmpfs is RAM, ...
};

/// Probes the filesystem holding `path` (which must exist): statfs, /proc/self/mountinfo, the
/// device chain under /sys, btrfs profiles, and O_DIRECT. For the O_DIRECT probe it reads the
/// first regular file of at least 4 KiB found directly in `path` (or `path` itself when it is a
/// file); when there is none it writes, reads and removes a 4 KiB temporary file
/// ".ioprobe-odirect-XXXXXX" in `path`; when it cannot do either, o_direct stays -1.
/// With allow_temp_file = false (a user's read-only dataset) nothing is ever written.
/// Throws IoError when statfs fails.
TargetInfo probe_target(const std::string& path, bool allow_temp_file = true);

/// One filesystem among those a list of files spans, with its share of the list.
struct TargetShare {
  TargetInfo info;      // probed on a listed file of this filesystem; info.path is its mount point
  uint64_t device = 0;  // st_dev shared by the files
  uint64_t files = 0;   // listed files on this filesystem
  uint64_t bytes = 0;   // their sizes (stat st_size), bytes
};

/// The filesystems a list of files lives on.
struct FileTargets {
  std::vector<TargetShare> groups;  // most bytes first (then most files); empty when no file exists
  uint64_t missing = 0;             // listed paths stat() failed on
  std::string first_missing;        // the first of them, as listed
  int first_missing_errno = 0;      // its errno
  /// The listed paths that exist but are not regular files (a FIFO, a device, a directory, a
  /// socket), by index: opening a FIFO for reading blocks until a writer comes, and a character
  /// device such as /dev/zero never ends, so a caller leaves them out rather than reading them.
  std::vector<size_t> not_regular;
  std::string first_not_regular_kind;  // e.g. "a FIFO (named pipe)"
};

/// Stats each of the `count` paths given by `path_of(i)` (one stat per file), groups them by
/// filesystem (st_dev) and probes each group like probe_target, on one of its own files: the
/// first regular file of at least 4 KiB (else the first regular file); when that file cannot be
/// opened for a reason other than O_DIRECT (gone, permission), the next one is tried, at most 8.
/// A missing or unreadable file therefore never decides a group's O_DIRECT. Nothing is written.
/// Throws IoError when statfs fails on an existing file.
FileTargets probe_file_targets(size_t count, const std::function<std::string(size_t)>& path_of);

/// Name of a statfs magic number ("ext4" for EXT4_SUPER_MAGIC), "unknown(0x...)" otherwise.
std::string fs_type_name(uint64_t magic);

/// Tries open(O_RDONLY|O_DIRECT) on `file` and one aligned read of max(4 KiB, the file's DIO
/// alignment) bytes. Returns 0 when accepted, else the negative errno (-EINVAL on filesystems
/// without O_DIRECT support, at open or at the read).
int probe_o_direct(const std::string& file);

/// statx(STATX_DIOALIGN) of `file` (Linux 6.1+): {memory alignment, offset alignment} in bytes;
/// {0, 0} when the kernel or filesystem does not report it or direct I/O is unsupported.
std::pair<uint32_t, uint32_t> dio_alignment(const std::string& file);

/// Whether a filesystem of mountinfo type `mount_fstype` (or statfs name `fs_type`) is a network
/// or cluster filesystem whose client caches data: nfs*, cifs/smb3, lustre, beegfs, gpfs, ceph,
/// 9p, and FUSE clients of remote stores (fuse.sshfs, fuse.s3fs, fuse.gcsfuse, ...).
bool is_network_fs(const std::string& fs_type, const std::string& mount_fstype);

}  // namespace ioprobe
