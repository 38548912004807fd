#include "report/document_merge.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "raw/raw_results.hpp"
#include "report/device_io_report.hpp"
#include "report/error_text.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

constexpr const char* kIngestDropped =
    "not recomputed for merged documents: the accelerator utilization is computed per rank from each rank's "
    "compute and wait times, which a result document does not keep, and the demand of the merged runs "
    "(GPUs per host) is not one host's; see each source document's own ingest section";

std::string quoted(const std::string& s) { return "'" + escape_bytes(s) + "'"; }

// The fields that say what work a document measured, each with its path and its value as a message
// shows it (a string quoted, a byte size with its unit and the exact bytes, another count with
// separators): documents whose values differ measured different work.
using Workload = std::vector<std::pair<const char*, std::string>>;

Workload workload_of(const RunDocument& d) {
  return {{"dataset.root", quoted(d.dataset.root)},
          {"dataset.preset", quoted(d.dataset.preset)},
          {"dataset.files", format_count(d.dataset.files)},
          {"dataset.bytes", format_bytes(d.dataset.bytes)}};
}

Workload workload_of(const RawDocument& d) {
  return {{"raw.rw", quoted(d.raw.rw)}, {"raw.bs", format_bytes(d.raw.bs)}};
}

// One warning per document whose workload differs from the first's, naming both files and each
// field that differs with both values.
template <typename Doc>
std::vector<std::string> workload_warnings(const std::vector<Doc>& docs, const std::vector<std::string>& names) {
  constexpr bool raw = std::is_same_v<Doc, RawDocument>;
  std::vector<std::string> out;
  const Workload first = workload_of(docs.front());
  for (size_t i = 1; i < docs.size(); ++i) {
    const Workload other = workload_of(docs[i]);
    std::string diff;
    for (size_t f = 0; f < first.size(); ++f)
      if (first[f].second != other[f].second)
        diff += fmt::format("{}{} {} and {}", diff.empty() ? "" : "; ", first[f].first, first[f].second,
                            other[f].second);
    if (!diff.empty())
      out.push_back(fmt::format("{} and {} measured different {} ({}): the merged figures add up different work, "
                                "not one {} shared by the parts of one run; merge documents of one run",
                                names.front(), names[i], raw ? "workloads" : "datasets", diff,
                                raw ? "workload" : "dataset"));
  }
  return out;
}

// The merged document's warnings: the inputs' different work first, then the inputs' own (each
// once), the merge's note and, when the inputs did not run together, that (`apart`).
template <typename Doc>
std::vector<std::string> merge_warnings(const std::vector<Doc>& docs, std::vector<std::string> workload,
                                        std::string note, const std::string& apart) {
  std::vector<std::string> out = std::move(workload);
  for (const auto& d : docs)
    for (const auto& w : d.warnings)
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  out.push_back(std::move(note));
  if (!apart.empty()) out.push_back(apart);
  return out;
}

double p99_us(const LatencyHistogram& h) { return static_cast<double>(h.percentile(99)) / 1e3; }

RunDocument merge_runs(const std::vector<RunDocument>& typed, const std::vector<std::string>& names,
                       std::vector<std::string> workload) {
  RunDocument out = typed.front();
  LoaderResult total;
  uint64_t gpus = 0;
  bool partial = false;
  out.sources.clear();
  for (size_t i = 0; i < typed.size(); ++i) {
    const LoaderResult& r = typed[i].results.loader;
    try {
      total.merge(r);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("'{}' and '{}': {}", names.front(), names[i], e.what()));
    }
    gpus += typed[i].loader.gpus;
    partial = partial || typed[i].partial;
    const ResultRates x = result_rates(r);
    out.sources.push_back({.file = names[i],
                           .hostname = typed[i].header.host.hostname,
                           .samples = r.samples,
                           .bytes = r.bytes,
                           .samples_per_s = x.samples_per_s,
                           .bytes_per_s = x.bytes_per_s,
                           .elapsed_s = x.elapsed_s,
                           .file_latency_p99_us = p99_us(r.file_latency)});
  }
  out.results.loader = total;
  // Device I/O: each host's devices once, the hosts added (device_io_report.hpp).
  std::vector<std::optional<DeviceIo>> dio;
  std::vector<std::optional<std::vector<RunEpoch>>> epochs;
  std::vector<std::string> hosts;
  for (size_t i = 0; i < typed.size(); ++i) {
    const auto& d = typed[i].results.device_io;
    dio.push_back(d ? std::optional<DeviceIo>(d->io) : std::nullopt);
    epochs.push_back(typed[i].results.epochs);
    hosts.push_back(typed[i].header.host.hostname);
  }
  out.results.device_io = merge_device_io(dio, hosts, DeviceRef::kRead, total.bytes);
  const std::string apart = merge_time_warning(dio, names);
  out.results.epochs = merge_epochs(epochs, hosts);
  out.partial = partial;
  out.loader.gpus = gpus;
  out.ingest = RunIngestSection{.unavailable_reason = kIngestDropped};
  if (out.results.device_io)  // where the merged bytes came from, by the devices' reads
    out.ingest.bytes_source = out.results.device_io->bytes_source;
  out.sources_apart = !apart.empty();
  out.warnings = merge_warnings(
      typed, std::move(workload),
      fmt::format("merged from {} documents (ioprobe report --merge): counts summed, elapsed the longest "
                  "(the inputs are taken as parts of one test run at the same time), latency from the "
                  "added buckets; the configuration shown is the first's; the GPU ingest section is not "
                  "recomputed (see GPU ingest)",
                  typed.size()),
      apart);
  return out;
}

