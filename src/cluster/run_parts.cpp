#include "cluster/run_parts.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "ingest/analysis.hpp"
#include "loader/loader_result_json.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe::cluster {

namespace {

// What identifies the measured target in a host's row: hosts reading different kinds of target
// (tmpfs on one, a device on another) are flagged.
std::string target_key(const nlohmann::json& t) {
  return fmt::format("{} {} {}", t.value("fs_type", "?"), t.value("direct", false) ? "O_DIRECT" : "buffered",
                     t.value("memory_backed", false) ? "RAM" : "");
}

}  // namespace

void to_json(nlohmann::json& j, const ProcessPart& p) {
  j = {{"rank", p.rank},
       {"host_index", p.host_index},
       {"hostname", p.hostname},
       {"gpu_ranks", p.gpu_ranks},
       {"first_rank", p.first_rank},
       {"start_skew_s", p.start_skew_s},
       {"step_exchanges", p.step_exchanges},
       {"exchange_s", p.exchange_s},
       {"cpus_allowed", p.cpus_allowed},
       {"memory_bytes", p.memory_bytes},
       {"cgroup_memory_limit_bytes", p.cgroup_memory_limit_bytes},
       {"target", p.target},
       {"result", loader_result_to_json(p.result)},
       {"device_io", p.device_io},
       {"device_io_epochs", p.device_io_epochs}};
}

void from_json(const nlohmann::json& j, ProcessPart& p) {
  const std::string w = "part";
  p.rank = json_field<int>(j, "rank", w);
  p.host_index = json_field<int>(j, "host_index", w);
  p.hostname = json_field<std::string>(j, "hostname", w);
  p.gpu_ranks = json_field<uint32_t>(j, "gpu_ranks", w);
  p.first_rank = json_field<uint32_t>(j, "first_rank", w);
  p.start_skew_s = json_field<double>(j, "start_skew_s", w);
  p.step_exchanges = json_field<uint64_t>(j, "step_exchanges", w);
  p.exchange_s = json_field<double>(j, "exchange_s", w);
  p.cpus_allowed = json_field<int>(j, "cpus_allowed", w);
  p.memory_bytes = json_field<uint64_t>(j, "memory_bytes", w);
  p.cgroup_memory_limit_bytes = json_field<uint64_t>(j, "cgroup_memory_limit_bytes", w);
  p.target = json_at(j, "target", w);
  p.result = loader_result_from_json(json_at(j, "result", w), json_path(w, "result"));
  p.device_io = device_io_from_wire(json_at(j, "device_io", w), json_path(w, "device_io"));
  const nlohmann::json& epochs = json_array_at(j, "device_io_epochs", w);
  for (size_t i = 0; i < epochs.size(); ++i)
    p.device_io_epochs.push_back(device_io_from_wire(epochs[i], json_path(json_path(w, "device_io_epochs"), i)));
}

