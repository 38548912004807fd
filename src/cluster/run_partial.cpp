#include "cluster/run_partial.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/json_field.hpp"
#include "ingest/analysis.hpp"
#include "loader/loader_result_json.hpp"
#include "stats/latency_json.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe::cluster {

namespace {

// What identifies the measured target in a host's row: hosts reading different kinds of target
// (tmpfs on one, a device on another) are flagged.
std::string target_key(const nlohmann::json& t) {
  return fmt::format("{} {} {}", t.value("fs_type", "?"), t.value("direct", false) ? "O_DIRECT" : "buffered",
                     t.value("memory_backed", false) ? "RAM" : "");
}

// Adds `o` (a later block's share of the same host) into `h`; h keeps its identity fields.
void merge_host(HostPartial& h, const HostPartial& o) {
  HostRow& r = h.row;
  r.mpi_ranks.insert(r.mpi_ranks.end(), o.row.mpi_ranks.begin(), o.row.mpi_ranks.end());
  std::sort(r.mpi_ranks.begin(), r.mpi_ranks.end());
  r.gpu_ranks += o.row.gpu_ranks;
  r.samples += o.row.samples;
  r.bytes += o.row.bytes;
  r.errors += o.row.errors;
  r.first_done_s = std::min(r.first_done_s, o.row.first_done_s);
  r.last_done_s = std::max(r.last_done_s, o.row.last_done_s);
  r.cpu_s += o.row.cpu_s;
  if (o.has_ranks) r.au_min = h.has_ranks ? std::min(r.au_min, o.row.au_min) : o.row.au_min;
  h.has_ranks = h.has_ranks || o.has_ranks;
  h.file_latency.merge(o.file_latency);
}

}  // namespace

void RunPartial::merge(const RunPartial& higher) {
  merged.merge(higher.merged);
  mpi_ranks += higher.mpi_ranks;
  start_skew_s = std::max(start_skew_s, higher.start_skew_s);
  step_exchanges = std::max(step_exchanges, higher.step_exchanges);
  exchange_s = std::max(exchange_s, higher.exchange_s);
  init_s = std::max(init_s, higher.init_s);
  setup_s = std::max(setup_s, higher.setup_s);
  finish_wait_s = std::max(finish_wait_s, higher.finish_wait_s);
  for (const HostPartial& h : higher.hosts) {
    auto it = std::lower_bound(hosts.begin(), hosts.end(), h.row.host_index,
                               [](const HostPartial& a, int idx) { return a.row.host_index < idx; });
    if (it != hosts.end() && it->row.host_index == h.row.host_index) merge_host(*it, h);
    else hosts.insert(it, h);
  }
}

RunPartial partial_of(const ProcessPart& p) {
  RunPartial out;
  out.mpi_ranks = 1;
  out.start_skew_s = p.start_skew_s;
  out.step_exchanges = p.step_exchanges;
  out.exchange_s = p.exchange_s;
  out.init_s = p.init_s;
  out.setup_s = p.setup_s;
  out.finish_wait_s = p.finish_wait_s;
  HostPartial h;
  HostRow& r = h.row;
  r.hostname = p.hostname;
  r.host_index = p.host_index;
  r.mpi_ranks = {p.rank};
  r.gpu_ranks = p.gpu_ranks;
  r.samples = p.result.samples;
  r.bytes = p.result.bytes;
  r.errors = p.result.errors;
  r.first_done_s = r.last_done_s = static_cast<double>(p.result.elapsed_ns) / 1e9;
  r.cpu_s = p.result.cpu_user_s + p.result.cpu_sys_s;
  r.cpus_allowed = p.cpus_allowed;
  r.memory_bytes = p.memory_bytes;
  r.cgroup_memory_limit_bytes = p.cgroup_memory_limit_bytes;
  r.target = p.target;
  r.device_io = p.device_io;
  r.device_io_epochs = p.device_io_epochs;
  r.au_min = 1.0;
  for (const RankStats& rk : p.result.ranks) r.au_min = std::min(r.au_min, rank_accelerator_utilization(rk));
  h.has_ranks = !p.result.ranks.empty();
  h.file_latency = p.result.file_latency;
  out.hosts.push_back(std::move(h));
  out.merged = p.result;
  // Added into the totals already; the document shows only those.
  for (WorkerStats& w : out.merged.workers) {
    w.file_latency = LatencyHistogram();
    w.open_latency = LatencyHistogram();
  }
  for (RankStats& k : out.merged.ranks) {
    k.batch_wait = LatencyHistogram();
    k.timeline = Timeline(k.timeline.interval_s());
  }
  return out;
}

