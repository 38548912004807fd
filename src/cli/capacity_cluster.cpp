#include "cli/capacity_cluster.hpp"

#include <fmt/format.h>

#include "capacity/point_json.hpp"
#include "cluster/collective.hpp"
#include "cluster/gather.hpp"
#include "report/device_io_report.hpp"

namespace ioprobe::cli {

cluster::PointPart capacity_me(const comm::Comm& comm, int cpus_allowed) {
  cluster::PointPart me;
  me.rank = comm.rank();
  me.host_index = comm.host_index();
  me.hostname = comm.hostname();
  me.cpus_allowed = cpus_allowed;
  return me;
}

std::vector<std::string> host_names(comm::Comm& comm, std::vector<int>* host_of_rank, double timeout_s) {
  const std::vector<std::string> idx = comm.allgather(std::to_string(comm.host_index()), "capacity: the hosts",
                                                      timeout_s);
  const std::vector<std::string> names = comm.allgather(comm.hostname(), "capacity: the hosts", timeout_s);
  std::vector<std::string> by_host(static_cast<size_t>(comm.host_count()));
  host_of_rank->clear();
  for (size_t r = 0; r < idx.size(); ++r) {
    const int h = std::stoi(idx[r]);
    host_of_rank->push_back(h);
    if (h >= 0 && static_cast<size_t>(h) < by_host.size() && by_host[static_cast<size_t>(h)].empty())
      by_host[static_cast<size_t>(h)] = names[r];
  }
  return by_host;
}

PointAcross capacity_across(comm::Comm& comm, StepSync* sync, double timeout_s, CapacityDeviceIo* devices) {
  PointAcross a;
  a.rank = comm.rank();
  a.sync = sync;
  a.agree_stop = [&comm, timeout_s](int stop) {
    int64_t v = stop;
    comm.allreduce_max(&v, 1, "capacity: agree on the next point", timeout_s);
    return static_cast<int>(v);
  };
  a.gather = [&comm, timeout_s, devices](const std::string& error,
                                         const cluster::PointPart& mine) -> std::optional<cluster::PointMerge> {
    const DeviceIo io = devices->after_run();
    // The outcome first (small), as a multi-host run does: a failed process sends no result.
    cluster::share_outcomes(comm, error.empty() ? "" : fmt::format("{} {}", static_cast<int>(kExitFailure), error),
                            "capacity: gather the outcomes", timeout_s, "capacity search");
    cluster::PointPart part = mine;
    part.device_io = io;
    std::vector<cluster::PointPart> parts = cluster::gather_parts(comm, part, "capacity: gather a point's results",
                                                                  timeout_s);
    if (comm.rank() != 0) return std::nullopt;
    std::map<int, bool> counted;  // a host's devices once: its lowest rank's accounting
    for (const auto& p : parts) {
      if (!counted[p.host_index]) devices->add(p.point_gpus, p.host_index, p.hostname, p.device_io);
      counted[p.host_index] = true;
    }
    return cluster::merge_point_parts(std::move(parts));
  };
  a.share = [&comm, timeout_s](const CapacityPoint& p) {
    return cluster::broadcast_part(comm, p, "capacity: share the point", timeout_s);
  };
  return a;
}

CapacityClusterSection capacity_cluster_section(const comm::Comm& comm, const std::vector<std::string>& host_names,
                                                const std::string& placement, const std::string& placement_how) {
  return {.launcher = comm.launcher(),
          .hosts = comm.host_count(),
          .hostnames = host_names,
          .mpi_ranks = comm.size(),
          .dataset_placement = placement,
          .dataset_placement_how = placement_how,
          .split = "each point's accelerators evenly over the hosts (the first hosts by host index one more when "
                   "they do not divide), then each host's share evenly over its processes in rank order",
          .merge = "every process runs its share of each repeat at once from a common start barrier, as one DDP job; "
                   "samples and bytes summed, duration = max over processes, latency histograms added, AU min over "
                   "every GPU rank; the client judged per host; rank 0 decides each next point for all processes"};
}

}  // namespace ioprobe::cli