ClusterRun merge_parts(std::vector<ProcessPart> parts) {
  ClusterRun c;
  std::sort(parts.begin(), parts.end(), [](const ProcessPart& a, const ProcessPart& b) { return a.rank < b.rank; });
  c.mpi_ranks = static_cast<int>(parts.size());
  std::map<int, HostRow> rows;
  std::map<int, LoaderResult> host_results;
  for (const ProcessPart& p : parts) {
    c.merged.merge(p.result);
    c.start_skew_s = std::max(c.start_skew_s, p.start_skew_s);
    c.step_exchanges = std::max(c.step_exchanges, p.step_exchanges);
    c.exchange_s = std::max(c.exchange_s, p.exchange_s);
    HostRow& h = rows[p.host_index];
    const double done = static_cast<double>(p.result.elapsed_ns) / 1e9;
    if (h.mpi_ranks.empty()) {
      h.hostname = p.hostname;
      h.host_index = p.host_index;
      h.first_done_s = done;
      h.cpus_allowed = p.cpus_allowed;
      h.memory_bytes = p.memory_bytes;
      h.cgroup_memory_limit_bytes = p.cgroup_memory_limit_bytes;
      h.target = p.target;
      h.device_io = p.device_io;
      h.device_io_epochs = p.device_io_epochs;
    }
    h.mpi_ranks.push_back(p.rank);
    h.gpu_ranks += p.gpu_ranks;
    h.first_done_s = std::min(h.first_done_s, done);
    h.last_done_s = std::max(h.last_done_s, done);
    h.cpu_s += p.result.cpu_user_s + p.result.cpu_sys_s;
    host_results[p.host_index].merge(p.result);
  }
  std::map<std::string, int> names;
  std::string first_key;
  bool targets_differ = false;
  for (auto& [idx, h] : rows) {
    // The cluster's device accounting: each host's own devices once, the hosts added.
    if (idx == rows.begin()->first) c.device_io = h.device_io;
    else c.device_io.merge(h.device_io);
    for (size_t e = 0; e < h.device_io_epochs.size(); ++e) {
      if (e >= c.device_io_epochs.size()) c.device_io_epochs.push_back(h.device_io_epochs[e]);
      else c.device_io_epochs[e].merge(h.device_io_epochs[e]);
    }
    const LoaderResult& r = host_results[idx];
    h.samples = r.samples;
    h.bytes = r.bytes;
    h.errors = r.errors;
    h.samples_per_s = h.last_done_s > 0 ? static_cast<double>(h.samples) / h.last_done_s : 0;
    h.bytes_per_s = h.last_done_s > 0 ? static_cast<double>(h.bytes) / h.last_done_s : 0;
    h.file_latency_p99_us = static_cast<double>(r.file_latency.percentile(99)) / 1e3;
    h.au_min = 1.0;
    for (const RankStats& rk : r.ranks) h.au_min = std::min(h.au_min, rank_accelerator_utilization(rk));
    if (r.ranks.empty()) h.au_min = 0;
    // One entry per host, however many processes it runs (RAM counted once per host).
    c.memory_bytes += h.memory_bytes;
    c.cpus_allowed += h.cpus_allowed;
    ++names[h.hostname];
    if (h.memory_bytes == 0)
      c.warnings.push_back(
          fmt::format("host {} reported no RAM size: the cluster's RAM sum leaves it out", h.hostname));
    if (first_key.empty()) first_key = target_key(h.target);
    else if (target_key(h.target) != first_key) targets_differ = true;
    c.hosts.push_back(h);
  }
  for (const auto& [name, n] : names)
    if (n > 1)
      c.warnings.push_back(fmt::format("{} hosts report the hostname '{}': MPI sees separate shared-memory domains, "
                                       "so their RAM is counted {} times; check the host list",
                                       n, name, n));
  if (targets_differ) {
    std::string list;
    for (const auto& h : c.hosts)
      list += fmt::format("{}{}: {}", list.empty() ? "" : "; ", h.hostname, target_key(h.target));
    c.warnings.push_back("the hosts measured different kinds of target (" + list +
                         "): the merged figures mix them; see each host's row");
  }
  // Stragglers: a complete run is judged by when each host finished, a run cut short (every host
  // stopped at the same moment) by each host's rate.
  if (c.hosts.size() > 1) {
    const bool cut = c.merged.stop_reason != "completed";
    double best_done = 1e300, best_rate = 0;
    for (const auto& h : c.hosts) {
      best_done = std::min(best_done, h.last_done_s);
      best_rate = std::max(best_rate, h.samples_per_s);
    }
    for (auto& h : c.hosts) {
      h.straggler = cut ? h.samples_per_s < (1 - kStragglerMargin) * best_rate
                        : h.last_done_s > (1 + kStragglerMargin) * best_done;
      if (h.straggler)
        c.warnings.push_back(
            cut ? fmt::format("straggler: host {} delivered {:.0f} samples/s, {:.0f}% below the fastest "
                              "host ({:.0f})",
                              h.hostname, h.samples_per_s, 100 * (1 - h.samples_per_s / best_rate), best_rate)
                : fmt::format("straggler: host {} finished at {:.2f} s, {:.0f}% after the first host "
                              "({:.2f} s)",
                              h.hostname, h.last_done_s, 100 * (h.last_done_s / best_done - 1), best_done));
    }
  }
  return c;
}

}  // namespace ioprobe::cluster
