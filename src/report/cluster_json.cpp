#include "report/cluster_json.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/units.hpp"
#include "engine/engine_kind.hpp"
#include "report/device_io_report.hpp"
#include "report/document_sections.hpp"

namespace ioprobe {

namespace {

constexpr const char* kMergeText =
    "duration = max over processes, each timed on its own monotonic clock from a common start barrier; samples and "
    "bytes summed; latency histograms added bucket by bucket";

nlohmann::json coordination_json(const cluster::Coordination& k) {
  return {{"init_s", k.init_s},
          {"setup_s", k.setup_s},
          {"step_exchanges", k.step_exchanges},
          {"step_exchange_s", k.step_exchange_s},
          {"finish_wait_s", k.finish_wait_s},
          {"gather_s", k.gather_s},
          {"gather_bytes_at_rank0", k.gather_bytes_at_rank0},
          {"gather_method", k.gather_method}};
}

cluster::Coordination coordination_from_json(const nlohmann::json& j, const std::string& w) {
  cluster::Coordination k;
  k.init_s = json_field<double>(j, "init_s", w);
  k.setup_s = json_field<double>(j, "setup_s", w);
  k.step_exchanges = json_field<uint64_t>(j, "step_exchanges", w);
  k.step_exchange_s = json_field<double>(j, "step_exchange_s", w);
  k.finish_wait_s = json_field<double>(j, "finish_wait_s", w);
  k.gather_s = json_field<double>(j, "gather_s", w);
  k.gather_bytes_at_rank0 = json_field<uint64_t>(j, "gather_bytes_at_rank0", w);
  k.gather_method = json_field<std::string>(j, "gather_method", w);
  return k;
}

nlohmann::json host_row_json(const RunHostRow& h) {
  const RunHostTarget& t = h.target;
  const RunHostResults& r = h.results;
  return {{"hostname", h.hostname},
          {"host_index", h.host_index},
          {"mpi_ranks", h.mpi_ranks},
          {"gpu_ranks", h.gpu_ranks},
          {"target",
           {{"fs_type", t.fs_type},
            {"device", t.device},
            {"direct", t.direct},
            {"memory_backed", t.memory_backed},
            {"cache", t.cache},
            {"engine", to_string_or_empty(t.engine)}}},
          {"memory_bytes", h.memory_bytes},
          {"cgroup_memory_limit_bytes", h.cgroup_memory_limit_bytes},
          {"cpus_allowed", h.cpus_allowed},
          {"straggler", h.straggler},
          {"device_io", host_device_io_section_json(h.device_io)},
          {"results",
           {{"samples", r.samples},
            {"bytes", r.bytes},
            {"errors", r.errors},
            {"samples_per_s", r.samples_per_s},
            {"bytes_per_s", r.bytes_per_s},
            {"first_done_s", r.first_done_s},
            {"last_done_s", r.last_done_s},
            {"file_latency_p99_us", r.file_latency_p99_us},
            {"au_min", r.au_min},
            {"cpu_s", r.cpu_s}}}};
}

RunHostRow host_row_from_json(const nlohmann::json& j, const std::string& w) {
  if (!j.is_object()) json_detail::throw_mistyped(j, w, "a JSON object");
  RunHostRow h;
  h.hostname = json_field<std::string>(j, "hostname", w);
  h.host_index = json_field<int>(j, "host_index", w);
  h.mpi_ranks = json_field<std::vector<int>>(j, "mpi_ranks", w);
  h.gpu_ranks = json_field<uint32_t>(j, "gpu_ranks", w);
  const std::string tw = json_path(w, "target");
  const nlohmann::json& t = json_at(j, "target", w);
  h.target.fs_type = json_field<std::string>(t, "fs_type", tw);
  h.target.device = json_field<std::string>(t, "device", tw);
  h.target.direct = json_field<bool>(t, "direct", tw);
  h.target.memory_backed = json_field<bool>(t, "memory_backed", tw);
  h.target.cache = json_field<std::string>(t, "cache", tw);
  h.target.engine = engine_kind_or_none_field(t, "engine", tw);
  h.memory_bytes = json_field<uint64_t>(j, "memory_bytes", w);
  h.cgroup_memory_limit_bytes = json_field<uint64_t>(j, "cgroup_memory_limit_bytes", w);
  h.cpus_allowed = json_field<int>(j, "cpus_allowed", w);
  h.straggler = json_field<bool>(j, "straggler", w);
  h.device_io = host_device_io_from_json(json_at(j, "device_io", w), json_path(w, "device_io"));
  const std::string rw = json_path(w, "results");
  const nlohmann::json& r = json_at(j, "results", w);
  h.results.samples = json_field<uint64_t>(r, "samples", rw);
  h.results.bytes = json_field<uint64_t>(r, "bytes", rw);
  h.results.errors = json_field<uint64_t>(r, "errors", rw);
  h.results.samples_per_s = json_field<double>(r, "samples_per_s", rw);
  h.results.bytes_per_s = json_field<double>(r, "bytes_per_s", rw);
  h.results.first_done_s = json_field<double>(r, "first_done_s", rw);
  h.results.last_done_s = json_field<double>(r, "last_done_s", rw);
  h.results.file_latency_p99_us = json_field<double>(r, "file_latency_p99_us", rw);
  h.results.au_min = json_field<double>(r, "au_min", rw);
  h.results.cpu_s = json_field<double>(r, "cpu_s", rw);
  return h;
}

}  // namespace

RunClusterSection run_cluster_section(const cluster::ClusterRun& c, const std::string& launcher, int host_count,
                                      const std::string& placement, const std::string& placement_how) {
  RunClusterSection s;
  for (const auto& h : c.hosts) s.gpu_ranks += h.gpu_ranks;
  s.launcher = launcher;
  s.hosts = host_count;
  s.mpi_ranks = c.mpi_ranks;
  s.start_skew_s = c.start_skew_s;
  s.step_exchanges = c.step_exchanges;
  s.step_exchange_s = c.exchange_s;
  s.coordination = c.coordination;
  s.memory_bytes = c.memory_bytes;
  s.cpus_allowed = c.cpus_allowed;
  s.dataset_placement = placement;
  s.dataset_placement_how = placement_how;
  s.merge = kMergeText;
  return s;
}

std::vector<RunHostRow> run_host_rows(const cluster::ClusterRun& c) {
  std::vector<RunHostRow> rows;
  for (const auto& h : c.hosts) {
    // The host's first process's target section, with the read setting (run's target keys), read
    // strictly: a missing or mistyped key is refused naming the host and its path.
    const TargetSection t = target_section_from_json(h.target, "host " + h.hostname + "'s target", TargetKeys::kRead);
    RunHostRow r;
    r.hostname = h.hostname;
    r.host_index = h.host_index;
    r.mpi_ranks = h.mpi_ranks;
    r.gpu_ranks = h.gpu_ranks;
    r.target = {.fs_type = t.fs_type,
                .device = t.device,
                .direct = t.reading->direct,
                .memory_backed = t.memory_backed,
                .cache = t.reading->cache,
                .engine = t.reading->engine};
    r.memory_bytes = h.memory_bytes;
    r.cgroup_memory_limit_bytes = h.cgroup_memory_limit_bytes;
    r.cpus_allowed = h.cpus_allowed;
    r.straggler = h.straggler;
    r.device_io = host_device_io(h.device_io, h.device_io_epochs, h.bytes, t.reading->cache == "cold");
    r.results = {.samples = h.samples,
                 .bytes = h.bytes,
                 .errors = h.errors,
                 .samples_per_s = h.samples_per_s,
                 .bytes_per_s = h.bytes_per_s,
                 .first_done_s = h.first_done_s,
                 .last_done_s = h.last_done_s,
                 .file_latency_p99_us = h.file_latency_p99_us,
                 .au_min = h.au_min,
                 .cpu_s = h.cpu_s};
    rows.push_back(std::move(r));
  }
  return rows;
}

nlohmann::json run_cluster_json(const RunClusterSection& c) {
  nlohmann::json j = {{"launcher", c.launcher},
                      {"hosts", c.hosts},
                      {"mpi_ranks", c.mpi_ranks},
                      {"gpu_ranks", c.gpu_ranks},
                      {"start_skew_s", c.start_skew_s},
                      {"step_exchanges", c.step_exchanges},
                      {"step_exchange_s", c.step_exchange_s},
                      {"coordination", coordination_json(c.coordination)},
                      {"memory_bytes", c.memory_bytes},
                      {"cpus_allowed", c.cpus_allowed},
                      {"dataset_placement", c.dataset_placement},
                      {"dataset_placement_how", c.dataset_placement_how},
                      {"merge", c.merge}};
  if (c.interrupted) j["interrupted"] = *c.interrupted;
  return j;
}

RunClusterSection run_cluster_from_json(const nlohmann::json& j, const std::string& w) {
  if (!j.is_object()) json_detail::throw_mistyped(j, w, "a JSON object");
  RunClusterSection c;
  c.launcher = json_field<std::string>(j, "launcher", w);
  c.hosts = json_field<int>(j, "hosts", w);
  c.mpi_ranks = json_field<int>(j, "mpi_ranks", w);
  c.gpu_ranks = json_field<uint32_t>(j, "gpu_ranks", w);
  c.start_skew_s = json_field<double>(j, "start_skew_s", w);
  c.step_exchanges = json_field<uint64_t>(j, "step_exchanges", w);
  c.step_exchange_s = json_field<double>(j, "step_exchange_s", w);
  c.coordination = coordination_from_json(json_at(j, "coordination", w), json_path(w, "coordination"));
  c.memory_bytes = json_field<uint64_t>(j, "memory_bytes", w);
  c.cpus_allowed = json_field<int>(j, "cpus_allowed", w);
  c.dataset_placement = json_field<std::string>(j, "dataset_placement", w);
  c.dataset_placement_how = json_field<std::string>(j, "dataset_placement_how", w);
  c.merge = json_field<std::string>(j, "merge", w);
  if (j.contains("interrupted")) c.interrupted = json_field<bool>(j, "interrupted", w);  // absent: older documents
  return c;
}

nlohmann::json run_hosts_json(const std::vector<RunHostRow>& hosts) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& h : hosts) a.push_back(host_row_json(h));
  return a;
}

