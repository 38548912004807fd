// A checkpoint document's cluster and hosts sections (a checkpoint across hosts) as typed values,
// one writer and one strict reader each; report/checkpoint_cluster_json.hpp builds them from the
// merged processes' parts (checkpoint/cluster_parts.hpp) and renders them as text.
//
// Keys:
//   cluster {launcher, hosts, mpi_ranks, ckpt_ranks, dir_placement ("shared" | "node-local"),
//            restore_placement (which host read whose shards), restores_from_other_host (with a
//            restore only), merge (the rule, in words), save_bytes (B), save_duration_max_s and
//            save_bytes_per_s (s, B/s; null when the save failed: bytes / the slowest rank's time
//            to durable, MLPerf Storage's rule)}
//   hosts   [{hostname, host_index, mpi_ranks [int], ckpt_ranks [int], results {save_bytes,
//             save_duration_max_s, time_to_durable_s, save_bytes_per_s (bytes / time_to_durable_s),
//             min_rank_bytes_per_s, save_device_io (when measured: the host's devices over the save
//             window, write_ratio to the bytes on disk of the files its ranks published); with a
//             restore: restore_bytes, restore_duration_max_s, restore_bytes_per_s,
//             restored_from [hostnames], restore_error (when one failed), restore_device_io (the
//             host's devices over the restore window, read_ratio to the bytes of the shard files it
//             restored), restore_served_from ("device" | "page cache" | "mixed" | "unknown")}}]
// Units: bytes in B, times in s, rates in B/s.
// Errors: the readers throw UsageError naming `where` and the field's path
// ("'a.json'.hosts[1].results.save_bytes: expected a non-negative integer in range, found ...").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/device_io_section.hpp"

namespace ioprobe {

/// How a checkpoint across hosts was laid out, and the save merged over every rank.
struct CheckpointClusterSection {
  std::string launcher;  // "mpirun", "srun", ...
  uint64_t hosts = 0;
  int mpi_ranks = 0;
  uint64_t ckpt_ranks = 0;
  std::string dir_placement;                    // "shared" | "node-local"
  std::string restore_placement;                // which host read whose shards, in words
  std::string merge;                            // the rule, in words
  uint64_t save_bytes = 0;                      // logical bytes of every rank
  std::optional<double> save_duration_max_s;    // s, the slowest rank's time to durable; none: the save failed
  std::optional<double> save_bytes_per_s;       // B/s; none: the save failed
  std::optional<int> restores_from_other_host;  // with a restore only: shards read on another host
};

/// A host's restore: the shards its processes read.
struct CheckpointHostRestore {
  uint64_t bytes = 0;  // logical
  double duration_max_s = 0;
  double bytes_per_s = 0;
  std::vector<std::string> restored_from;  // hosts whose shards it read
  std::optional<std::string> error;        // the first error's line, when one failed
  DeviceIoSection device_io;               // read_ratio to the bytes of the shard files restored
  std::string served_from;                 // "device" | "page cache" | "mixed" | "unknown"
};

/// One host's row: its ranks taken together.
struct CheckpointHostSection {
  std::string hostname;
  int host_index = 0;
  std::vector<int> mpi_ranks;
  std::vector<int> ckpt_ranks;  // global checkpoint ranks written on this host
  uint64_t save_bytes = 0;
  double save_duration_max_s = 0;
  double time_to_durable_s = 0;  // its slowest process from the common start to published
  double save_bytes_per_s = 0;   // save_bytes / time_to_durable_s
  double min_rank_bytes_per_s = 0;
  std::optional<DeviceIoSection> save_device_io;  // none: not measured on this host
  std::optional<CheckpointHostRestore> restore;   // none: no restore ran
};

nlohmann::json checkpoint_cluster_section_json(const CheckpointClusterSection& c);
CheckpointClusterSection checkpoint_cluster_section_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json checkpoint_hosts_section_json(const std::vector<CheckpointHostSection>& hosts);
/// Strict: `j` must be an array; each row's path is "WHERE[i]".
std::vector<CheckpointHostSection> checkpoint_hosts_section_from_json(const nlohmann::json& j,
                                                                      const std::string& where);

}  // namespace ioprobe