// A raw document's results as the value RawResults::merge adds. A document that kept only the first
// error's text (written before its detail) gives that text as the detail.
RawResults raw_results_of(const RawDocument& d) {
  const RawResultsSection& s = d.raw.results;
  RawResults t;
  t.ios = s.ios;
  t.bytes = s.bytes;
  t.elapsed_s = s.elapsed_s;
  t.latency = s.latency;
  t.cpu_user_s = s.cpu_user_s;
  t.cpu_sys_s = s.cpu_sys_s;
  t.errors = s.errors;
  if (s.first_error_detail) t.first_error = *s.first_error_detail;
  else if (!s.first_error.empty()) t.first_error = ErrorRecord{.detail = s.first_error};
  if (s.stop) t.stop = *s.stop;
  t.partial = d.partial;
  return t;
}

RawDocument merge_raws(const std::vector<RawDocument>& typed, const std::vector<std::string>& names,
                       std::vector<std::string> workload) {
  RawDocument out = typed.front();
  RawResults total;  // RawResults::merge: sums, added buckets, the longest elapsed
  out.sources.clear();
  std::vector<std::optional<DeviceIo>> dio;
  std::vector<std::string> hosts;
  bool write = false;
  for (size_t i = 0; i < typed.size(); ++i) {
    const RawResults t = raw_results_of(typed[i]);
    out.sources.push_back({.file = names[i],
                           .hostname = typed[i].header.host.hostname,
                           .ios = t.ios,
                           .bytes = t.bytes,
                           .iops = t.iops(),
                           .bytes_per_s = t.bytes_per_s(),
                           .elapsed_s = t.elapsed_s,
                           .p99_us = p99_us(t.latency)});
    total.merge(t);
    const auto& d = typed[i].raw.results.device_io;
    dio.push_back(d ? std::optional<DeviceIo>(d->io) : std::nullopt);
    write = write || (d && d->ref == DeviceRef::kWrite);
    hosts.push_back(typed[i].header.host.hostname);
  }
  // The merged results carry no stop reason: the inputs' may differ.
  out.raw.results = RawResultsSection{.ios = total.ios,
                                      .bytes = total.bytes,
                                      .elapsed_s = total.elapsed_s,
                                      .latency = total.latency,
                                      .errors = total.errors,
                                      .first_error = error_line(total.first_error),
                                      .first_error_detail = total.first_error.empty()
                                                                ? std::nullopt
                                                                : std::optional<ErrorRecord>(total.first_error),
                                      .cpu_user_s = total.cpu_user_s,
                                      .cpu_sys_s = total.cpu_sys_s,
                                      .device_io = merge_device_io(dio, hosts,
                                                                   write ? DeviceRef::kWrite : DeviceRef::kRead,
                                                                   total.bytes)};
  out.partial = total.partial;
  const std::string apart = merge_time_warning(dio, names);
  out.sources_apart = !apart.empty();
  out.warnings = merge_warnings(
      typed, std::move(workload),
      fmt::format("merged from {} documents (ioprobe report --merge): I/Os, bytes and CPU summed, elapsed "
                  "the longest (the inputs are taken as parts of one test run at the same time), latency "
                  "from the added buckets; the configuration shown is the first's",
                  typed.size()),
      apart);
  return out;
}

// Refuses the same result given twice (the same path, a copy, or a merge of it): it would count its
// samples twice.
template <typename Doc>
void refuse_same_result(const std::vector<Doc>& docs, const std::vector<std::string>& names) {
  for (size_t i = 0; i < docs.size(); ++i)
    for (size_t j = i + 1; j < docs.size(); ++j) {
      const RunHeader &a = docs[i].header, &b = docs[j].header;
      if (a.created_utc == b.created_utc && a.host.hostname == b.host.hostname && a.command == b.command)
        throw UsageError(fmt::format("--merge: '{}' and '{}' are the same result (host {}, created {}); merging it "
                                     "twice would count its samples twice: give each result once",
                                     names[i], names[j], a.host.hostname, a.created_utc));
    }
}

