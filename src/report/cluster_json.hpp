// The result document's sections for a multi-host run (cluster/run_parts.hpp):
//   cluster {launcher, hosts, mpi_ranks, gpu_ranks, start_skew_s (upper bound, seconds),
//            step_exchanges, step_exchange_s (max over processes; waits for the slowest host included),
//            coordination {init_s, setup_s, step_exchanges, step_exchange_s, finish_wait_s, gather_s,
//                          gather_bytes_at_rank0, gather_method} (cluster::Coordination: seconds, bytes),
//            memory_bytes (summed once per host), cpus_allowed (summed over hosts),
//            dataset_placement ("shared" | "node-local"), dataset_placement_how,
//            merge ("duration = max over processes from a common start barrier; bytes and samples
//                    summed; latency histograms added bucket by bucket")}
//   hosts   [{hostname, host_index, mpi_ranks [int], gpu_ranks, target {fs_type, device, direct,
//             memory_backed, cache, engine}, memory_bytes, cgroup_memory_limit_bytes, cpus_allowed,
//             straggler, results {samples, bytes, errors, samples_per_s, bytes_per_s,
//             first_done_s, last_done_s, file_latency_p99_us, au_min, cpu_s}}]
// The top-level "results" of such a document are the merged ones.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cluster/run_parts.hpp"

namespace ioprobe {

nlohmann::json cluster_json(const cluster::ClusterRun& c, const std::string& launcher, int host_count,
                            const std::string& placement, const std::string& placement_how);
nlohmann::json hosts_json(const cluster::ClusterRun& c);

/// The "Hosts" section of a run's text report from its cluster and hosts sections (cluster_json,
/// hosts_json); `elapsed_s` the merged run's elapsed time (s), for the coordination's share.
std::string render_hosts_text(const nlohmann::json& cluster, const nlohmann::json& hosts, double elapsed_s);

}  // namespace ioprobe
