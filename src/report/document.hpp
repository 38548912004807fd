// The versioned JSON result document: common header and atomic file writing.
//
// Every command (run, checkpoint, raw, tune, probe) writes one document whose top level is:
//   schema            "ioprobe.result/1"
//   ioprobe_version   e.g. "0.1.0"
//   kind              "run" | "checkpoint" | "raw" | "tune" | "probe" | "scaling"
//   command           the argv, each element escaped with escape_bytes()
//   created_utc       ISO 8601 time of the run's start
//   host              {hostname, kernel, cpus_online, cpus_allowed, cpu_list, memory_bytes, cgroup_memory_limit_bytes}
//   target            {path, fs_type, fs_magic, mount_point, mount_source, mount_fstype, mount_options, device,
//                      disk, device_chain [{name, kind, detail}], backing_file,
//                      raid {kind, level, metadata_level, members, member_count}, rotational (null unknown),
//                      logical_block_bytes, physical_block_bytes, dio_mem_align_bytes, dio_offset_align_bytes,
//                      nr_requests, scheduler, device_model, nvme, device_numa_node (-1 none),
//                      o_direct ("accepted" | "refused" | "not probed"), o_direct_errno ("EINVAL" or ""),
//                      o_direct_probe_file, memory_backed, network, free_bytes, free_inodes, warnings}
//                     Unknown numeric facts are null.
//   partial           true when the run was interrupted (SIGINT/SIGTERM) or stopped early by errors
//   warnings          [string]
// followed by kind-specific sections. Keys are snake_case with the unit in the name.
// The schema is reports/result.schema.json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/document_sections.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"

namespace ioprobe {

constexpr const char* kResultSchema = "ioprobe.result/1";

/// Document header: schema, ioprobe_version, kind, command, created_utc, host.
nlohmann::json document_header(const std::string& kind, const std::vector<std::string>& argv, const HostInfo& host);

/// The host and target sections (report/document_sections.hpp) of probed values.
nlohmann::json host_json(const HostInfo& host);
nlohmann::json target_json(const TargetInfo& target);
/// The "targets" array of run and tune: each filesystem the dataset lives on (target_json) with
/// its share: files, bytes, files_fraction, bytes_fraction (0..1 of all files/bytes read; bytes_fraction
/// null when no size is known, as after a --data walk).
nlohmann::json targets_json(const std::vector<TargetShare>& targets);

/// Writes `doc` (pretty, 2-space indent) to `path` atomically: a temporary file in the same
/// directory, fsync, rename. A failed write leaves no file under `path`. Throws IoError; throws
/// UsageError when `path` holds a file that is not ioprobe's or an ioprobe output of another kind
/// than doc["kind"] (check_replaceable).
void write_json_file(const std::string& path, const nlohmann::json& doc);

/// Reads a result document. Throws UsageError, naming the file and what `report` expects (schema
/// kResultSchema), when it is not one: unreadable, empty, not valid JSON or cut short (with the
/// line, column and byte where parsing failed), not an object, without a schema or another one.
nlohmann::json read_json_file(const std::string& path);

/// The message of a nlohmann::json exception without its "[json.exception.NAME.ID] " (and "parse
/// error at line L, column C: ") prefix, bytes escaped: the part a user can act on.
std::string json_error_text(const std::exception& e);

}  // namespace ioprobe
