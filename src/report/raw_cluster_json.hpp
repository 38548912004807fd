// The result document's sections for a multi-host `ioprobe raw` run (cluster/raw_parts.hpp):
//   cluster {launcher, hosts, mpi_ranks, start_skew_s (upper bound, s), files ("one per process:
//            FILENAME.rank<R>" or "the block device, read by every process"),
//            merge ("elapsed = max over processes from a common start barrier; I/Os and bytes summed;
//                    latency histograms added bucket by bucket")}
//   hosts   [{hostname, host_index, mpi_ranks [int], files [string], target {fs_type, device,
//             memory_backed}, straggler, device_io (report/device_io_report.hpp: the host's own
//             devices, counted once per host, against its bytes; cold_read_nothing, cold_read_short),
//             results {ios, bytes, errors, elapsed_s, first_done_s,
//             last_done_s, iops, bytes_per_s, latency_us {p50, p99, p999, count}, cpu_s}}]
// raw.results of such a document are the merged ones (IOPS and B/s = merged totals / max elapsed).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cluster/raw_parts.hpp"

namespace ioprobe {

nlohmann::json raw_cluster_json(const cluster::ClusterRaw& c, const std::string& launcher, int host_count,
                                const std::string& files);
/// The "hosts" rows; each row's device_io is host_device_io_json of the host's accounting against
/// the bytes it read (`write`: written; a read's cold_read_* flags only when `cold`, i.e. O_DIRECT).
nlohmann::json raw_hosts_json(const cluster::ClusterRaw& c, bool write, bool cold);

/// The "Hosts" section of a raw document's text report ("" for a single-host document).
std::string render_raw_hosts_text(const nlohmann::json& doc);

}  // namespace ioprobe