std::vector<RunHostRow> run_hosts_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) json_detail::throw_mistyped(j, where, "an array");
  std::vector<RunHostRow> rows;
  for (size_t i = 0; i < j.size(); ++i) rows.push_back(host_row_from_json(j[i], json_path(where, i)));
  return rows;
}

std::string render_hosts_text(const RunClusterSection& c, const std::vector<RunHostRow>& hosts, double elapsed_s) {
  std::string o = "\nHosts\n";
  o += fmt::format("  {:<20} {} host(s), {} MPI rank(s), {} GPU rank(s) in all; started by {}; start skew <= {}\n",
                   "cluster", c.hosts, c.mpi_ranks, c.gpu_ranks, c.launcher, format_ns(c.start_skew_s * 1e9));
  o += fmt::format("  {:<20} {} DDP step exchanges took {} ({:.1f}% of the run; the most of any process, waits for "
                   "the slowest host's batch included)\n",
                   "coordination", c.step_exchanges, format_ns(c.step_exchange_s * 1e9),
                   elapsed_s > 0 ? 100 * c.step_exchange_s / elapsed_s : 0.0);
  const cluster::Coordination& k = c.coordination;
  o += fmt::format("  {:<20} MPI init {}, set-up to the start barrier {}, end wait {}, gather + merge {} ({} "
                   "received by rank 0; {}) [measured]\n",
                   "coordination cost", format_ns(k.init_s * 1e9), format_ns(k.setup_s * 1e9),
                   format_ns(k.finish_wait_s * 1e9), format_ns(k.gather_s * 1e9), format_bytes(k.gather_bytes_at_rank0),
                   k.gather_method.substr(0, k.gather_method.find(':')));
  if (c.interrupted.value_or(false))
    o += fmt::format("  {:<20} INTERRUPTED (Ctrl-C / SIGTERM on mpirun): every host stopped early; the merged figures "
                     "cover the work done until then (a partial result)\n",
                     "interrupted");
  o += fmt::format("  {:<20} {} ({})\n", "dataset", c.dataset_placement, c.dataset_placement_how);
  o += fmt::format("  {:<20} {} RAM summed once per host, {} CPUs allowed\n", "resources", format_bytes(c.memory_bytes),
                   c.cpus_allowed);
  o += fmt::format("  {:<16} {:>5} {:>5} {:>10} {:>12} {:>14} {:>10} {:>9} {:>9} {:>7}  {}\n", "host", "MPI", "GPUs",
                   "samples", "samples/s", "MB/s", "p99", "first", "last", "AU min", "target");
  for (const auto& h : hosts) {
    const RunHostResults& r = h.results;
    o += fmt::format("  {:<16} {:>5} {:>5} {:>10} {:>12.0f} {:>14.2f} {:>10} {:>8.2f}s {:>8.2f}s {:>6.1f}%  {}{}\n",
                     h.hostname, h.mpi_ranks.size(), h.gpu_ranks, format_count(r.samples), r.samples_per_s,
                     r.bytes_per_s / 1e6, format_ns(r.file_latency_p99_us * 1e3), r.first_done_s, r.last_done_s,
                     100 * r.au_min, fmt::format("{} {}", h.target.fs_type, h.target.direct ? "O_DIRECT" : "buffered"),
                     h.straggler ? "  STRAGGLER" : "");
  }
  for (const auto& h : hosts)
    o += fmt::format("  {:<16} device I/O {}{}\n", h.hostname, device_io_summary(h.device_io.section, "delivered"),
                     host_cold_read_flag_text(h.device_io));
  o += "  (MB/s = 10^6 B/s; first/last: when the host's first and last process finished, from the common start)\n";
  return o;
}

}  // namespace ioprobe
