#include "report/raw_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/engine_choice.hpp"
#include "engine/engine_kind.hpp"
#include "engine/page_cache.hpp"
#include "report/device_io_report.hpp"
#include "report/error_text.hpp"

namespace ioprobe {

std::string reads_from(bool direct, bool write, double residency) {
  if (write) return "";
  if (direct) return "device";
  return residency >= 0 ? residency_source(residency) : "unknown";
}

std::string writes_to(bool direct, bool write) {
  if (!write) return "";
  return direct ? "device (O_DIRECT)" : "page cache (not durable: no fsync)";
}

std::string raw_writes_line(bool direct, bool write) {
  if (!write || direct) return "";
  return "  writes      to the page cache, not made durable (raw does not fsync them): the throughput above is "
         "the page cache's, not the device's; --direct 1 measures the device's\n";
}

namespace {

constexpr const char* kRereadMark = " for the first pass, then the page cache";

}  // namespace

std::string reread_reads_from(const std::string& first_pass, uint64_t bytes, unsigned numjobs, uint64_t region_bytes,
                              uint64_t memory_bytes) {
  const uint64_t covered = static_cast<uint64_t>(numjobs) * region_bytes;
  if (first_pass.empty() || first_pass == "page cache" || covered == 0 || bytes <= covered) return first_pass;
  if (memory_bytes > 0 && covered > memory_bytes) return first_pass;  // the re-reads evict one another
  const double passes = static_cast<double>(bytes) / static_cast<double>(covered);
  return fmt::format("{}{} (the region was read {} times)", first_pass, kRereadMark,
                     passes >= 10 ? fmt::format("{:.0f}", passes) : fmt::format("{:.1f}", passes));
}

std::string raw_cache_note(bool direct, bool write, const std::string& cache, bool evicted, const std::string& from) {
  if (direct) return " (bypassed: O_DIRECT)";
  if (write) return "";
  std::string how = evicted ? "; evicted before the run (--cache cold)" : cache == "warm" ? "; --cache warm" : "";
  if (from.rfind("page cache", 0) == 0)
    return fmt::format("{}: the reads come from the {}, a memory figure, not the device's", how, from);
  if (from == "mixed") return fmt::format("{}: the reads come partly from the page cache (mixed)", how);
  if (from.empty() || from == "unknown") return how;
  if (from.rfind("device", 0) == 0) return fmt::format("{}: the reads come from the {}", how, from);
  return fmt::format("{}: the reads come from: {}", how, from);
}

std::vector<std::string> raw_cache_warnings(const RawConfig& cfg, const RawTarget& target, double residency,
                                            bool memory_backed, const std::string& from) {
  std::vector<std::string> w;
  if (cfg.direct || pattern_is_write(cfg.rw) || memory_backed) return w;
  if (from.find(kRereadMark) != std::string::npos)
    w.push_back(
        fmt::format("the region ({} per job) fits in memory and the buffered reads re-read it: {}; these are "
                    "largely page-cache (memory) figures, not the device's; give --direct 1, or a --size larger "
                    "than memory, to measure the device",
                    format_bytes(target.region_bytes), from));
  if (residency < 0) return w;
  const std::string start = reads_from(false, false, residency);
  if (start == "mixed")
    w.push_back(fmt::format("page cache partly warm ({:.0f} %): a mixed cache state, neither a device nor a memory "
                            "figure",
                            residency * 100));
  if (start != "page cache") return w;
  if (target.evicted < 0)
    w.push_back(fmt::format("could not evict the region from the page cache ({}); {:.0f} % resident: these are "
                            "page-cache (memory) figures, not the device's; use --direct 1",
                            errno_text(-target.evicted), residency * 100));
  else if (target.evicted == 0)
    w.push_back(fmt::format("the region stayed {:.0f} % resident after eviction (pages mapped or locked by another "
                            "process?): these are page-cache (memory) figures, not the device's; use --direct 1",
                            residency * 100));
  else
    w.push_back(fmt::format("--cache warm: {:.0f} % of the region is in the page cache, so these are page-cache "
                            "(memory) figures, not the device's; leave --cache out (cold) or give --direct 1 to "
                            "measure the device",
                            residency * 100));
  return w;
}

std::string render_raw_results_text(const RawDocument& doc) {
  const RawSection& r = doc.raw;
  const RawResultsSection& res = r.results;
  const bool write = raw_document_writes(doc);
  const double elapsed = res.elapsed_s;
  const double iops = elapsed > 0 ? static_cast<double>(res.ios) / elapsed : 0.0;
  const double bytes_per_s = elapsed > 0 ? static_cast<double>(res.bytes) / elapsed : 0.0;
  std::string out;
  out += fmt::format("ioprobe raw: {} {}, iodepth {}, numjobs {}, direct={} on {}{}\n", r.rw, format_bytes(r.bs),
                     r.iodepth, r.numjobs, r.direct ? 1 : 0, r.filename,
                     doc.partial ? fmt::format("  [PARTIAL: {}]", res.stop ? to_string(*res.stop) : "?") : "");
  out += fmt::format("  region      {} per job{}{}\n", format_bytes(r.layout.region_bytes),
                     r.layout.block_device ? " (block device)" : "", r.layout.note.empty() ? "" : "; " + r.layout.note);
  const double residency = r.page_cache_resident_fraction;
  if (residency >= 0)
    out += fmt::format("  page cache  {:.1f} % of the region resident at start{}\n", residency * 100,
                       raw_cache_note(r.direct, write, r.cache, r.page_cache_evicted == true, r.reads_from));
  out += fmt::format("  engine      {} ({})\n", to_string(r.engine.name), r.engine.reason);
  std::string notes;
  for (const auto& n : r.engine.notes) notes += (notes.empty() ? "" : ", ") + n;
  if (!notes.empty()) out += fmt::format("              {}\n", notes);
  out += fmt::format("  I/Os        {} in {}{}\n", format_count(res.ios), format_seconds(elapsed),
                     res.stop ? " (" + to_string(*res.stop) + ")" : "");
  out += fmt::format("  IOPS        {}\n", format_count(static_cast<uint64_t>(std::llround(iops))));
  out += fmt::format("  throughput  {}\n", format_rate(bytes_per_s));
  out += raw_writes_line(r.direct, write);
  // The figures as the document has them, in µs (stats/latency_json.hpp latency_us_json).
  const LatencyHistogram& h = res.latency;
  auto ns = [](uint64_t v) { return format_ns(static_cast<double>(v) / 1e3 * 1000.0); };
  out += fmt::format("  latency     mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n",
                     format_ns(h.mean() / 1e3 * 1000.0), ns(h.percentile(50)), ns(h.percentile(90)),
                     ns(h.percentile(99)), ns(h.percentile(99.9)), ns(h.max()));
  const double per_io_us = res.ios ? (res.cpu_user_s + res.cpu_sys_s) * 1e6 / static_cast<double>(res.ios) : 0.0;
  out += fmt::format("  CPU         user {:.2f} s  sys {:.2f} s  = {:.2f} µs per I/O (all threads incl. io_uring "
                     "workers)\n",
                     res.cpu_user_s, res.cpu_sys_s, per_io_us);
  if (res.errors > 0) {
    out += fmt::format("  errors      {} (first: {}); the run stopped early\n", format_count(res.errors),
                       res.first_error);
    // The hint from the errno stored beside the text (documents before it have none: no hint).
    const std::string hint = res.first_error_detail ? error_hint(*res.first_error_detail) : std::string();
    if (!hint.empty()) out += "              " + hint + "\n";
  }
  return out;
}

std::string render_raw_hosts_text(const RawDocument& doc) {
  if (!doc.cluster) return "";
  const RawClusterSection& c = *doc.cluster;
  std::string o = "\nHosts\n";
  o += fmt::format("  {:<20} {} host(s), {} MPI rank(s); started by {}; start skew <= {}\n", "cluster", c.hosts,
                   c.mpi_ranks, c.launcher, format_ns(c.start_skew_s * 1e9));
  o += fmt::format("  {:<20} {}\n", "files", c.files);
  o += fmt::format("  {:<16} {:>5} {:>12} {:>12} {:>12} {:>10} {:>10} {:>9} {:>9}  {}\n", "host", "MPI", "I/Os", "IOPS",
                   "MB/s", "p50", "p99", "first", "last", "target");
  for (const auto& h : doc.hosts)
    o += fmt::format("  {:<16} {:>5} {:>12} {:>12.0f} {:>12.2f} {:>10} {:>10} {:>8.2f}s {:>8.2f}s  {}{}{}\n",
                     h.hostname, h.mpi_ranks.size(), format_count(h.ios), h.iops, h.bytes_per_s / 1e6,
                     format_ns(h.p50_us * 1e3), format_ns(h.p99_us * 1e3), h.first_done_s, h.last_done_s, h.fs_type,
                     h.errors ? fmt::format("  {} errors", h.errors) : "", h.straggler ? "  STRAGGLER" : "");
  for (const auto& h : doc.hosts) {
    const DeviceIoSection& d = h.device_io.section;
    o += fmt::format("  {:<16} device I/O {}{}\n", h.hostname,
                     device_io_summary(d, d.ref == DeviceRef::kWrite ? "written" : "read"),
                     host_cold_read_flag_text(h.device_io));
  }
  o += "  (MB/s = 10^6 B/s; first/last: when the host's first and last process finished, from the common start";
  if (!doc.hosts.empty()) o += "; device I/O: the host's own devices in /proc/diskstats, counted once per host";
  o += ")\n";
  return o;
}

std::string raw_device_io_summary(const RawDocument& doc) {
  const std::optional<DeviceIoSection>& d = doc.raw.results.device_io;
  if (!d) return "";
  return device_io_summary(*d, d->ref == DeviceRef::kWrite ? "written" : "read");
}

std::string render_raw_text(const RawDocument& doc) {
  std::string out = render_raw_results_text(doc);
  if (const auto& d = doc.raw.results.device_io)  // as `raw` printed it when it ran
    out += fmt::format("  device I/O  {}{}\n", raw_device_io_summary(doc),
                       d->scope.empty() ? "" : " (" + d->scope + ")");
  out += render_raw_hosts_text(doc);
  for (const auto& w : doc.warnings) out += "  warning     " + w + "\n";
  return out;
}

}  // namespace ioprobe