template <typename Doc>
MergedDocument merge_typed(const std::vector<json>& docs, const std::vector<std::string>& names,
                           Doc (*read)(const json&, const std::string&),
                           Doc (*merge)(const std::vector<Doc>&, const std::vector<std::string>&,
                                        std::vector<std::string>)) {
  std::vector<Doc> typed;
  for (size_t i = 0; i < docs.size(); ++i) typed.push_back(read(docs[i], "'" + names[i] + "'"));
  std::vector<std::string> workload = workload_warnings(typed, names);
  Doc merged = merge(typed, names, workload);
  // Checked after the merge so that its refusals of a malformed input come first.
  refuse_same_result(typed, names);
  return {.doc = std::move(merged), .workload_warnings = std::move(workload)};
}

}  // namespace

MergedDocument merge_documents(const std::vector<json>& docs, const std::vector<std::string>& names) {
  if (docs.size() < 2 || names.size() != docs.size())
    throw UsageError("--merge: give two or more result documents (A.json B.json ...)");
  std::vector<std::string> kinds;
  for (size_t i = 0; i < docs.size(); ++i)
    kinds.push_back(json_field<std::string>(docs[i], "kind", "'" + names[i] + "'"));
  for (size_t i = 1; i < docs.size(); ++i)
    if (kinds[i] != kinds.front())
      throw UsageError(
          fmt::format("--merge: '{}' is a '{}' document and '{}' a '{}' one: only documents of one kind merge",
                      names.front(), kinds.front(), names[i], kinds[i]));
  if (kinds.front() == "run") return merge_typed<RunDocument>(docs, names, run_document_from_json, merge_runs);
  if (kinds.front() == "raw") return merge_typed<RawDocument>(docs, names, raw_document_from_json, merge_raws);
  throw UsageError(fmt::format("--merge: documents of kind '{}' ('{}') cannot be merged; run and raw documents can",
                               kinds.front(), names.front()));
}

json merged_document_json(const MergedDocument& m) {
  if (const auto* run = std::get_if<RunDocument>(&m.doc)) return run_document_json(*run);
  return raw_document_json(std::get<RawDocument>(m.doc));
}

std::string sum_of_apart_runs(size_t runs) {
  return fmt::format(": NOT AT THE SAME TIME: its rates are the sum of {} runs that did not overlap in time, not "
                     "one concurrent load",
                     runs);
}

std::string render_merged_raw_text(const RawDocument& merged) {
  const RawResultsSection& r = merged.raw.results;
  const LatencyHistogram& h = r.latency;
  // The figures as the document has them, in µs (stats/latency_json.hpp latency_us_json).
  auto ns = [](double us) { return format_ns(us * 1e3); };
  auto pct = [&](double p) { return ns(static_cast<double>(h.percentile(p)) / 1e3); };
  const size_t n = merged.sources.size();
  const double iops = r.elapsed_s > 0 ? static_cast<double>(r.ios) / r.elapsed_s : 0.0;
  const double bytes_per_s = r.elapsed_s > 0 ? static_cast<double>(r.bytes) / r.elapsed_s : 0.0;
  std::string o = fmt::format("ioprobe raw, merged from {} documents (counts summed, elapsed the longest){}\n", n,
                              merged.sources_apart ? sum_of_apart_runs(n) : "");
  o += fmt::format("  I/Os        {} in {}\n", format_count(r.ios), format_seconds(r.elapsed_s));
  o += fmt::format("  IOPS        {:.0f}\n", iops);
  o += fmt::format("  throughput  {}\n", format_rate(bytes_per_s));
  o += fmt::format("  latency     mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n", ns(h.mean() / 1e3), pct(50),
                   pct(90), pct(99), pct(99.9), ns(static_cast<double>(h.max()) / 1e3));
  if (r.device_io)
    o += fmt::format("  device I/O  {}\n              {}\n",
                     device_io_summary(*r.device_io, r.device_io->ref == DeviceRef::kWrite ? "written" : "read"),
                     r.device_io->merge_note);
  for (const auto& s : merged.sources)
    o += fmt::format("  source      {} ({}): {} I/Os in {}, {:.0f} IOPS, {}, p99 {}\n", s.file, s.hostname,
                     format_count(s.ios), format_seconds(s.elapsed_s), s.iops, format_rate(s.bytes_per_s),
                     ns(s.p99_us));
  for (const auto& w : merged.warnings) o += "  warning     " + w + "\n";
  return o;
}

}  // namespace ioprobe
