// The result document's sections for a checkpoint across hosts (checkpoint/cluster_parts.hpp):
//   cluster {launcher, hosts, mpi_ranks, ckpt_ranks, dir_placement ("shared" | "node-local"),
//            restore_placement (which host read whose shards), restores_from_other_host,
//            merge (the rule, in words), save_duration_max_s, save_bytes, save_bytes_per_s
//            (bytes / the slowest rank's time to durable: MLPerf Storage's rule)}
//   hosts   [{hostname, host_index, mpi_ranks [int], ckpt_ranks [int], results {save_bytes,
//             save_duration_max_s, time_to_durable_s, save_bytes_per_s (bytes / time_to_durable_s),
//             min_rank_bytes_per_s, restore_bytes, restore_duration_max_s, restore_bytes_per_s,
//             restored_from [hostnames], restore_device_io (device_io: the host's devices over
//             the restore window, reference_bytes = the bytes of the shard files it restored),
//             restore_served_from ("device" | "page cache" | "mixed" | "unknown"),
//             save_device_io (device_io: the host's devices over the save window, reference_bytes =
//             the bytes on disk of the files its ranks published)}}]
// The document's "checkpoint" section then holds every rank's rows and the merged figures.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/cluster_parts.hpp"
#include "report/checkpoint_document.hpp"

namespace ioprobe {

/// A raw write run as a short string, and back (for the exchange after each run).
std::string encode_raw_write(const checkpoint::RawWriteResult& r);
checkpoint::RawWriteResult decode_raw_write(const std::string& text);

nlohmann::json checkpoint_cluster_json(const checkpoint::CheckpointCluster& c, const std::string& launcher,
                                       const std::string& dir_placement, const std::string& restore_placement);
nlohmann::json checkpoint_hosts_json(const checkpoint::CheckpointCluster& c);

/// The restore's device accounting of the whole job into the document's checkpoint section `ck`:
/// restore.device_io (every host's devices over the restore window, added, against the bytes of
/// every shard file restored) and restore.served_from ("device", "page cache", "mixed", "unknown").
void add_cluster_restore_device_io(CheckpointSection& ck, const checkpoint::CheckpointCluster& c);

/// The save's device accounting of the whole job into the document's checkpoint section `ck`:
/// save.device_io (every host's devices over the save window, added, each host counted once, against
/// save.bytes_on_disk, with logical_bytes and written_over_logical, and a "scope" saying so).
void add_cluster_save_device_io(CheckpointSection& ck, const checkpoint::CheckpointCluster& c);

/// Adds "host" to every rank row of the save in `ck` (the document's checkpoint section) and
/// "shard_rank", "read_on_host", "written_on_host" to every restore row.
void annotate_checkpoint_ranks(CheckpointSection& ck, const checkpoint::CheckpointCluster& c);

/// The "Hosts" section of a checkpoint's text report from the document's cluster and hosts
/// sections ("" when either is null: a single-host document).
std::string render_checkpoint_hosts_text(const nlohmann::json& cluster, const nlohmann::json& hosts);

}  // namespace ioprobe