ClusterRun finish_partial(RunPartial p) {
  ClusterRun c;
  c.merged = std::move(p.merged);
  c.mpi_ranks = p.mpi_ranks;
  c.start_skew_s = p.start_skew_s;
  c.step_exchanges = p.step_exchanges;
  c.exchange_s = p.exchange_s;
  c.coordination.init_s = p.init_s;
  c.coordination.setup_s = p.setup_s;
  c.coordination.step_exchanges = p.step_exchanges;
  c.coordination.step_exchange_s = p.exchange_s;
  c.coordination.finish_wait_s = p.finish_wait_s;
  std::map<std::string, int> names;
  std::string first_key;
  bool targets_differ = false;
  // The cluster's device accounting: each host's own devices once, named by host, the hosts added.
  std::vector<std::pair<std::string, DeviceIo>> hosts_io;
  std::vector<std::vector<std::pair<std::string, DeviceIo>>> epochs_io;
  for (const HostPartial& hp : p.hosts) {
    hosts_io.emplace_back(hp.row.hostname, hp.row.device_io);
    for (size_t e = 0; e < hp.row.device_io_epochs.size(); ++e) {
      if (e >= epochs_io.size()) epochs_io.emplace_back();
      epochs_io[e].emplace_back(hp.row.hostname, hp.row.device_io_epochs[e]);
    }
  }
  if (!hosts_io.empty()) c.device_io = sum_hosts_device_io(hosts_io);
  for (const auto& e : epochs_io) c.device_io_epochs.push_back(sum_hosts_device_io(e));
  for (HostPartial& hp : p.hosts) {
    HostRow& h = hp.row;
    h.samples_per_s = h.last_done_s > 0 ? static_cast<double>(h.samples) / h.last_done_s : 0;
    h.bytes_per_s = h.last_done_s > 0 ? static_cast<double>(h.bytes) / h.last_done_s : 0;
    h.file_latency_p99_us = static_cast<double>(hp.file_latency.percentile(99)) / 1e3;
    if (!hp.has_ranks) h.au_min = 0;
    // One entry per host, however many processes it runs (RAM counted once per host).
    c.memory_bytes += h.memory_bytes;
    c.cpus_allowed += h.cpus_allowed;
    ++names[h.hostname];
    if (h.memory_bytes == 0)
      c.warnings.push_back(
          fmt::format("host {} reported no RAM size: the cluster's RAM sum leaves it out", h.hostname));
    if (first_key.empty()) first_key = target_key(h.target);
    else if (target_key(h.target) != first_key) targets_differ = true;
    c.hosts.push_back(std::move(h));
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
    const bool cut = !c.merged.stop.completed();
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

void to_json(nlohmann::json& j, const RunPartial& p) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const HostPartial& hp : p.hosts) {
    const HostRow& h = hp.row;
    hosts.push_back({{"hostname", h.hostname},
                     {"host_index", h.host_index},
                     {"mpi_ranks", h.mpi_ranks},
                     {"gpu_ranks", h.gpu_ranks},
                     {"samples", h.samples},
                     {"bytes", h.bytes},
                     {"errors", h.errors},
                     {"first_done_s", h.first_done_s},
                     {"last_done_s", h.last_done_s},
                     {"au_min", h.au_min},
                     {"has_ranks", hp.has_ranks},
                     {"cpu_s", h.cpu_s},
                     {"cpus_allowed", h.cpus_allowed},
                     {"memory_bytes", h.memory_bytes},
                     {"cgroup_memory_limit_bytes", h.cgroup_memory_limit_bytes},
                     {"target", h.target},
                     {"device_io", h.device_io},
                     {"device_io_epochs", h.device_io_epochs},
                     {"file_latency", histogram_ns_json(hp.file_latency)}});
  }
  j = {{"merged", loader_result_to_json(p.merged)},
       {"hosts", std::move(hosts)},
       {"mpi_ranks", p.mpi_ranks},
       {"start_skew_s", p.start_skew_s},
       {"step_exchanges", p.step_exchanges},
       {"exchange_s", p.exchange_s},
       {"init_s", p.init_s},
       {"setup_s", p.setup_s},
       {"finish_wait_s", p.finish_wait_s}};
}

