#include "report/cluster_json.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "report/device_io_report.hpp"

namespace ioprobe {

nlohmann::json cluster_json(const cluster::ClusterRun& c, const std::string& launcher, int host_count,
                            const std::string& placement, const std::string& placement_how) {
  uint32_t gpu_ranks = 0;
  for (const auto& h : c.hosts) gpu_ranks += h.gpu_ranks;
  const cluster::Coordination& k = c.coordination;
  return {{"launcher", launcher},
          {"hosts", host_count},
          {"mpi_ranks", c.mpi_ranks},
          {"gpu_ranks", gpu_ranks},
          {"start_skew_s", c.start_skew_s},
          {"step_exchanges", c.step_exchanges},
          {"step_exchange_s", c.exchange_s},
          {"coordination",
           {{"init_s", k.init_s},
            {"setup_s", k.setup_s},
            {"step_exchanges", k.step_exchanges},
            {"step_exchange_s", k.step_exchange_s},
            {"finish_wait_s", k.finish_wait_s},
            {"gather_s", k.gather_s},
            {"gather_bytes_at_rank0", k.gather_bytes_at_rank0},
            {"gather_method", k.gather_method}}},
          {"memory_bytes", c.memory_bytes},
          {"cpus_allowed", c.cpus_allowed},
          {"dataset_placement", placement},
          {"dataset_placement_how", placement_how},
          {"merge", "duration = max over processes, each timed on its own monotonic clock from a common start "
                    "barrier; samples and bytes summed; latency histograms added bucket by bucket"}};
}

nlohmann::json hosts_json(const cluster::ClusterRun& c) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& h : c.hosts) {
    const auto& t = h.target;
    a.push_back({{"hostname", h.hostname},
                 {"host_index", h.host_index},
                 {"mpi_ranks", h.mpi_ranks},
                 {"gpu_ranks", h.gpu_ranks},
                 {"target",
                  {{"fs_type", t.value("fs_type", "")},
                   {"device", t.value("device", "")},
                   {"direct", t.value("direct", false)},
                   {"memory_backed", t.value("memory_backed", false)},
                   {"cache", t.value("cache", "")},
                   {"engine", t.value("engine", "")}}},
                 {"memory_bytes", h.memory_bytes},
                 {"cgroup_memory_limit_bytes", h.cgroup_memory_limit_bytes},
                 {"cpus_allowed", h.cpus_allowed},
                 {"straggler", h.straggler},
                 {"device_io", host_device_io_json(h.device_io, h.device_io_epochs, h.bytes, h.target)},
                 {"results",
                  {{"samples", h.samples},
                   {"bytes", h.bytes},
                   {"errors", h.errors},
                   {"samples_per_s", h.samples_per_s},
                   {"bytes_per_s", h.bytes_per_s},
                   {"first_done_s", h.first_done_s},
                   {"last_done_s", h.last_done_s},
                   {"file_latency_p99_us", h.file_latency_p99_us},
                   {"au_min", h.au_min},
                   {"cpu_s", h.cpu_s}}}});
  }
  return a;
}

std::string render_hosts_text(const nlohmann::json& cluster, const nlohmann::json& hosts, double elapsed_s) {
  const nlohmann::json& c = cluster;
  std::string o = "\nHosts\n";
  o += fmt::format("  {:<20} {} host(s), {} MPI rank(s), {} GPU rank(s) in all; started by {}; start skew <= {}\n",
                   "cluster", c.value("hosts", 0), c.value("mpi_ranks", 0), c.value("gpu_ranks", 0),
                   c.value("launcher", "?"), format_ns(c.value("start_skew_s", 0.0) * 1e9));
  o += fmt::format("  {:<20} {} DDP step exchanges took {} ({:.1f}% of the run; the most of any process, waits for "
                   "the slowest host's batch included)\n",
                   "coordination", c.value("step_exchanges", 0ULL), format_ns(c.value("step_exchange_s", 0.0) * 1e9),
                   elapsed_s > 0 ? 100 * c.value("step_exchange_s", 0.0) / elapsed_s : 0.0);
  if (c.contains("coordination")) {
    const auto& k = c["coordination"];
    o += fmt::format("  {:<20} MPI init {}, set-up to the start barrier {}, end wait {}, gather + merge {} ({} "
                     "received by rank 0; {}) [measured]\n",
                     "coordination cost", format_ns(k.value("init_s", 0.0) * 1e9),
                     format_ns(k.value("setup_s", 0.0) * 1e9), format_ns(k.value("finish_wait_s", 0.0) * 1e9),
                     format_ns(k.value("gather_s", 0.0) * 1e9), format_bytes(k.value("gather_bytes_at_rank0", 0ULL)),
                     k.value("gather_method", "?").substr(0, k.value("gather_method", "?").find(':')));
  }
  if (c.value("interrupted", false))
    o += fmt::format("  {:<20} INTERRUPTED (Ctrl-C / SIGTERM on mpirun): every host stopped early; the merged figures "
                     "cover the work done until then (a partial result)\n",
                     "interrupted");
  o += fmt::format("  {:<20} {} ({})\n", "dataset", c.value("dataset_placement", "?"),
                   c.value("dataset_placement_how", ""));
  o += fmt::format("  {:<20} {} RAM summed once per host, {} CPUs allowed\n", "resources",
                   format_bytes(c.value("memory_bytes", 0ULL)), c.value("cpus_allowed", 0));
  o += fmt::format("  {:<16} {:>5} {:>5} {:>10} {:>12} {:>14} {:>10} {:>9} {:>9} {:>7}  {}\n", "host", "MPI", "GPUs",
                   "samples", "samples/s", "MB/s", "p99", "first", "last", "AU min", "target");
  for (const auto& h : hosts) {
    const auto& r = h.at("results");
    const auto& t = h.at("target");
    o += fmt::format("  {:<16} {:>5} {:>5} {:>10} {:>12.0f} {:>14.2f} {:>10} {:>8.2f}s {:>8.2f}s {:>6.1f}%  {}{}\n",
                     h.value("hostname", "?"), h.at("mpi_ranks").size(), h.value("gpu_ranks", 0),
                     format_count(r.value("samples", 0ULL)), r.value("samples_per_s", 0.0),
                     r.value("bytes_per_s", 0.0) / 1e6, format_ns(r.value("file_latency_p99_us", 0.0) * 1e3),
                     r.value("first_done_s", 0.0), r.value("last_done_s", 0.0), 100 * r.value("au_min", 0.0),
                     fmt::format("{} {}", t.value("fs_type", "?"), t.value("direct", false) ? "O_DIRECT" : "buffered"),
                     h.value("straggler", false) ? "  STRAGGLER" : "");
  }
  for (const auto& h : hosts)
    if (h.contains("device_io"))
      o += fmt::format("  {:<16} device I/O {}{}\n", h.value("hostname", "?"),
                       device_io_summary(h["device_io"], "delivered"), host_cold_read_flag_text(h["device_io"]));
  o += "  (MB/s = 10^6 B/s; first/last: when the host's first and last process finished, from the common start)\n";
  return o;
}

}  // namespace ioprobe
