// `ioprobe scaling`: does an array deliver the sum of its member devices? Each member device is
// read alone, read-only with O_DIRECT, then the array through a file on it, with the same pattern;
// the array's rate over the sum of the members' is the scaling efficiency, shown beside what the
// RAID level lets one expect. A single device is shown against its interface's nominal speed.
//
// Nothing is ever written to a member device: members are opened O_RDONLY (raw/'s block-device
// path, which refuses writes without --allow-overwrite). The array file is either one the user
// names (read only) or one ioprobe creates with raw/'s safe layout and removes afterwards.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "raw/raw_config.hpp"
#include "topology/device_class.hpp"

namespace ioprobe {

struct TargetInfo;

struct ScalingConfig {
  std::string dir;                   // a directory on the array (its filesystem names the members)
  std::string file;                  // an existing file on the array to read (read-only); "" = ioprobe creates one
  RawPattern rw = RawPattern::read;  // read | randread (writes are never issued)
  uint32_t bs = 128 * 1024;          // bytes per request, a multiple of 4096 (O_DIRECT)
  unsigned iodepth = 16;             // requests in flight (io_uring)
  double runtime_s = 5;              // seconds per measurement (each member, then the array)
  uint64_t file_bytes = 1ULL << 30;  // size of the file ioprobe creates, bytes
  bool progress = true;              // progress lines of each measurement (false: --quiet)
};

/// What the RAID level lets one expect of the array, as a multiple of the members' summed rate.
struct ScalingExpectation {
  double factor = 0;  // array / sum of members expected at best (0 when the level is unknown)
  std::string rule;   // e.g. "raid0 stripes every read over all 2 members: up to the sum"
};

/// Expectation for reads of level `level` ("raid0", "raid1", "raid10", "raid5", "raid6",
/// "single", "dup", "linear", md's "raid4"; "" = one device) over `members` devices. Sources:
/// the md(4) man page (RAID levels) and btrfs's profiles (btrfs-man5, "PROFILES"): raid0/raid10
/// stripe reads over all members; raid1 reads may be served by any copy (Linux md balances
/// concurrent reads; btrfs picks a mirror per reader), so up to the sum; raid4/5 read data from
/// n-1 members' worth of capacity per stripe, raid6 from n-2; single/linear/dup place a file's
/// extents on one device at a time, so one member's rate.
ScalingExpectation raid_expectation(const std::string& level, size_t members);

/// One measurement: a member device read alone, or the array through a file.
struct ScalingPoint {
  std::string name;  // "loop0", or "array"
  std::string path;  // "/dev/loop0", or the file read
  uint64_t ios = 0, bytes = 0;
  double elapsed_s = 0;
  double iops = 0, bytes_per_s = 0;  // measured, B/s
  double p50_us = 0, p99_us = 0;     // request latency, µs
  std::optional<EngineKind> engine;  // none: not measured (interrupted first)
  NominalSpeed nominal;              // members: their disk's interface ceiling (nominal, not measured)
  std::string error;                 // "" when measured
};

struct ScalingResult {
  std::string raid_kind;  // "md" | "btrfs" | "" (one device)
  std::string level;      // "raid0", ... ; "" for one device
  std::vector<ScalingPoint> members;
  ScalingPoint array;
  bool array_file_created = false;           // ioprobe laid the file out (and removed it after)
  double sum_bytes_per_s = 0, sum_iops = 0;  // over the members measured without error
  double efficiency = 0;                     // array bytes_per_s / sum_bytes_per_s; 0 when either is missing
  ScalingExpectation expectation;
  double expected_bytes_per_s = 0;  // expectation.factor x sum (0 unknown)
  bool interrupted = false;
  std::vector<std::string> notes;
};

/// The member devices under `target`: its RAID members, or the one device under the
/// filesystem. Throws UsageError when the target has no block device (tmpfs, network, FUSE).
std::vector<std::string> scaling_members(const TargetInfo& target);

/// Efficiency and expectation from measured points (a pure function; tests feed it tables).
void finish_scaling(ScalingResult& r);

/// Runs the measurements: each member, then the array. `progress(text)` is called before each.
/// Throws UsageError for a target without devices, a member that is not a readable block device
/// (naming /dev/NAME and what to do), or a refused --file; IoError for failed system calls.
ScalingResult run_scaling(const ScalingConfig& cfg, const TargetInfo& target,
                          const std::function<void(const std::string&)>& progress);

}  // namespace ioprobe
