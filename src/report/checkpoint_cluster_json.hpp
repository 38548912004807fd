// The sections of a checkpoint across hosts (report/checkpoint_cluster_section.hpp: cluster and
// hosts) built from the merged processes' parts (checkpoint/cluster_parts.hpp), the job's device
// accounting added into the checkpoint section, and the hosts' text. The document's "checkpoint"
// section then holds every rank's rows and the merged figures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checkpoint/cluster_parts.hpp"
#include "report/checkpoint_document.hpp"

namespace ioprobe {

/// A raw write run as a short string, and back (for the exchange after each run).
std::string encode_raw_write(const checkpoint::RawWriteResult& r);
checkpoint::RawWriteResult decode_raw_write(const std::string& text);

/// The cluster section of the merged job `c` (the save's rate null when it failed).
CheckpointClusterSection checkpoint_cluster_section(const checkpoint::CheckpointCluster& c, const std::string& launcher,
                                                    const std::string& dir_placement,
                                                    const std::string& restore_placement);
/// The host rows of `c`, by host index: each host's save window device I/O against the bytes on
/// disk of the files its ranks published, its restore's against the shard files it read.
std::vector<CheckpointHostSection> checkpoint_host_sections(const checkpoint::CheckpointCluster& c);

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
/// sections ("" without a cluster section: a single-host document).
std::string render_checkpoint_hosts_text(const std::optional<CheckpointClusterSection>& cluster,
                                         const std::vector<CheckpointHostSection>& hosts);

}  // namespace ioprobe
