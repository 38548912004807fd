// `ioprobe run` on many hosts: the steps of cmd_run that differ when mpirun / srun started one
// ioprobe per host (cluster/ does the work; this file wires it to the run's configuration).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/run_config.hpp"
#include "cli/run_plan.hpp"
#include "cli/run_prepare.hpp"
#include "cluster/placement.hpp"
#include "cluster/run_parts.hpp"
#include "comm/comm.hpp"
#include "loader/loader_run.hpp"
#include "report/run_document.hpp"
#include "topology/host.hpp"

namespace ioprobe::cli {

/// Prepares the dataset on every process in the order its placement needs (cluster/placement.hpp)
/// and checks that every host sees the same files. Returns the placement. Throws JobFailure
/// when a host fails or differs; with a LocalComm it is prepare_dataset(c).
cluster::Placement prepare_dataset_on_hosts(comm::Comm& comm, const RunConfig& c, PreparedData& data);

/// What the preflight on every process gives a command: its plan, read-only from then on, and
/// where the dataset was placed.
struct HostsPlan {
  RunPlan plan;
  cluster::Placement placement;
};

/// The run's preflight (prepare_run) on every process, in the order the dataset's placement
/// needs, then the same checks as prepare_dataset_on_hosts. A failure or an interrupted
/// generation on any process throws JobFailure on all. With a LocalComm it is prepare_run(c, o)
/// (the placement empty).
HostsPlan prepare_run_on_hosts(comm::Comm& comm, const RunConfig& c, const PrepareOptions& o = {});

/// Sends this process's result to rank 0 and, on rank 0, merges every process's. A process
/// whose loader failed sends its error instead: then every rank throws JobFailure naming the
/// host. `lr` on rank 0 becomes the merged result; `doc` gets its cluster and hosts sections there
/// and the cluster's warnings.
/// Returns the cluster's merge (meaningful on rank 0 only).
cluster::ClusterRun gather_run(comm::Comm& comm, const std::string& loader_error, LoaderResult& lr,
                               const cluster::ProcessPart& mine, const cluster::Placement& placement, RunDocument& doc);

/// The exit code rank 0 decided, on every rank.
int share_exit_code(comm::Comm& comm, int rc);

}  // namespace ioprobe::cli
