// The sections several kinds of result document share, as typed values: the header's host, the
// storage target, the filesystems the dataset lives on (targets) and the dataset. One struct, one
// writer (`*_json`) and one strict reader (`*_from_json`) each; every document codec uses them,
// so a section reads back the same whichever document carries it.
//
// Readers are strict (core/json_field.hpp): a missing or mistyped field is refused with
// UsageError naming `where` and the field's path ("'a.json'.target.fs_type: expected a string,
// found 7"). Fields a writer leaves out by design (a walked dataset has no generator settings, a
// probe's target no engine) are std::optional and read when present.
//
// Keys (reports/result.schema.json):
//   host     {hostname, kernel, cpus_online, cpus_allowed, cpu_list, memory_bytes,
//             cgroup_memory_limit_bytes, cgroup_memory_limit_source}
//   target   report/document.hpp's target keys; tune and capacity add {cache, direct, cache_detail,
//            engine, engine_reason}; run adds those and {numa, numa_reason, epoch_resident_fraction,
//            residency_method, epoch_source, cache_budget (a warm run checked against its budget)}
//   targets  [target keys + {files, bytes, files_fraction, bytes_fraction (null: sizes unknown)}]
//   dataset  {preset, root, files, bytes, kind, records_per_file, action, enumerate_s; generated:
//            description, model, dirs, full_files, size_dist, size_mean_bytes, size_stdev_bytes, seed,
//            generate_s, content; ...} (DatasetSection below)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine_kind.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"

