// The result document's sections for a multi-host run (cluster/run_parts.hpp):
//   cluster {launcher, hosts, mpi_ranks, gpu_ranks, start_skew_s (upper bound, seconds),
//            step_exchanges, step_exchange_s (max over processes; waits for the slowest host included),
//            coordination {init_s, setup_s, step_exchanges, step_exchange_s, finish_wait_s, gather_s,
//                          gather_bytes_at_rank0, gather_method} (cluster::Coordination: seconds, bytes),
//            memory_bytes (summed once per host), cpus_allowed (summed over hosts),
//            dataset_placement ("shared" | "node-local"), dataset_placement_how,
//            merge ("duration = max over processes from a common start barrier; bytes and samples
//                    summed; latency histograms added bucket by bucket"),
//            interrupted (a signal ended every host early; absent from documents written before it)}
//   hosts   [{hostname, host_index, mpi_ranks [int], gpu_ranks, target {fs_type, device, direct,
//             memory_backed, cache, engine}, memory_bytes, cgroup_memory_limit_bytes, cpus_allowed,
//             straggler, device_io (report/device_io_section.hpp HostDeviceIo, with epochs),
//             results {samples, bytes, errors, samples_per_s, bytes_per_s,
//             first_done_s, last_done_s, file_latency_p99_us, au_min, cpu_s}}]
// The top-level "results" of such a document are the merged ones. Each section is a typed value
// with one writer and one strict reader: a missing or mistyped field is refused with UsageError
// naming its path under `where` ("'a.json'.hosts[1].results.samples: missing key ...").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/run_parts.hpp"
#include "engine/engine_kind.hpp"
#include "report/device_io_section.hpp"

namespace ioprobe {

/// A multi-host run's cluster section: how the job was laid out and what coordinating it cost.
struct RunClusterSection {
  std::string launcher;  // "mpirun", "srun", ...
  int hosts = 0;
  int mpi_ranks = 0;
  uint32_t gpu_ranks = 0;   // summed over hosts
  double start_skew_s = 0;  // upper bound, s
  uint64_t step_exchanges = 0;
  double step_exchange_s = 0;  // s, max over processes
  cluster::Coordination coordination;
  uint64_t memory_bytes = 0;      // RAM summed once per host
  int cpus_allowed = 0;           // summed over hosts
  std::string dataset_placement;  // "shared" | "node-local"
  std::string dataset_placement_how;
  std::string merge;                // how the processes' results were merged, in words
  std::optional<bool> interrupted;  // a signal ended every host early
};

/// A host row's target: how the host's first process saw the storage target.
struct RunHostTarget {
  std::string fs_type;
  std::string device;
  bool direct = false;  // O_DIRECT
  bool memory_backed = false;
  std::string cache;                 // "cold" | "warm"
  std::optional<EngineKind> engine;  // none: the host's target named no engine (written "")
};

/// A host row's results: samples, bytes; times in s from the common start; rates over last_done_s.
struct RunHostResults {
  uint64_t samples = 0, bytes = 0, errors = 0;
  double samples_per_s = 0;
  double bytes_per_s = 0;
  double first_done_s = 0;
  double last_done_s = 0;
  double file_latency_p99_us = 0;
  double au_min = 0;  // 0..1
  double cpu_s = 0;   // user + system of its processes
};

/// One host of a multi-host run (cluster::HostRow as the document keeps it).
struct RunHostRow {
  std::string hostname;
  int host_index = 0;
  std::vector<int> mpi_ranks;
  uint32_t gpu_ranks = 0;
  RunHostTarget target;
  uint64_t memory_bytes = 0;
  uint64_t cgroup_memory_limit_bytes = 0;
  int cpus_allowed = 0;
  bool straggler = false;
  HostDeviceIo device_io;  // the host's own devices, with its epochs
  RunHostResults results;
};

/// The cluster section of a merged multi-host run `c` (interrupted left unset).
RunClusterSection run_cluster_section(const cluster::ClusterRun& c, const std::string& launcher, int host_count,
                                      const std::string& placement, const std::string& placement_how);

/// The host rows of `c`; a host is cold when its target section's cache is "cold".
std::vector<RunHostRow> run_host_rows(const cluster::ClusterRun& c);

nlohmann::json run_cluster_json(const RunClusterSection& c);
RunClusterSection run_cluster_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json run_hosts_json(const std::vector<RunHostRow>& hosts);
std::vector<RunHostRow> run_hosts_from_json(const nlohmann::json& j, const std::string& where);

/// The "Hosts" section of a run's text report from its cluster and hosts sections; `elapsed_s`
/// the merged run's elapsed time (s), for the coordination's share.
std::string render_hosts_text(const RunClusterSection& cluster, const std::vector<RunHostRow>& hosts, double elapsed_s);

}  // namespace ioprobe
