#include "report/raw_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/engine_choice.hpp"
#include "engine/page_cache.hpp"
#include "report/error_text.hpp"
#include "stats/latency_json.hpp"

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

std::string raw_cache_note(bool direct, bool write, const std::string& cache, bool evicted, double residency) {
  if (direct) return " (bypassed: O_DIRECT)";
  if (write) return "";
  const std::string from = reads_from(direct, write, residency);
  std::string how = evicted ? "; evicted before the run (--cache cold)" : cache == "warm" ? "; --cache warm" : "";
  if (from == "page cache")
    return fmt::format("{}: the reads come from the page cache, a memory figure, not the device's", how);
  if (from == "mixed") return fmt::format("{}: the reads come partly from the page cache (mixed)", how);
  if (from == "device") return fmt::format("{}: the reads come from the device", how);
  return how;
}

std::vector<std::string> raw_cache_warnings(const RawConfig& cfg, const RawTarget& target, double residency,
                                            bool memory_backed) {
  std::vector<std::string> w;
  if (cfg.direct || pattern_is_write(cfg.rw) || residency < 0 || memory_backed) return w;
  const std::string from = reads_from(false, false, residency);
  if (from == "mixed")
    w.push_back(fmt::format("page cache partly warm ({:.0f} %): a mixed cache state, neither a device nor a memory "
                            "figure",
                            residency * 100));
  if (from != "page cache") return w;
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

namespace {
double per_s(double v, double s) { return s > 0 ? v / s : 0.0; }
double cpu_per_io_us(const RawResults& r) {
  return r.ios ? (r.cpu_user_s + r.cpu_sys_s) * 1e6 / static_cast<double>(r.ios) : 0.0;
}
}  // namespace

nlohmann::json raw_json(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& engine, double residency,
                        const RawResults& r) {
  const auto& h = r.latency;
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& n : r.engine_notes) notes.push_back(n);
  return {{"filename", escape_bytes(cfg.filename)},
          {"rw", pattern_name(cfg.rw)},
          {"bs", cfg.bs},
          {"iodepth", cfg.iodepth},
          {"numjobs", cfg.numjobs},
          {"size_bytes", cfg.size},
          {"direct", cfg.direct},
          {"engine_requested", cfg.engine},
          {"runtime_s", cfg.runtime_s},
          {"sqpoll_requested", cfg.sqpoll},
          {"seed", cfg.seed},
          {"engine",
           {{"name", engine.name},
            {"reason", engine.reason},
            {"fixed_buffers", r.fixed_buffers},
            {"registered_files", r.registered_files},
            {"sqpoll", r.sqpoll},
            {"notes", notes}}},
          {"layout",
           {{"block_device", target.block_device},
            {"file_bytes", target.file_bytes},
            {"region_bytes", target.region_bytes},
            {"created", target.created},
            {"note", target.note}}},
          {"page_cache_resident_fraction", residency},
          {"cache", cfg.direct                 ? "bypassed (O_DIRECT)"
                    : pattern_is_write(cfg.rw) ? "buffered write"
                    : cfg.cold                 ? "cold"
                                               : "warm"},
          {"page_cache_evicted", target.evicted == 1 ? nlohmann::json(nullptr) : nlohmann::json(target.evicted == 0)},
          {"evict_error", target.evicted < 0 ? errno_text(-target.evicted) : ""},
          {"reads_from", reads_from(cfg.direct, pattern_is_write(cfg.rw), residency)},
          {"writes_to", writes_to(cfg.direct, pattern_is_write(cfg.rw))},
          {"results",
           {{"ios", r.ios},
            {"bytes", r.bytes},
            {"elapsed_s", r.elapsed_s},
            {"iops", per_s(static_cast<double>(r.ios), r.elapsed_s)},
            {"bytes_per_s", per_s(static_cast<double>(r.bytes), r.elapsed_s)},
            {"latency_us", latency_us_json(h)},
            {"errors", r.errors},
            {"first_error", error_line(r.first_error)},
            {"first_error_detail", r.first_error.empty() ? nlohmann::json() : error_record_json(r.first_error)},
            {"stop_reason", r.stop_reason},
            {"cpu", {{"user_s", r.cpu_user_s}, {"sys_s", r.cpu_sys_s}, {"per_io_us", cpu_per_io_us(r)}}}}}};
}

std::string raw_text(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& engine, double residency,
                     const RawResults& r) {
  const auto& h = r.latency;
  std::string out;
  out += fmt::format("ioprobe raw: {} {} B, iodepth {}, numjobs {}, direct={} on {}{}\n", pattern_name(cfg.rw), cfg.bs,
                     cfg.iodepth, cfg.numjobs, cfg.direct ? 1 : 0, escape_bytes(cfg.filename),
                     r.partial ? "  [PARTIAL: " + r.stop_reason + "]" : "");
  out += fmt::format("  region      {} per job{}{}\n", format_bytes(target.region_bytes),
                     target.block_device ? " (block device)" : "", target.note.empty() ? "" : "; " + target.note);
  if (residency >= 0)
    out += fmt::format("  page cache  {:.1f} % of the region resident at start{}\n", residency * 100,
                       raw_cache_note(cfg.direct, pattern_is_write(cfg.rw),
                                      cfg.direct ? ""
                                      : cfg.cold ? "cold"
                                                 : "warm",
                                      target.evicted == 0, residency));
  out += fmt::format("  engine      {} ({})\n", engine.name, engine.reason);
  if (!r.engine_notes.empty()) {
    std::string n;
    for (const auto& s : r.engine_notes) n += (n.empty() ? "" : ", ") + s;
    out += fmt::format("              {}\n", n);
  }
  double iops = per_s(static_cast<double>(r.ios), r.elapsed_s);
  out += fmt::format("  I/Os        {} in {} ({})\n", format_count(r.ios), format_seconds(r.elapsed_s), r.stop_reason);
  out += fmt::format("  IOPS        {}\n", format_count(static_cast<uint64_t>(std::llround(iops))));
  out += fmt::format("  throughput  {}\n", format_rate(per_s(static_cast<double>(r.bytes), r.elapsed_s)));
  out += raw_writes_line(cfg.direct, pattern_is_write(cfg.rw));
  out += fmt::format("  latency     mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n", format_ns(h.mean()),
                     format_ns(static_cast<double>(h.percentile(50))), format_ns(static_cast<double>(h.percentile(90))),
                     format_ns(static_cast<double>(h.percentile(99))),
                     format_ns(static_cast<double>(h.percentile(99.9))), format_ns(static_cast<double>(h.max())));
  out += fmt::format("  CPU         user {:.2f} s  sys {:.2f} s  = {:.2f} µs per I/O (all threads incl. io_uring "
                     "workers)\n",
                     r.cpu_user_s, r.cpu_sys_s, cpu_per_io_us(r));
  if (r.errors) {
    out += fmt::format("  errors      {} (first: {}); the run stopped early\n", format_count(r.errors),
                       error_line(r.first_error));
    const std::string hint = error_hint(r.first_error);
    if (!hint.empty()) out += "              " + hint + "\n";
  }
  return out;
}

}  // namespace ioprobe