namespace ioprobe {

/// The host a document was written on (topology/host.hpp HostInfo, as written).
struct HostSection {
  std::string hostname;  // escaped (core/text.hpp escape_bytes)
  std::string kernel;    // uname -r
  int cpus_online = 0;
  int cpus_allowed = 0;                    // CPUs this process could run on
  std::string cpu_list;                    // those CPUs, "0-7,16"
  uint64_t memory_bytes = 0;               // RAM, B
  uint64_t cgroup_memory_limit_bytes = 0;  // B; 0: no limit
  std::string cgroup_memory_limit_source;  // the cgroup file that set it, "" when none
};
HostSection host_section(const HostInfo& h);
nlohmann::json host_section_json(const HostSection& h);
HostSection host_section_from_json(const nlohmann::json& j, const std::string& where);

/// One layer of the device chain, outermost first (partition -> disk, loop -> backing file, ...).
struct TargetDeviceLayer {
  std::string name;    // escaped
  std::string kind;    // "partition" | "disk" | "loop" | "dm" | ...
  std::string detail;  // escaped
};

/// The RAID array under the target ("" kind: none).
struct TargetRaid {
  std::string kind;                  // "md" | "btrfs" | ""
  std::string level;                 // "raid0", "single", ...
  std::string metadata_level;        // btrfs metadata profile, "" otherwise
  std::vector<std::string> members;  // escaped device names; member_count is their number
};

/// How a run, tune or capacity read the target: the cache mode, O_DIRECT and the engine.
struct TargetReadSetting {
  std::string cache;  // "cold" | "warm"
  bool direct = false;
  std::string cache_detail;  // what the cache mode did, in words
  EngineKind engine = EngineKind::kPsync;
  std::string engine_reason;
};

/// A warm run's page-cache budget, checked before it started.
struct TargetCacheBudget {
  uint64_t bytes = 0;  // the budget, B
  std::string source;  // "RAM" or the cgroup file that set it
  uint64_t dataset_bytes = 0;
  bool fits = false;  // dataset_bytes <= bytes
};

/// What one run found about the target while it read: NUMA placement and residency per epoch.
struct TargetRunFacts {
  std::string numa;  // the placement, "none" or "node:N"
  std::string numa_reason;
  std::vector<double> epoch_resident_fraction;  // 0..1 of the dataset in the page cache before each epoch
  std::string residency_method;                 // how it was measured
  std::vector<std::string> epoch_source;        // per epoch: "device" | "page cache" | "mixed"
  std::optional<TargetCacheBudget> cache_budget;
};

/// The storage target (topology/target.hpp TargetInfo as written: paths and names escaped,
/// unknown figures null, i.e. nullopt here) and what a run kind adds to it.
struct TargetSection {
  std::string path;
  std::string fs_type;
  std::string fs_magic;  // "0x..."
  std::string mount_point;
  std::string mount_source;
  std::string mount_fstype;
  std::string mount_options;
  std::string device;
  std::string disk;
  std::vector<TargetDeviceLayer> device_chain;
  std::string backing_file;
  // Absent from documents written before loop devices' backing devices were recorded; both keys
  // are written, or neither (loop_keys false).
  bool loop_keys = true;
  std::string backing_device;
  std::optional<bool> loop_direct_io;  // null: no loop device, or not known
  TargetRaid raid;
  std::optional<int> rotational;  // 1 spinning, 0 solid state
  std::optional<uint32_t> logical_block_bytes, physical_block_bytes;
  std::optional<uint32_t> dio_mem_align_bytes, dio_offset_align_bytes;
  std::optional<int> nr_requests;
  std::string scheduler;
  std::string device_model;
  bool nvme = false;
  int device_numa_node = -1;        // -1: none or unknown
  std::string o_direct;             // "accepted" | "refused" | "not probed"
  std::string o_direct_errno;       // "EINVAL", "" when accepted
  std::string o_direct_probe_file;  // escaped
  bool memory_backed = false;       // tmpfs, ramfs: RAM, not a device
  bool network = false;             // nfs, cifs, fuse.sshfs, ...
  uint64_t free_bytes = 0;          // B
  bool free_bytes_known = true;     // false: the filesystem reports no size
  uint64_t free_inodes = 0;
  std::vector<std::string> warnings;         // escaped
  std::optional<TargetReadSetting> reading;  // run, tune, capacity
  std::optional<TargetRunFacts> run;         // run only
};

/// Which keys a document kind's target carries: probed (probe, checkpoint, scaling, replay, and
/// each entry of targets), read (tune, capacity: + TargetReadSetting), run (+ TargetRunFacts).
enum class TargetKeys { kProbed, kRead, kRun };

TargetSection target_section(const TargetInfo& t);
nlohmann::json target_section_json(const TargetSection& t);
/// Strict; the keys of `keys` are required, those of a larger kind read when present.
TargetSection target_section_from_json(const nlohmann::json& j, const std::string& where,
                                       TargetKeys keys = TargetKeys::kProbed);

/// One filesystem the dataset lives on, and its share of the files and bytes read.
struct TargetShareSection {
  TargetSection target;
  uint64_t files = 0;
  uint64_t bytes = 0;                    // B
  double files_fraction = 0;             // 0..1 of all files
  std::optional<double> bytes_fraction;  // 0..1 of all bytes; null: no sizes known (a --data walk)
};
std::vector<TargetShareSection> target_share_sections(const std::vector<TargetShare>& targets);
nlohmann::json targets_section_json(const std::vector<TargetShareSection>& targets);
/// Strict: `j` must be an array; each entry's path is "WHERE[i]".
std::vector<TargetShareSection> targets_section_from_json(const nlohmann::json& j, const std::string& where);

/// One host's share of a dataset several hosts generated together.
struct DatasetGenerationHost {
  std::string hostname;
  int host_index = 0;
  uint64_t first_file = 0;  // its first file's number in the dataset's list
  uint64_t files = 0;
  uint64_t bytes = 0;     // B
  double generate_s = 0;  // s spent writing
};

/// A generation split over hosts (a shared directory): who wrote what.
struct DatasetGeneration {
  std::string action;  // "generated across N hosts"
  std::string split;   // how the files were split, in words
  double elapsed_s = 0;
  std::vector<DatasetGenerationHost> hosts;
};

/// The dataset that was read: generated from a preset, walked (--data) or listed (--file-list).
struct DatasetSection {
  std::string preset;                      // the preset, "custom", or "none" (the user's files)
  std::string root;                        // escaped directory or file list
  uint64_t files = 0;                      // files (shards, token files) listed
  uint64_t bytes = 0;                      // B of one epoch (run: measured when sizes are unknown)
  std::optional<std::string> bytes_basis;  // how bytes was found, when not from every file's size
  std::string kind;                        // "files" | "sharded" | "token"
  uint64_t records_per_file = 1;
  std::string action;  // "generated", "reused", "walked", "file list", ...
  double enumerate_s = 0;
  // Generated datasets only.
  std::optional<std::string> description, model;
  std::optional<uint64_t> dirs, full_files;  // full_files: the real dataset's file count, 0 not stated
  std::optional<std::string> size_dist;
  std::optional<uint64_t> size_mean_bytes, size_stdev_bytes, seed;
  std::optional<double> generate_s;
  std::optional<std::string> content;            // "random" | "jpeg"
  std::optional<uint64_t> source_files;          // reused from a larger dataset of this many files
  std::optional<uint64_t> jpeg_padding_bytes;    // generated JPEG content
  std::optional<uint64_t> records;               // sharded and token: records in all files
  std::optional<uint64_t> seq_len, token_bytes;  // token
  std::optional<DatasetGeneration> generation;   // generated by several hosts together
  // The user's files only.
  std::optional<uint64_t> skipped, duplicates;  // a walk's skipped and repeated entries
  std::optional<uint64_t> files_missing;        // a file list's paths that could not be read
};
nlohmann::json dataset_section_json(const DatasetSection& d);
DatasetSection dataset_section_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace ioprobe
