// `ioprobe capacity` under mpirun / srun: the capacity search across hosts. Wires
// capacity/capacity_across.hpp to the job's comm::Comm: the stop agreement, each repeat's
// outcome and parts (loader result and the host's device accounting) gathered to rank 0, and rank
// 0's summary of the point handed to every process.
#pragma once

#include <string>
#include <vector>

#include "capacity/capacity_across.hpp"
#include "cli/device_accounting.hpp"
#include "cluster/capacity_point.hpp"
#include "comm/comm.hpp"
#include "loader/step_barrier.hpp"
#include "report/capacity_document.hpp"

namespace ioprobe::cli {

/// The across-hosts callbacks for measure_point_across over `comm` (every collective with the
/// watchdog's `timeout_s`). `devices`: this process's accounting, whose after_run() each repeat's
/// part carries; on rank 0 every host's is added to it (the host's lowest rank's, as the devices of
/// a host are the same for all its processes). A failed process ends the search on every process
/// with JobFailure naming its host, rank and reason (cluster::raise_failures).
PointAcross capacity_across(comm::Comm& comm, StepSync* sync, double timeout_s, CapacityDeviceIo* devices);

/// This process's identity in every part it sends (rank, host, its allowed CPUs).
cluster::PointPart capacity_me(const comm::Comm& comm, int cpus_allowed);

/// The capacity document's "cluster" section: launcher, hosts (with their names), MPI ranks, how
/// each point's accelerators are split and how results are merged, the dataset placement.
CapacityClusterSection capacity_cluster_section(const comm::Comm& comm, const std::vector<std::string>& host_names,
                                                const std::string& placement, const std::string& placement_how);

/// The host names by host index (every process's hostname gathered; a collective).
std::vector<std::string> host_names(comm::Comm& comm, std::vector<int>* host_of_rank, double timeout_s);

}  // namespace ioprobe::cli