void from_json(const nlohmann::json& j, RunPartial& p) {
  const std::string w = "partial";
  p.merged = loader_result_from_json(json_at(j, "merged", w), json_path(w, "merged"));
  p.mpi_ranks = json_field<int>(j, "mpi_ranks", w);
  p.start_skew_s = json_field<double>(j, "start_skew_s", w);
  p.step_exchanges = json_field<uint64_t>(j, "step_exchanges", w);
  p.exchange_s = json_field<double>(j, "exchange_s", w);
  p.init_s = json_field<double>(j, "init_s", w);
  p.setup_s = json_field<double>(j, "setup_s", w);
  p.finish_wait_s = json_field<double>(j, "finish_wait_s", w);
  const nlohmann::json& hosts = json_array_at(j, "hosts", w);
  for (size_t i = 0; i < hosts.size(); ++i) {
    const nlohmann::json& x = hosts[i];
    const std::string hw = json_path(json_path(w, "hosts"), i);
    HostPartial hp;
    HostRow& h = hp.row;
    h.hostname = json_field<std::string>(x, "hostname", hw);
    h.host_index = json_field<int>(x, "host_index", hw);
    h.mpi_ranks = json_field<std::vector<int>>(x, "mpi_ranks", hw);
    h.gpu_ranks = json_field<uint32_t>(x, "gpu_ranks", hw);
    h.samples = json_field<uint64_t>(x, "samples", hw);
    h.bytes = json_field<uint64_t>(x, "bytes", hw);
    h.errors = json_field<uint64_t>(x, "errors", hw);
    h.first_done_s = json_field<double>(x, "first_done_s", hw);
    h.last_done_s = json_field<double>(x, "last_done_s", hw);
    h.au_min = json_field<double>(x, "au_min", hw);
    hp.has_ranks = json_field<bool>(x, "has_ranks", hw);
    h.cpu_s = json_field<double>(x, "cpu_s", hw);
    h.cpus_allowed = json_field<int>(x, "cpus_allowed", hw);
    h.memory_bytes = json_field<uint64_t>(x, "memory_bytes", hw);
    h.cgroup_memory_limit_bytes = json_field<uint64_t>(x, "cgroup_memory_limit_bytes", hw);
    h.target = json_at(x, "target", hw);
    h.device_io = device_io_from_wire(json_at(x, "device_io", hw), json_path(hw, "device_io"));
    const nlohmann::json& epochs = json_array_at(x, "device_io_epochs", hw);
    for (size_t e = 0; e < epochs.size(); ++e)
      h.device_io_epochs.push_back(device_io_from_wire(epochs[e], json_path(json_path(hw, "device_io_epochs"), e)));
    hp.file_latency = histogram_from_ns_json(json_at(x, "file_latency", hw), json_path(hw, "file_latency"));
    p.hosts.push_back(std::move(hp));
  }
}

}  // namespace ioprobe::cluster
