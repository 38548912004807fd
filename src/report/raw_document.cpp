#include "report/raw_document.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "report/device_io_report.hpp"
#include "report/document.hpp"
#include "report/raw_report.hpp"
#include "stats/latency_json.hpp"

namespace ioprobe {

using json = nlohmann::json;

namespace {

double per_s(double v, double s) { return s > 0 ? v / s : 0.0; }

constexpr const char* kRawMergeNote =
    "elapsed = max over processes, each timed on its own monotonic clock from a common start barrier; I/Os, bytes "
    "and CPU summed; IOPS and bytes/s = merged totals / that elapsed; latency histograms added bucket by bucket";

}  // namespace

RawDocument make_raw_document(RunHeader header, const TargetInfo& tinfo, const RawConfig& cfg, const RawTarget& target,
                              const RawEngineChoice& engine, double residency, const RawResults& res,
                              std::vector<std::string> warnings) {
  RawDocument d;
  d.header = std::move(header);
  d.target = target_section(tinfo);
  const bool write = pattern_is_write(cfg.rw);
  RawSection& s = d.raw;
  s.filename = escape_bytes(cfg.filename);
  s.rw = pattern_name(cfg.rw);
  s.bs = cfg.bs;
  s.iodepth = cfg.iodepth;
  s.numjobs = cfg.numjobs;
  s.size_bytes = cfg.size;
  s.direct = cfg.direct;
  s.engine_requested = cfg.engine;
  s.runtime_s = cfg.runtime_s;
  s.sqpoll_requested = cfg.sqpoll;
  s.seed = cfg.seed;
  s.engine = {engine.name, engine.reason, res.fixed_buffers, res.registered_files, res.sqpoll, res.engine_notes};
  s.layout = {target.block_device, target.file_bytes, target.region_bytes, target.created, target.note};
  s.page_cache_resident_fraction = residency;
  s.cache = cfg.direct ? "bypassed (O_DIRECT)" : write ? "buffered write" : cfg.cold ? "cold" : "warm";
  if (target.evicted != 1) s.page_cache_evicted = target.evicted == 0;
  s.evict_error = target.evicted < 0 ? errno_text(-target.evicted) : "";
  // Buffered re-reads of a region that fits in memory come from the page cache after the first pass.
  const HostSection& host = d.header.host;
  const uint64_t memory = host.cgroup_memory_limit_bytes > 0 && host.cgroup_memory_limit_bytes < host.memory_bytes
                              ? host.cgroup_memory_limit_bytes
                              : host.memory_bytes;
  s.reads_from = reads_from(cfg.direct, write, residency);
  if (!cfg.direct && !write)
    s.reads_from = reread_reads_from(s.reads_from, res.bytes, cfg.numjobs, target.region_bytes, memory);
  s.writes_to = writes_to(cfg.direct, write);
  RawResultsSection& r = s.results;
  r.ios = res.ios;
  r.bytes = res.bytes;
  r.elapsed_s = res.elapsed_s;
  r.latency = res.latency;
  r.errors = res.errors;
  r.first_error = error_line(res.first_error);
  if (!res.first_error.empty()) r.first_error_detail = res.first_error;
  r.stop = res.stop;
  r.cpu_user_s = res.cpu_user_s;
  r.cpu_sys_s = res.cpu_sys_s;
  d.partial = res.partial;

  d.warnings = std::move(warnings);
  if (engine.name == EngineKind::kPsync && cfg.iodepth > 1)
    d.warnings.push_back(
        fmt::format("psync is synchronous: --iodepth {} runs as 1 request in flight per job", cfg.iodepth));
  if (tinfo.memory_backed) d.warnings.emplace_back("memory-backed target: this measures RAM copies, not a device");
  for (auto& w : raw_cache_warnings(cfg, target, residency, tinfo.memory_backed, s.reads_from))
    d.warnings.push_back(std::move(w));
  return d;
}

std::vector<RawHostSection> raw_host_sections(const cluster::ClusterRaw& c, bool write, bool cold) {
  std::vector<RawHostSection> rows;
  for (const auto& h : c.hosts) {
    const RawResults& r = h.result;
    const json& t = h.target;  // target_json() of the host's first process, as it sent it
    const std::string tw = "host " + h.hostname + "'s target";
    auto us = [&](double p) { return static_cast<double>(r.latency.percentile(p)) / 1e3; };
    RawHostSection row;
    row.hostname = h.hostname;
    row.host_index = h.host_index;
    row.mpi_ranks = h.mpi_ranks;
    row.files = h.files;
    row.fs_type = json_field<std::string>(t, "fs_type", tw);
    row.device = json_field<std::string>(t, "device", tw);
    row.memory_backed = json_field<bool>(t, "memory_backed", tw);
    row.straggler = h.straggler;
    row.device_io = host_device_io(h.device_io, write ? DeviceRef::kWrite : DeviceRef::kRead, r.bytes, cold && !write);
    row.ios = r.ios;
    row.bytes = r.bytes;
    row.errors = r.errors;
    row.elapsed_s = r.elapsed_s;
    row.first_done_s = h.first_done_s;
    row.last_done_s = h.last_done_s;
    row.iops = r.iops();
    row.bytes_per_s = r.bytes_per_s();
    row.latency_count = r.latency.count();
    row.p50_us = us(50);
    row.p99_us = us(99);
    row.p999_us = us(99.9);
    row.cpu_s = r.cpu_user_s + r.cpu_sys_s;
    rows.push_back(std::move(row));
  }
  return rows;
}

void add_raw_cluster(RawDocument& doc, const cluster::ClusterRaw& c, const std::string& launcher, int host_count,
                     const std::string& files) {
  doc.cluster = RawClusterSection{launcher, host_count, c.mpi_ranks, c.start_skew_s, files, kRawMergeNote};
  doc.hosts = raw_host_sections(c, raw_document_writes(doc), doc.raw.direct);
  for (const auto& w : c.warnings) doc.warnings.push_back(w);
}

bool raw_document_writes(const RawDocument& doc) { return doc.raw.rw.find("write") != std::string::npos; }

// ---- writing -------------------------------------------------------------------------------

namespace {

json results_json(const RawResultsSection& r) {
  json j = {{"ios", r.ios},
            {"bytes", r.bytes},
            {"elapsed_s", r.elapsed_s},
            {"iops", per_s(static_cast<double>(r.ios), r.elapsed_s)},
            {"bytes_per_s", per_s(static_cast<double>(r.bytes), r.elapsed_s)},
            {"latency_us", latency_us_json(r.latency)},
            {"errors", r.errors},
            {"first_error", r.first_error},
            {"first_error_detail", r.first_error_detail ? error_record_json(*r.first_error_detail) : json()},
            {"cpu",
             {{"user_s", r.cpu_user_s},
              {"sys_s", r.cpu_sys_s},
              {"per_io_us", r.ios ? (r.cpu_user_s + r.cpu_sys_s) * 1e6 / static_cast<double>(r.ios) : 0.0}}}};
  if (r.stop) j["stop_reason"] = to_string(*r.stop);
  if (r.device_io) j["device_io"] = device_io_section_json(*r.device_io);
  return j;
}

json raw_section_json(const RawSection& s) {
  return {{"filename", s.filename},
          {"rw", s.rw},
          {"bs", s.bs},
          {"iodepth", s.iodepth},
          {"numjobs", s.numjobs},
          {"size_bytes", s.size_bytes},
          {"direct", s.direct},
          {"engine_requested", to_string(s.engine_requested)},
          {"runtime_s", s.runtime_s},
          {"sqpoll_requested", s.sqpoll_requested},
          {"seed", s.seed},
          {"engine",
           {{"name", to_string(s.engine.name)},
            {"reason", s.engine.reason},
            {"fixed_buffers", s.engine.fixed_buffers},
            {"registered_files", s.engine.registered_files},
            {"sqpoll", s.engine.sqpoll},
            {"notes", s.engine.notes}}},
          {"layout",
           {{"block_device", s.layout.block_device},
            {"file_bytes", s.layout.file_bytes},
            {"region_bytes", s.layout.region_bytes},
            {"created", s.layout.created},
            {"note", s.layout.note}}},
          {"page_cache_resident_fraction", s.page_cache_resident_fraction},
          {"cache", s.cache},
          {"page_cache_evicted", s.page_cache_evicted ? json(*s.page_cache_evicted) : json()},
          {"evict_error", s.evict_error},
          {"reads_from", s.reads_from},
          {"writes_to", s.writes_to},
          {"results", results_json(s.results)}};
}

json host_json(const RawHostSection& h) {
  return {{"hostname", h.hostname},
          {"host_index", h.host_index},
          {"mpi_ranks", h.mpi_ranks},
          {"files", h.files},
          {"target", {{"fs_type", h.fs_type}, {"device", h.device}, {"memory_backed", h.memory_backed}}},
          {"straggler", h.straggler},
          {"device_io", host_device_io_section_json(h.device_io)},
          {"results",
           {{"ios", h.ios},
            {"bytes", h.bytes},
            {"errors", h.errors},
            {"elapsed_s", h.elapsed_s},
            {"first_done_s", h.first_done_s},
            {"last_done_s", h.last_done_s},
            {"iops", h.iops},
            {"bytes_per_s", h.bytes_per_s},
            {"latency_us", {{"count", h.latency_count}, {"p50", h.p50_us}, {"p99", h.p99_us}, {"p999", h.p999_us}}},
            {"cpu_s", h.cpu_s}}}};
}

}  // namespace

json raw_document_json(const RawDocument& doc) {
  json j = {{"target", target_section_json(doc.target)},
            {"raw", raw_section_json(doc.raw)},
            {"partial", doc.partial},
            {"warnings", doc.warnings}};
  if (doc.cluster) {
    const RawClusterSection& c = *doc.cluster;
    j["cluster"] = {{"launcher", c.launcher},         {"hosts", c.hosts}, {"mpi_ranks", c.mpi_ranks},
                    {"start_skew_s", c.start_skew_s}, {"files", c.files}, {"merge", c.merge}};
    json rows = json::array();
    for (const auto& h : doc.hosts) rows.push_back(host_json(h));
    j["hosts"] = rows;
  }
  if (!doc.sources.empty()) {
    j["sources"] = json::array();
    for (const auto& s : doc.sources)
      j["sources"].push_back({{"file", s.file},
                              {"hostname", s.hostname},
                              {"ios", s.ios},
                              {"bytes", s.bytes},
                              {"iops", s.iops},
                              {"bytes_per_s", s.bytes_per_s},
                              {"elapsed_s", s.elapsed_s},
                              {"p99_us", s.p99_us}});
  }
  if (doc.sources_apart) j["sources_apart"] = true;
  j.update(header_json(doc.header, "raw"));
  return j;
}

void write_raw_document(const std::string& path, const RawDocument& doc) {
  write_json_file(path, raw_document_json(doc));
}

// ---- reading -------------------------------------------------------------------------------

namespace {

// Values no raw run writes: refused as a mistyped field is, naming the path.
void require(bool ok, const json& j, const char* key, const std::string& where, const std::string& what) {
  if (!ok) json_detail::throw_mistyped(j.at(key), json_path(where, key), what.c_str());
}

// A duration or CPU time: finite and not negative.
double seconds_field(const json& j, const char* key, const std::string& where) {
  const double v = json_field<double>(j, key, where);
  require(std::isfinite(v) && v >= 0, j, key, where, "a time of at least 0 s");
  return v;
}

// The derived figures are recomputed when written: only their type is checked.
void check_numbers(const json& j, std::initializer_list<const char*> keys, const std::string& where) {
  for (const char* k : keys) json_field<double>(j, k, where);
}

RawResultsSection results_from_json(const json& j, const std::string& w) {
  RawResultsSection r;
  r.ios = json_field<uint64_t>(j, "ios", w);
  r.bytes = json_field<uint64_t>(j, "bytes", w);
  r.elapsed_s = seconds_field(j, "elapsed_s", w);
  require(r.ios == 0 || r.elapsed_s > 0, j, "elapsed_s", w,
          fmt::format("a time above 0 s for {} I/Os", format_count(r.ios)));
  require(r.bytes == 0 || r.ios > 0, j, "bytes", w, "0 B for 0 I/Os");
  check_numbers(j, {"iops", "bytes_per_s"}, w);
  const json& lat = json_object_at(j, "latency_us", w);
  const std::string lw = json_path(w, "latency_us");
  json_field<uint64_t>(lat, "count", lw);
  check_numbers(lat, {"mean", "min", "p50", "p90", "p99", "p999", "max"}, lw);
  r.latency = latency_from_us_json(lat, lw);
  r.errors = json_field<uint64_t>(j, "errors", w);
  r.first_error = json_field<std::string>(j, "first_error", w);
  // Absent from documents written before the detail was kept; null when there was no error.
  if (const auto it = j.find("first_error_detail"); it != j.end() && !it->is_null())
    r.first_error_detail = error_record_from_json(*it, json_path(w, "first_error_detail"));
  // Absent from documents `report --merge` wrote.
  if (j.contains("stop_reason")) r.stop = raw_stop_field(j, "stop_reason", w);
  const json& cpu = json_object_at(j, "cpu", w);
  const std::string cw = json_path(w, "cpu");
  r.cpu_user_s = seconds_field(cpu, "user_s", cw);
  r.cpu_sys_s = seconds_field(cpu, "sys_s", cw);
  check_numbers(cpu, {"per_io_us"}, cw);
  if (j.contains("device_io"))  // absent: not measured
    r.device_io = device_io_section_from_json(j.at("device_io"), json_path(w, "device_io"));
  return r;
}

RawSection raw_section_from_json(const json& j, const std::string& w) {
  RawSection s;
  s.filename = json_field<std::string>(j, "filename", w);
  s.rw = json_field<std::string>(j, "rw", w);
  if (s.rw != "read" && s.rw != "randread" && s.rw != "write" && s.rw != "randwrite")
    throw UsageError(fmt::format("{}: '{}' is not a raw pattern (read, randread, write, randwrite)", json_path(w, "rw"),
                                 escape_bytes(s.rw)));
  s.bs = json_field<uint32_t>(j, "bs", w);
  require(s.bs > 0, j, "bs", w, "a block size of at least 1 B");
  s.iodepth = json_field<unsigned>(j, "iodepth", w);
  require(s.iodepth > 0, j, "iodepth", w, "a queue depth of at least 1");
  s.numjobs = json_field<unsigned>(j, "numjobs", w);
  require(s.numjobs > 0, j, "numjobs", w, "at least 1 job");
  s.size_bytes = json_field<uint64_t>(j, "size_bytes", w);
  s.direct = json_field<bool>(j, "direct", w);
  s.engine_requested = engine_selection_field(j, "engine_requested", w);
  s.runtime_s = seconds_field(j, "runtime_s", w);
  s.sqpoll_requested = json_field<bool>(j, "sqpoll_requested", w);
  s.seed = json_field<uint64_t>(j, "seed", w);
  const json& e = json_object_at(j, "engine", w);
  const std::string ew = json_path(w, "engine");
  s.engine.name = engine_kind_field(e, "name", ew);
  s.engine.reason = json_field<std::string>(e, "reason", ew);
  s.engine.fixed_buffers = json_field<bool>(e, "fixed_buffers", ew);
  s.engine.registered_files = json_field<bool>(e, "registered_files", ew);
  s.engine.sqpoll = json_field<bool>(e, "sqpoll", ew);
  s.engine.notes = json_field<std::vector<std::string>>(e, "notes", ew);
  const json& l = json_object_at(j, "layout", w);
  const std::string lw = json_path(w, "layout");
  s.layout.block_device = json_field<bool>(l, "block_device", lw);
  s.layout.file_bytes = json_field<uint64_t>(l, "file_bytes", lw);
  s.layout.region_bytes = json_field<uint64_t>(l, "region_bytes", lw);
  s.layout.created = json_field<bool>(l, "created", lw);
  s.layout.note = json_field<std::string>(l, "note", lw);
  s.page_cache_resident_fraction = json_field<double>(j, "page_cache_resident_fraction", w);
  s.cache = json_field<std::string>(j, "cache", w);
  if (!json_at(j, "page_cache_evicted", w).is_null())
    s.page_cache_evicted = json_field<bool>(j, "page_cache_evicted", w);
  s.evict_error = json_field<std::string>(j, "evict_error", w);
  s.reads_from = json_field<std::string>(j, "reads_from", w);
  s.writes_to = json_field<std::string>(j, "writes_to", w);
  s.results = results_from_json(json_object_at(j, "results", w), json_path(w, "results"));
  return s;
}

RawClusterSection cluster_from_json(const json& j, const std::string& w) {
  RawClusterSection c;
  c.launcher = json_field<std::string>(j, "launcher", w);
  c.hosts = json_field<int>(j, "hosts", w);
  c.mpi_ranks = json_field<int>(j, "mpi_ranks", w);
  c.start_skew_s = json_field<double>(j, "start_skew_s", w);
  c.files = json_field<std::string>(j, "files", w);
  c.merge = json_field<std::string>(j, "merge", w);
  return c;
}

RawHostSection host_from_json(const json& j, const std::string& w) {
  RawHostSection h;
  h.hostname = json_field<std::string>(j, "hostname", w);
  h.host_index = json_field<int>(j, "host_index", w);
  h.mpi_ranks = json_field<std::vector<int>>(j, "mpi_ranks", w);
  h.files = json_field<std::vector<std::string>>(j, "files", w);
  const json& t = json_object_at(j, "target", w);
  const std::string tw = json_path(w, "target");
  h.fs_type = json_field<std::string>(t, "fs_type", tw);
  h.device = json_field<std::string>(t, "device", tw);
  h.memory_backed = json_field<bool>(t, "memory_backed", tw);
  h.straggler = json_field<bool>(j, "straggler", w);
  h.device_io = host_device_io_from_json(json_at(j, "device_io", w), json_path(w, "device_io"));
  const json& r = json_object_at(j, "results", w);
  const std::string rw = json_path(w, "results");
  h.ios = json_field<uint64_t>(r, "ios", rw);
  h.bytes = json_field<uint64_t>(r, "bytes", rw);
  h.errors = json_field<uint64_t>(r, "errors", rw);
  h.elapsed_s = json_field<double>(r, "elapsed_s", rw);
  h.first_done_s = json_field<double>(r, "first_done_s", rw);
  h.last_done_s = json_field<double>(r, "last_done_s", rw);
  h.iops = json_field<double>(r, "iops", rw);
  h.bytes_per_s = json_field<double>(r, "bytes_per_s", rw);
  const json& lat = json_object_at(r, "latency_us", rw);
  const std::string lw = json_path(rw, "latency_us");
  h.latency_count = json_field<uint64_t>(lat, "count", lw);
  h.p50_us = json_field<double>(lat, "p50", lw);
  h.p99_us = json_field<double>(lat, "p99", lw);
  h.p999_us = json_field<double>(lat, "p999", lw);
  h.cpu_s = json_field<double>(r, "cpu_s", rw);
  return h;
}

RawSource raw_source_from_json(const json& j, const std::string& w) {
  return {.file = json_field<std::string>(j, "file", w),
          .hostname = json_field<std::string>(j, "hostname", w),
          .ios = json_field<uint64_t>(j, "ios", w),
          .bytes = json_field<uint64_t>(j, "bytes", w),
          .iops = json_field<double>(j, "iops", w),
          .bytes_per_s = json_field<double>(j, "bytes_per_s", w),
          .elapsed_s = json_field<double>(j, "elapsed_s", w),
          .p99_us = json_field<double>(j, "p99_us", w)};
}

}  // namespace

RawDocument raw_document_from_json(const json& j, const std::string& where) {
  RawDocument d;
  d.header = header_from_json(j, "raw", where);
  d.target = target_section_from_json(json_at(j, "target", where), json_path(where, "target"));
  d.raw = raw_section_from_json(json_object_at(j, "raw", where), json_path(where, "raw"));
  d.partial = json_field<bool>(j, "partial", where);
  d.warnings = json_field<std::vector<std::string>>(j, "warnings", where);
  // One process: neither; across hosts: both.
  if (j.contains("cluster") || j.contains("hosts")) {
    d.cluster = cluster_from_json(json_object_at(j, "cluster", where), json_path(where, "cluster"));
    const json& rows = json_array_at(j, "hosts", where);
    for (size_t i = 0; i < rows.size(); ++i)
      d.hosts.push_back(host_from_json(rows[i], json_path(json_path(where, "hosts"), i)));
  }
  if (j.contains("sources")) {  // a merged document only
    const json& rows = json_array_at(j, "sources", where);
    for (size_t i = 0; i < rows.size(); ++i)
      d.sources.push_back(raw_source_from_json(rows[i], json_path(json_path(where, "sources"), i)));
  }
  d.sources_apart = json_field_or<bool>(j, "sources_apart", where, false);  // absent: at the same time, or unknown
  return d;
}

}  // namespace ioprobe
