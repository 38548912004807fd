// A capacity point across the hosts of a multi-host job (`mpirun ... ioprobe capacity`): how the
// point's emulated accelerators are spread over the processes, and one repeat's per-process
// results merged into the job's and each host's (the same rules as cluster/run_parts.hpp:
// samples and bytes summed, duration = max over processes from the common start barrier,
// histograms added, every GPU rank kept so that AU min is the lowest over all of them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/loader_result.hpp"
#include "topology/device_io.hpp"

namespace ioprobe::cluster {

/// How many of a point's `gpus` emulated accelerators (GPU ranks) each MPI rank runs: first
/// evenly over the hosts (each gets gpus / hosts, the first gpus % hosts hosts by host index one
/// more), then each host's share evenly over its processes in rank order (likewise, the lowest
/// ranks one more). `host_of_rank[r]` is MPI rank r's host index (0..H-1, every index in use).
/// Returns one count per rank, summing to `gpus`; a process may get 0 (fewer accelerators than
/// processes). Throws Error when host_of_rank is empty or its indices are not 0..H-1 all in use.
std::vector<uint32_t> split_gpus(uint32_t gpus, const std::vector<int>& host_of_rank);

/// The job-wide index of each rank's first GPU rank under `split` (prefix sums in rank order), for
/// the DistributedSampler over all of the point's accelerators.
std::vector<uint32_t> first_gpu_ranks(const std::vector<uint32_t>& split);

/// One process's part of one repeat of a point.
struct PointPart {
  int rank = 0;        // MPI rank
  int host_index = 0;  // comm::Comm::host_index()
  std::string hostname;
  int cpus_allowed = 0;     // the host's CPUs this process may use
  uint32_t point_gpus = 0;  // the point (all hosts' accelerators) this process ran
  uint32_t gpu_ranks = 0;   // its own share of them
  LoaderResult result;      // empty (no ranks) when its share is 0
  DeviceIo device_io;       // its host's devices over the repeat (every process of a host counts the same)
};

/// nlohmann's hooks (cluster/gather.hpp): every field, the result by loader/loader_result_json.hpp
/// and the accounting by topology/device_io_json.hpp. from_json is strict: a missing or mistyped
/// field throws UsageError naming its path ("point part.result.samples").
void to_json(nlohmann::json& j, const PointPart& p);
void from_json(const nlohmann::json& j, PointPart& p);

/// One host's share of a repeat: its processes merged.
struct PointHost {
  std::string hostname;
  int host_index = 0;
  std::vector<int> mpi_ranks;
  uint32_t gpu_ranks = 0;
  int cpus_allowed = 0;  // its first process's
  LoaderResult result;   // its processes' results merged (empty when it ran no GPU rank)
};

struct PointMerge {
  uint32_t gpus = 0;             // the point every process ran
  LoaderResult merged;           // every process's result merged (LoaderResult::merge)
  std::vector<PointHost> hosts;  // by host index
  int cpus_allowed = 0;          // summed over hosts
};

/// Merges one repeat's parts (one per process, any order). Throws Error when the parts disagree
/// on the point (a process ran another GPU count: the processes left the common sequence) or
/// their GPU ranks do not add up to it, naming the ranks.
PointMerge merge_point_parts(std::vector<PointPart> parts);

}  // namespace ioprobe::cluster
