// A multi-host run's results: what each process sends to rank 0 after its loader finished, and
// what rank 0 makes of them (the merged result, one row per host, the cluster facts).
//
// Merge rules (IOR's rank-0 reduce, fio's "All clients", MLPerf Storage): every process measures
// its own elapsed time on its monotonic clock from the common start barrier, and the cluster's
// duration is the maximum over processes; samples and bytes add, so cluster throughput = total /
// that duration; latency percentiles come from histograms merged by adding bucket counts (never
// averaged); no wall clocks are compared across hosts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/loader_result.hpp"
#include "topology/device_io.hpp"

namespace ioprobe::cluster {

/// One process's share of a run, as sent to rank 0.
struct ProcessPart {
  int rank = 0;        // MPI rank
  int host_index = 0;  // comm::Comm::host_index()
  std::string hostname;
  uint32_t gpu_ranks = 0;       // GPU ranks (DataLoaders) this process ran
  uint32_t first_rank = 0;      // the job-wide rank of its first GPU rank
  double start_skew_s = 0;      // CommStepSync::start_skew_s()
  uint64_t step_exchanges = 0;  // CommStepSync::rounds()
  double exchange_s = 0;        // CommStepSync::exchange_s()
  double init_s = 0;            // comm::Comm::init_s(): MPI_Init and the job's set-up
  double setup_s = 0;           // from the Comm ready to leaving the run's start barrier (CommStepSync::started_ns())
  double finish_wait_s = 0;     // CommStepSync::finish_wait_s()
  int cpus_allowed = 0;         // the host's CPUs this process may use
  uint64_t memory_bytes = 0;    // the host's RAM
  uint64_t cgroup_memory_limit_bytes = 0;
  nlohmann::json target;  // the run document's "target" section as this process saw it
  LoaderResult result;
  DeviceIo device_io;                      // its host's devices over the run (every process of a host
                                           // counts the same devices)
  std::vector<DeviceIo> device_io_epochs;  // the same, epoch by epoch
};

/// nlohmann's hooks (cluster/gather.hpp): every field, the result by loader/loader_result_json.hpp.
/// from_json is strict: a missing or mistyped field throws UsageError naming its path ("part.result.samples").
void to_json(nlohmann::json& j, const ProcessPart& p);
void from_json(const nlohmann::json& j, ProcessPart& p);

/// One host: the processes that share its memory, merged.
struct HostRow {
  std::string hostname;
  int host_index = 0;
  std::vector<int> mpi_ranks;
  uint32_t gpu_ranks = 0;
  uint64_t samples = 0, bytes = 0, errors = 0;
  double first_done_s = 0;   // the host's earliest process to finish, from the common start
  double last_done_s = 0;    // its latest (the host's elapsed time)
  double samples_per_s = 0;  // samples / last_done_s
  double bytes_per_s = 0;
  double file_latency_p99_us = 0;
  double au_min = 0;  // lowest accelerator utilization of its GPU ranks (0..1)
  double cpu_s = 0;   // user + system CPU of its processes
  int cpus_allowed = 0;
  uint64_t memory_bytes = 0;
  uint64_t cgroup_memory_limit_bytes = 0;
  nlohmann::json target;                   // its first process's target section
  DeviceIo device_io;                      // its first process's device accounting (the host's devices, counted once)
  std::vector<DeviceIo> device_io_epochs;  // the same, epoch by epoch
  bool straggler = false;                  // see merge_parts
};

/// What coordinating the processes cost (the document's cluster.coordination), each measured, in
/// seconds on the named process's monotonic clock.
struct Coordination {
  double init_s = 0;                   // MPI_Init + host grouping + watchdog start (make_comm): max over processes
  double setup_s = 0;                  // Comm ready -> run's start barrier left: preflight, option agreement, dataset
                                       // placement and check on every host; max over processes
  uint64_t step_exchanges = 0;         // DDP step exchanges (one 16-byte max-reduction each), finish()'s included
  double step_exchange_s = 0;          // time in them, max over processes (waits for the slowest host included)
  double finish_wait_s = 0;            // of that: after a process's ranks finished, answering until all did; max
  double gather_s = 0;                 // rank 0: outcomes shared + results reduced over the tree + merged
  uint64_t gather_bytes_at_rank0 = 0;  // bytes rank 0 received in the results' reduction
  std::string gather_method;           // how the results reached rank 0 ("binomial tree ...")
};

struct ClusterRun {
  LoaderResult merged;         // every process's result merged (LoaderResult::merge)
  std::vector<HostRow> hosts;  // by host index
  int mpi_ranks = 0;
  double start_skew_s = 0;                 // max over processes
  uint64_t step_exchanges = 0;             // max over processes (each takes part in every exchange)
  double exchange_s = 0;                   // max over processes of the seconds spent in step exchanges
  uint64_t memory_bytes = 0;               // RAM summed over hosts, one entry per host
  int cpus_allowed = 0;                    // summed over hosts
  std::vector<std::string> warnings;       // stragglers, duplicate hosts, targets that differ
  DeviceIo device_io;                      // the hosts' accounting added (each host's devices once, DeviceIo::merge)
  std::vector<DeviceIo> device_io_epochs;  // the same, epoch by epoch
  Coordination coordination;
};

/// How far behind the fastest host a host may finish (or, for a run cut by --duration, how far
/// below the fastest host's samples/s it may deliver) before it is flagged a straggler: 10%.
constexpr double kStragglerMargin = 0.10;

/// Merges the parts (one per process, any order) into the cluster's result and host rows, and
/// flags stragglers and hosts whose RAM reads as zero or whose targets differ: the flat form of
/// cluster/run_partial.hpp's tree (partial_of each part in rank order, merged, finish_partial).
ClusterRun merge_parts(std::vector<ProcessPart> parts);

}  // namespace ioprobe::cluster
