#include "report/raw_cluster_json.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "report/device_io_report.hpp"
#include "report/error_text.hpp"
#include "stats/latency_json.hpp"

namespace ioprobe {

using json = nlohmann::json;

json raw_cluster_json(const cluster::ClusterRaw& c, const std::string& launcher, int host_count,
                      const std::string& files) {
  return {{"launcher", launcher},
          {"hosts", host_count},
          {"mpi_ranks", c.mpi_ranks},
          {"start_skew_s", c.start_skew_s},
          {"files", files},
          {"merge", "elapsed = max over processes, each timed on its own monotonic clock from a common start barrier; "
                    "I/Os, bytes and CPU summed; IOPS and bytes/s = merged totals / that elapsed; latency histograms "
                    "added bucket by bucket"}};
}

json raw_hosts_json(const cluster::ClusterRaw& c, bool write, bool cold) {
  json a = json::array();
  for (const auto& h : c.hosts) {
    const RawResults& r = h.result;
    const auto& t = h.target;
    auto us = [&](double p) { return static_cast<double>(r.latency.percentile(p)) / 1e3; };
    a.push_back({{"hostname", h.hostname},
                 {"host_index", h.host_index},
                 {"mpi_ranks", h.mpi_ranks},
                 {"files", h.files},
                 {"target",
                  {{"fs_type", t.value("fs_type", "")},
                   {"device", t.value("device", "")},
                   {"memory_backed", t.value("memory_backed", false)}}},
                 {"straggler", h.straggler},
                 {"device_io", host_device_io_json(h.device_io, write ? DeviceRef::kWrite : DeviceRef::kRead, r.bytes,
                                                   cold && !write)},
                 {"results",
                  {{"ios", r.ios},
                   {"bytes", r.bytes},
                   {"errors", r.errors},
                   {"elapsed_s", r.elapsed_s},
                   {"first_done_s", h.first_done_s},
                   {"last_done_s", h.last_done_s},
                   {"iops", r.iops()},
                   {"bytes_per_s", r.bytes_per_s()},
                   {"latency_us", {{"count", r.latency.count()}, {"p50", us(50)}, {"p99", us(99)}, {"p999", us(99.9)}}},
                   {"cpu_s", r.cpu_user_s + r.cpu_sys_s}}}});
  }
  return a;
}

std::string render_raw_hosts_text(const json& doc) {
  if (!doc.contains("cluster") || !doc.contains("hosts")) return "";
  const json& c = doc["cluster"];
  std::string o = "\nHosts\n";
  o += fmt::format("  {:<20} {} host(s), {} MPI rank(s); started by {}; start skew <= {}\n", "cluster",
                   c.value("hosts", 0), c.value("mpi_ranks", 0), c.value("launcher", "?"),
                   format_ns(c.value("start_skew_s", 0.0) * 1e9));
  o += fmt::format("  {:<20} {}\n", "files", c.value("files", ""));
  o += fmt::format("  {:<16} {:>5} {:>12} {:>12} {:>12} {:>10} {:>10} {:>9} {:>9}  {}\n", "host", "MPI", "I/Os", "IOPS",
                   "MB/s", "p50", "p99", "first", "last", "target");
  for (const auto& h : doc["hosts"]) {
    const json& r = h.at("results");
    const json& lat = r.at("latency_us");
    const json& t = h.at("target");
    o += fmt::format("  {:<16} {:>5} {:>12} {:>12.0f} {:>12.2f} {:>10} {:>10} {:>8.2f}s {:>8.2f}s  {}{}{}\n",
                     h.value("hostname", "?"), h.at("mpi_ranks").size(), format_count(r.value("ios", 0ULL)),
                     r.value("iops", 0.0), r.value("bytes_per_s", 0.0) / 1e6, format_ns(lat.value("p50", 0.0) * 1e3),
                     format_ns(lat.value("p99", 0.0) * 1e3), r.value("first_done_s", 0.0), r.value("last_done_s", 0.0),
                     t.value("fs_type", "?"),
                     r.value("errors", 0ULL) ? fmt::format("  {} errors", r.value("errors", 0ULL)) : "",
                     h.value("straggler", false) ? "  STRAGGLER" : "");
  }
  bool any_io = false;
  for (const auto& h : doc["hosts"]) {
    if (!h.contains("device_io")) continue;
    const json& d = h["device_io"];
    any_io = true;
    o += fmt::format("  {:<16} device I/O {}{}\n", h.value("hostname", "?"),
                     device_io_summary(d, d.contains("write_ratio") ? "written" : "read"), host_cold_read_flag_text(d));
  }
  o += "  (MB/s = 10^6 B/s; first/last: when the host's first and last process finished, from the common start";
  if (any_io) o += "; device I/O: the host's own devices in /proc/diskstats, counted once per host";
  o += ")\n";
  return o;
}

}  // namespace ioprobe
