// The block-device side of a storage target, read from sysfs: the chain from the device a
// filesystem sits on down to the disk (partition -> disk, loop -> backing file, md/dm -> members),
// and the disk's queue facts (block sizes, nr_requests, scheduler, rotational, model, NUMA node).
//
// Every function takes the sysfs root ("/sys" on a live system) so tests can point it at a
// recorded fixture tree under tests/fixtures/sysfs/. Nothing here throws: a missing attribute
// leaves its field at the "unknown" value documented on it.
#pragma once

#include <cstdint>
#include <string>
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

/// The selected scheduler from a queue/scheduler line: "none [mq-deadline] kyber" -> "mq-deadline";
/// a line without brackets (single choice) is returned trimmed.
std::string selected_scheduler(const std::string& line);

/// The numa_node of the nearest ancestor of sysfs directory `start` (resolved) that has one,
/// walking up towards /sys/devices; -1 when none has one or it says -1.
int nearest_numa_node(const std::string& start);

}  // namespace ioprobe
