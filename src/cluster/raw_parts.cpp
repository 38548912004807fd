#include "cluster/raw_parts.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/json_field.hpp"
#include "raw/raw_results_json.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe::cluster {

namespace {

// The kind of target a host measured, from its first process's target section (read strictly: a
// missing or mistyped key is refused naming the host and the key).
std::string raw_target_key(const RawHostRow& h) {
  const std::string where = "host " + h.hostname + "'s target";
  return fmt::format("{} {}", json_field<std::string>(h.target, "fs_type", where),
                     json_field<bool>(h.target, "memory_backed", where) ? "RAM" : "");
}

}  // namespace

void to_json(nlohmann::json& j, const RawProcessPart& p) {
  j = {{"rank", p.rank},
       {"host_index", p.host_index},
       {"hostname", p.hostname},
       {"filename", p.filename},
       {"start_skew_s", p.start_skew_s},
       {"target", p.target},
       {"result", raw_results_to_json(p.result)},
       {"device_io", p.device_io}};
}

void from_json(const nlohmann::json& j, RawProcessPart& p) {
  const std::string w = "raw part";
  p.rank = json_field<int>(j, "rank", w);
  p.host_index = json_field<int>(j, "host_index", w);
  p.hostname = json_field<std::string>(j, "hostname", w);
  p.filename = json_field<std::string>(j, "filename", w);
  p.start_skew_s = json_field<double>(j, "start_skew_s", w);
  p.target = json_at(j, "target", w);
  p.result = raw_results_from_json(json_at(j, "result", w), json_path(w, "result"));
  p.device_io = device_io_from_wire(json_at(j, "device_io", w), json_path(w, "device_io"));
}

ClusterRaw merge_raw_parts(std::vector<RawProcessPart> parts, bool time_based) {
  ClusterRaw c;
  std::sort(parts.begin(), parts.end(),
            [](const RawProcessPart& a, const RawProcessPart& b) { return a.rank < b.rank; });
  c.mpi_ranks = static_cast<int>(parts.size());
  std::map<int, RawHostRow> rows;
  std::map<int, std::vector<DeviceIo>> host_io;  // each host's processes' accounting
  for (size_t i = 0; i < parts.size(); ++i) {
    const RawProcessPart& p = parts[i];
    if (i == 0) c.merged = p.result;
    else c.merged.merge(p.result);
    c.start_skew_s = std::max(c.start_skew_s, p.start_skew_s);
    RawHostRow& h = rows[p.host_index];
    const double done = p.result.elapsed_s;
    if (h.mpi_ranks.empty()) {
      h.hostname = p.hostname;
      h.host_index = p.host_index;
      h.target = p.target;
      h.result = p.result;
      h.first_done_s = done;
    } else {
      h.result.merge(p.result);
      h.first_done_s = std::min(h.first_done_s, done);
    }
    h.mpi_ranks.push_back(p.rank);
    h.files.push_back(p.filename);
    host_io[p.host_index].push_back(p.device_io);
    h.last_done_s = h.result.elapsed_s;
  }
  std::map<std::string, int> names;
  std::string first_key;
  bool targets_differ = false;
  std::vector<std::pair<std::string, DeviceIo>> hosts_io;  // each host's devices, counted once for the host
  for (auto& [idx, h] : rows) {
    h.device_io = host_device_io(host_io[idx]);
    hosts_io.emplace_back(h.hostname, h.device_io);
    ++names[h.hostname];
    if (first_key.empty()) first_key = raw_target_key(h);
    else if (raw_target_key(h) != first_key) targets_differ = true;
    c.hosts.push_back(h);
  }
  c.device_io = sum_hosts_device_io(hosts_io);
  for (const auto& [name, n] : names)
    if (n > 1)
      c.warnings.push_back(fmt::format("{} hosts report the hostname '{}': MPI sees separate shared-memory domains; "
                                       "check the host list",
                                       n, name));
  if (targets_differ) {
    std::string list;
    for (const auto& h : c.hosts)
      list += fmt::format("{}{}: {}", list.empty() ? "" : "; ", h.hostname, raw_target_key(h));
    c.warnings.push_back("the hosts measured different kinds of target (" + list +
                         "): the merged figures mix them; see each host's row");
  }
  if (c.hosts.size() > 1) {
    double best_done = 1e300, best_iops = 0;
    for (const auto& h : c.hosts) {
      best_done = std::min(best_done, h.last_done_s);
      best_iops = std::max(best_iops, h.result.iops());
    }
    for (auto& h : c.hosts) {
      h.straggler = time_based ? h.result.iops() < (1 - kRawStragglerMargin) * best_iops
                               : h.last_done_s > (1 + kRawStragglerMargin) * best_done &&
                                     h.last_done_s - best_done > kRawStragglerMinLagS;
      if (!h.straggler) continue;
      c.warnings.push_back(
          time_based ? fmt::format("straggler: host {} delivered {:.0f} IOPS, {:.0f}% below the fastest "
                                   "host ({:.0f} IOPS)",
                                   h.hostname, h.result.iops(), 100 * (1 - h.result.iops() / best_iops), best_iops)
                     : fmt::format("straggler: host {} finished at {:.2f} s, {:.0f}% after the first "
                                   "host ({:.2f} s)",
                                   h.hostname, h.last_done_s, 100 * (h.last_done_s / best_done - 1), best_done));
    }
  }
  return c;
}

}  // namespace ioprobe::cluster
