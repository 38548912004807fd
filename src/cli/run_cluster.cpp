#include "cli/run_cluster.hpp"

#include <fmt/format.h>

#include "cluster/collective.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "report/cluster_json.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

cluster::Placement prepare_dataset_on_hosts(dist::Comm& comm, const RunConfig& c, PreparedData& data) {
  if (!comm.multi()) {
    data = prepare_dataset(c);
    return {};
  }
  const bool user_files = !c.data_dir.empty() || !c.file_list.empty();
  cluster::Placement placement;
  if (!user_files) placement = cluster::detect_generated(comm, c.dir);
  cluster::prepare_in_order(comm, user_files ? cluster::Placement{"shared", ""} : placement,
                            [&] { data = prepare_dataset(c); });
  if (user_files) {
    std::string fs;
    bool network = false;
    cluster::on_every_host(comm, "probe the dataset's filesystem", [&] {
      TargetInfo t = probe_target(data.target_path, /*allow_temp_file=*/false);
      fs = t.fs_type;
      network = t.network;
    });
    placement = cluster::detect_user_files(comm, fs, network);
  }
  size_t known = 0;
  const uint64_t bytes = data.index.total_known_bytes(&known);
  cluster::check_same_dataset(
      comm, fmt::format("{} files, {} bytes{}", data.index.size(), bytes, known < data.index.size() ? " (sizes partly unknown)" : ""),
      "dataset");
  return placement;
}

cluster::ClusterRun gather_run(dist::Comm& comm, const std::string& loader_error, LoaderResult& lr,
                               const cluster::ProcessPart& mine, const cluster::Placement& placement,
                               nlohmann::json& doc) {
  cluster::ClusterRun cr;
  // The outcome first (small), then the results: a failed process sends no result.
  const std::vector<std::string> outcomes = comm.allgather(loader_error, "gather the outcomes", 60);
  const std::vector<std::string> hosts = comm.allgather(comm.hostname(), "gather the outcomes", 60);
  cluster::raise_failures(comm, outcomes, hosts);
  const std::vector<std::string> parts = comm.gather(cluster::encode_part(mine), "gather the results", 300);
  if (comm.rank() != 0) return cr;
  std::vector<cluster::ProcessPart> decoded;
  for (const auto& p : parts) decoded.push_back(cluster::decode_part(p));
  cr = cluster::merge_parts(std::move(decoded));
  lr = cr.merged;
  doc["cluster"] = cluster_json(cr, comm.launcher(), comm.host_count(), placement.kind, placement.how);
  doc["hosts"] = hosts_json(cr);
  for (const auto& w : cr.warnings) doc["warnings"].push_back(w);
  return cr;
}

int share_exit_code(dist::Comm& comm, int rc) {
  if (!comm.multi()) return rc;
  return std::stoi(comm.broadcast(std::to_string(rc), "share the exit code", 60));
}

}  // namespace ioprobe::cli
