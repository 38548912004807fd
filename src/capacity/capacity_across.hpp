// One point of the capacity search across the processes of a multi-host job: the point's N
// emulated accelerators spread over the hosts (cluster/capacity_point.hpp split_gpus), every
// process running its share at once from a common start barrier as one DDP job (the step
// exchange of loader/step_barrier.hpp, as `tune` across hosts runs each setting), each repeat's
// parts merged on rank 0 into the job's figures and one row per host, the client judged per host,
// and rank 0's summary of the point handed to every process so that each one's search takes the
// same next step. The transport is given as callbacks (cli/capacity_cluster.hpp wires them to a
// comm::Comm); this file knows no Comm.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "capacity/capacity_run.hpp"
#include "capacity/search.hpp"
#include "cluster/capacity_point.hpp"
#include "dataset/file_index.hpp"
#include "dataset/record_layout.hpp"
#include "loader/config.hpp"
#include "loader/step_barrier.hpp"
#include "topology/numa.hpp"

namespace ioprobe {

struct PointAcross {
  int rank = 0;                   // this process's MPI rank
  std::vector<int> host_of_rank;  // host index of every MPI rank
  StepSync* sync = nullptr;       // the step exchange across processes (required)
  /// Given this process's stop code (0 go on, 1 budget spent, 2 interrupted), the highest over
  /// all processes, the same on every process. Called before each point and after each repeat.
  std::function<int(int)> agree_stop;
  /// After a repeat: this process's outcome ("" or the error that stopped it) and part. Throws on
  /// every process when any process failed (naming its host and the reason); on rank 0 returns
  /// the parts merged (cluster::merge_point_parts), elsewhere nullopt.
  std::function<std::optional<cluster::PointMerge>(const std::string& error, const cluster::PointPart& mine)> gather;
  /// Rank 0's summary of the point on every process (rank 0 passes it; the others' argument is
  /// ignored).
  std::function<CapacityPoint(const CapacityPoint&)> share;
};

/// The figures of one repeat for the job (`m.merged` against all `m.gpus` ranks and the hosts'
/// CPUs summed) and for each host (its own ranks and CPUs), as repeat_sample computes them. A host
/// with no GPU rank gets a zero sample. `c`: the repeat's configuration (ranks are replaced). Pure.
struct RepeatAcross {
  RepeatSample cluster;
  std::vector<RepeatSample> hosts;  // by m.hosts order
};
RepeatAcross repeat_across(const cluster::PointMerge& m, const LoaderConfig& c);

/// Summarizes a point's repeats across hosts: each host's repeats into its CapacityHostRow
/// (summarize_repeats on its samples; its client judgement with kClientCpuSaturated and
/// kClientLagMax), then the job's point with the client judged per host (summarize_repeats with
/// the rows). `merges` and `repeats` are parallel (one entry per repeat). Pure.
CapacityPoint summarize_across(uint32_t gpus, const std::vector<cluster::PointMerge>& merges,
                               const std::vector<RepeatAcross>& repeats);

/// Measures `gpus` accelerators over every process of the job: this process runs its share
/// (split_gpus) as GPU ranks first_gpu_ranks[rank].. of a job of `gpus`, o.repeats times. Returns
/// the same point on every process, or nullopt on every process when the budget (rank 0's
/// deadline) leaves no room for the point or a signal stopped a repeat. Throws (every process)
/// when a process failed: what `across.gather` throws.
std::optional<CapacityPoint> measure_point_across(const FileIndex& index, const LoaderConfig& base, uint32_t gpus,
                                                  const PointRunOptions& o, const Topology& topo,
                                                  const RecordLayout* layout, const PointAcross& across,
                                                  const cluster::PointPart& me);

}  // namespace ioprobe
