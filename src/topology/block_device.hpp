// The block-device side of a storage target, read from sysfs: the chain from the device a
// filesystem sits on down to the disk (partition -> disk, loop -> backing file, md/dm -> members),
// and the disk's queue facts (block sizes, nr_requests, scheduler, rotational, model, NUMA node).
//
// Every function takes the sysfs root ("/sys" on a live system) so tests can point it at a
// recorded fixture tree under tests/fixtures/sysfs/. Nothing here throws: a missing attribute
// leaves its field at the "unknown" value documented on it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ioprobe {

/// One step of a device chain, outermost (what the filesystem is mounted from) first.
struct BlockLink {
  std::string name;    // kernel name: "nvme0n1p2", "loop0", "md127", "dm-0", "vda"
  std::string kind;    // "partition" | "disk" | "loop" | "md" | "dm" | "virtual"
  std::string detail;  // partition: ""; loop: backing file path; md: RAID level ("raid0");
                       // dm: the mapper name; disk: the model string when sysfs has one
};

/// Facts of one block device (the outermost device of a chain) and the chain below it.
struct BlockDeviceInfo {
  std::string name;                   // kernel name of the outermost device, "" when not found
  std::vector<BlockLink> chain;       // outermost first; members of md/dm appear after their array
  std::string disk;                   // the whole disk holding `name` (== name unless a partition)
  std::string backing_file;           // loop devices: the file behind them, else ""
  std::string raid_level;             // md: /sys/block/mdN/md/level ("raid0", "raid1", ...), else ""
  std::vector<std::string> members;   // md/dm: slave device names (sorted), else empty
  int rotational = -1;                // queue/rotational: 1 spinning, 0 solid state, -1 unknown
  uint32_t logical_block_bytes = 0;   // queue/logical_block_size, 0 unknown
  uint32_t physical_block_bytes = 0;  // queue/physical_block_size, 0 unknown
  int nr_requests = -1;               // queue/nr_requests: the block layer's queue depth per hw queue
  std::string scheduler;              // selected I/O scheduler ("none", "mq-deadline", ...), "" unknown
  std::string model;                  // device/model (trimmed), "" when absent
  bool nvme = false;                  // the disk is an NVMe namespace (name "nvme*")
  int numa_node = -1;                 // numa_node of the nearest PCI ancestor; -1 none/unknown
};

/// Describes the block device with number maj:min (e.g. a file's st_dev). Returns an empty
/// `name` when sysfs has no such block device (tmpfs, network filesystems, btrfs's anonymous dev).
BlockDeviceInfo describe_block_device(unsigned maj, unsigned min, const std::string& sysfs_root = "/sys");

/// Same, by kernel name ("nvme0n1p2", "loop0").
BlockDeviceInfo describe_block_device_named(const std::string& name, const std::string& sysfs_root = "/sys");

/// Where a loop device's reads go. A loop device without direct I/O reads its backing file
/// through the page cache, so its own diskstats say nothing of the disk; the device holding the
/// file does. Source: the kernel's Documentation/ABI/testing/sysfs-block-loop (loop/backing_file,
/// loop/dio: "Shows if direct IO is being used to access backing file or not").
struct LoopBacking {
  std::string loop;          // the loop device ("loop0"), "" when the device is not a loop device
  std::string backing_file;  // loop/backing_file, as the kernel prints it
  int direct_io = -1;        // loop/dio: 1 the file is read with O_DIRECT, 0 through the page cache, -1 unknown
  std::string device;        // the block device holding the file ("vda1", "nvme0n1p2"), found from the
                             // file's st_dev under dev/block/MAJ:MIN; "" when not found (a file on
                             // tmpfs or btrfs, a file gone)
  std::string disk;          // the whole disk holding `device` (== device unless a partition), "" when not found
};

/// A path's st_dev as {major, minor}, nullopt when stat fails.
using FileDeviceOf = std::function<std::optional<std::pair<unsigned, unsigned>>(const std::string&)>;

/// stat(2) of `path`: its st_dev as {major, minor}; nullopt when stat fails.
std::optional<std::pair<unsigned, unsigned>> file_device(const std::string& path);

/// The backing of loop device `name` under `sysfs_root`; `loop` is "" when `name` is no loop
/// device. `device_of` gives the backing file's st_dev (file_device on a live system; tests give
/// a fixed one, as the fixture's file does not exist). Never throws.
LoopBacking loop_backing(const std::string& name, const std::string& sysfs_root = "/sys",
                         const FileDeviceOf& device_of = file_device);

/// The selected scheduler from a queue/scheduler line: "none [mq-deadline] kyber" -> "mq-deadline";
/// a line without brackets (single choice) is returned trimmed.
std::string selected_scheduler(const std::string& line);

/// The numa_node of the nearest ancestor of sysfs directory `start` (resolved) that has one,
/// walking up towards /sys/devices; -1 when none has one or it says -1.
int nearest_numa_node(const std::string& start);

}  // namespace ioprobe
