#include "report/document_merge.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "raw/raw_results.hpp"
#include "report/device_io_report.hpp"
#include "report/error_text.hpp"
#include "report/run_document.hpp"
#include "stats/latency_json.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

constexpr const char* kIngestDropped =
    "not recomputed for merged documents: the accelerator utilization is computed per rank from each rank's "
    "compute and wait times, which a result document does not keep, and the demand of the merged runs "
    "(GPUs per host) is not one host's; see each source document's own ingest section";

std::string hostname_of(const json& doc) {
  const json h = doc.value("host", json::object());
  return h.is_object() ? h.value("hostname", "") : "";
}

// Union of the inputs' warnings, each once, in order.
json merged_warnings(const std::vector<json>& docs) {
  json out = json::array();
  for (const auto& d : docs)
    for (const auto& w : d.value("warnings", json::array()))
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  return out;
}

// One field of `doc` by JSON pointer, null where absent.
json field_at(const json& doc, const std::string& ptr) {
  const json::json_pointer p(ptr);
  return doc.contains(p) ? doc.at(p) : json();
}

// A field's value as a message shows it: a string quoted, a byte size with its unit and the exact
// bytes (`bytes`), another count with separators.
std::string field_text(const json& v, bool bytes) {
  if (v.is_string()) return "'" + escape_bytes(v.get<std::string>()) + "'";
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {  // unsigned as ioprobe writes it, or a signed literal
    const auto n = v.get<uint64_t>();
    return bytes ? format_bytes(n) : format_count(n);
  }
  return v.is_null() ? "none" : v.dump();
}

}  // namespace

std::vector<std::string> merge_workload_warnings(const std::vector<json>& docs, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  if (docs.empty() || names.size() != docs.size()) return out;
  const bool raw = docs.front().value("kind", "") == "raw";
  const std::vector<std::string> fields = raw ? std::vector<std::string>{"/raw/rw", "/raw/bs"}
                                              : std::vector<std::string>{"/dataset/root", "/dataset/preset",
                                                                         "/dataset/files", "/dataset/bytes"};
  for (size_t i = 1; i < docs.size(); ++i) {
    std::string diff;
    for (const auto& f : fields) {
      const json a = field_at(docs.front(), f), b = field_at(docs[i], f);
      if (a == b) continue;
      std::string name = f.substr(1);
      std::replace(name.begin(), name.end(), '/', '.');
      const bool bytes = f == "/dataset/bytes" || f == "/raw/bs";
      diff += fmt::format("{}{} {} and {}", diff.empty() ? "" : "; ", name, field_text(a, bytes), field_text(b, bytes));
    }
    if (!diff.empty())
      out.push_back(fmt::format("{} and {} measured different {} ({}): the merged figures add up different work, "
                                "not one {} shared by the parts of one run; merge documents of one run",
                                names.front(), names[i], raw ? "workloads" : "datasets", diff,
                                raw ? "workload" : "dataset"));
  }
  return out;
}

namespace {

json merge_runs(const std::vector<json>& docs, const std::vector<std::string>& names) {
  std::vector<RunDocument> typed;
  for (size_t i = 0; i < docs.size(); ++i) typed.push_back(run_document_from_json(docs[i], "'" + names[i] + "'"));
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
                           .file_latency_p99_us = latency_us_json(r.file_latency)["p99"].get<double>()});
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
  json warnings = merge_workload_warnings(docs, names);
  for (const auto& w : merged_warnings(docs))
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  warnings.push_back(
      fmt::format("merged from {} documents (ioprobe report --merge): counts summed, elapsed the longest "
                  "(the inputs are taken as parts of one test run at the same time), latency from the "
                  "added buckets; the configuration shown is the first's; the GPU ingest section is not "
                  "recomputed (see GPU ingest)",
                  docs.size()));
  if (!apart.empty()) warnings.push_back(apart);
  out.warnings = warnings.get<std::vector<std::string>>();
  return run_document_json(out);
}

RawResults raw_totals_from_json(const json& doc, const std::string& name) {
  const std::string where = fmt::format("'{}'.raw.results", name);
  const json& res = json_at(json_at(doc, "raw", fmt::format("'{}'", name)), "results", fmt::format("'{}'.raw", name));
  RawResults t;
  t.ios = json_field<uint64_t>(res, "ios", where);
  t.bytes = json_field<uint64_t>(res, "bytes", where);
  t.errors = json_field<uint64_t>(res, "errors", where);
  t.elapsed_s = json_field<double>(res, "elapsed_s", where);
  const auto detail = res.find("first_error_detail");
  if (detail != res.end() && !detail->is_null())  // null: no error
    t.first_error = error_record_from_json(*detail, json_path(where, "first_error_detail"));
  else if (const auto text = json_field_or<std::string>(res, "first_error", where, ""); !text.empty())
    t.first_error = ErrorRecord{.detail = text};  // a document written before the detail: its text
  if (res.contains("stop_reason")) t.stop = raw_stop_field(res, "stop_reason", where);  // absent: none given
  t.partial = json_field_or<bool>(doc, "partial", fmt::format("'{}'", name), false);    // absent: complete
  const json& cpu = json_at(res, "cpu", where);
  t.cpu_user_s = json_field<double>(cpu, "user_s", json_path(where, "cpu"));
  t.cpu_sys_s = json_field<double>(cpu, "sys_s", json_path(where, "cpu"));
  t.latency = latency_from_us_json(json_at(res, "latency_us", where), where + ".latency_us");
  return t;
}

json raw_results_json(const RawResults& t) {
  return {{"ios", t.ios},
          {"bytes", t.bytes},
          {"elapsed_s", t.elapsed_s},
          {"iops", t.iops()},
          {"bytes_per_s", t.bytes_per_s()},
          {"latency_us", latency_us_json(t.latency)},
          {"errors", t.errors},
          {"first_error", error_line(t.first_error)},
          {"first_error_detail", t.first_error.empty() ? json() : error_record_json(t.first_error)},
          {"cpu",
           {{"user_s", t.cpu_user_s},
            {"sys_s", t.cpu_sys_s},
            {"per_io_us", t.ios ? (t.cpu_user_s + t.cpu_sys_s) * 1e6 / static_cast<double>(t.ios) : 0.0}}}};
}

json merge_raws(const std::vector<json>& docs, const std::vector<std::string>& names) {
  json out = docs.front();
  json sources = json::array();
  RawResults total;  // RawResults::merge: sums, added buckets, the longest elapsed
  bool partial = false;
  for (size_t i = 0; i < docs.size(); ++i) {
    RawResults t = raw_totals_from_json(docs[i], names[i]);
    const json rj = raw_results_json(t);
    sources.push_back({{"file", names[i]},
                       {"hostname", hostname_of(docs[i])},
                       {"ios", t.ios},
                       {"bytes", t.bytes},
                       {"iops", rj["iops"]},
                       {"bytes_per_s", rj["bytes_per_s"]},
                       {"elapsed_s", t.elapsed_s},
                       {"p99_us", rj["latency_us"]["p99"]}});
    partial = partial || docs[i].value("partial", false);
    total.merge(t);
  }
  out["raw"]["results"] = raw_results_json(total);
  std::vector<json> dio;
  std::vector<std::string> hosts;
  bool write = false;
  for (const auto& d : docs) {
    const json res = d.contains("raw") && d["raw"].is_object() ? d["raw"].value("results", json::object())
                                                               : json::object();
    dio.push_back(res.contains("device_io") ? res["device_io"] : json());
    write = write || (res.contains("device_io") && res["device_io"].contains("write_ratio"));
    hosts.push_back(hostname_of(d));
  }
  if (json m = merge_device_io_json(dio, hosts, write ? DeviceRef::kWrite : DeviceRef::kRead, total.bytes);
      !m.is_null())
    out["raw"]["results"]["device_io"] = m;
  out["sources"] = sources;
  out["partial"] = partial;
  const std::string apart = merge_time_warning(dio, names);
  if (!apart.empty()) out["sources_apart"] = true;
  json warnings = merge_workload_warnings(docs, names);
  for (const auto& w : merged_warnings(docs))
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  warnings.push_back(
      fmt::format("merged from {} documents (ioprobe report --merge): I/Os, bytes and CPU summed, elapsed "
                  "the longest (the inputs are taken as parts of one test run at the same time), latency "
                  "from the added buckets; the configuration shown is the first's",
                  docs.size()));
  if (!apart.empty()) warnings.push_back(apart);
  out["warnings"] = warnings;
  return out;
}

}  // namespace

json merge_documents(const std::vector<json>& docs, const std::vector<std::string>& names) {
  if (docs.size() < 2 || names.size() != docs.size())
    throw UsageError("--merge: give two or more result documents (A.json B.json ...)");
  const std::string kind = docs.front().value("kind", "");
  for (size_t i = 1; i < docs.size(); ++i)
    if (docs[i].value("kind", "") != kind)
      throw UsageError(
          fmt::format("--merge: '{}' is a '{}' document and '{}' a '{}' one: only documents of one kind merge",
                      names.front(), kind, names[i], docs[i].value("kind", "")));
  if (kind != "run" && kind != "raw")
    throw UsageError(fmt::format("--merge: documents of kind '{}' ('{}') cannot be merged; run and raw documents can",
                                 kind, names.front()));
  json merged = kind == "run" ? merge_runs(docs, names) : merge_raws(docs, names);
  // The same result given twice (the same path, a copy, or a merge of it) would count its samples
  // twice; checked after the merge so its refusals of a malformed input come first.
  for (size_t i = 0; i < docs.size(); ++i)
    for (size_t j = i + 1; j < docs.size(); ++j) {
      const auto same = [&](const char* ptr) {
        const json::json_pointer p(ptr);
        return docs[i].contains(p) && docs[j].contains(p) && docs[i].at(p) == docs[j].at(p);
      };
      if (same("/created_utc") && same("/host/hostname") && same("/command"))
        throw UsageError(fmt::format("--merge: '{}' and '{}' are the same result (host {}, created {}); merging it "
                                     "twice would count its samples twice: give each result once",
                                     names[i], names[j], hostname_of(docs[i]), docs[i].value("created_utc", "?")));
    }
  return merged;
}

std::string sum_of_apart_runs(size_t runs) {
  return fmt::format(": NOT AT THE SAME TIME: its rates are the sum of {} runs that did not overlap in time, not "
                     "one concurrent load",
                     runs);
}

std::string render_merged_raw_text(const json& merged) {
  const json& r = merged.at("raw").at("results");
  const json& l = r.at("latency_us");
  auto ns = [](const json& us) { return format_ns(us.get<double>() * 1e3); };
  const size_t n = merged.at("sources").size();
  std::string o = fmt::format("ioprobe raw, merged from {} documents (counts summed, elapsed the longest){}\n", n,
                              merged.value("sources_apart", false) ? sum_of_apart_runs(n) : "");
  o += fmt::format("  I/Os        {} in {}\n", format_count(r.at("ios").get<uint64_t>()),
                   format_seconds(r.at("elapsed_s").get<double>()));
  o += fmt::format("  IOPS        {:.0f}\n", r.at("iops").get<double>());
  o += fmt::format("  throughput  {}\n", format_rate(r.at("bytes_per_s").get<double>()));
  o += fmt::format("  latency     mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n", ns(l.at("mean")),
                   ns(l.at("p50")), ns(l.at("p90")), ns(l.at("p99")), ns(l.at("p999")), ns(l.at("max")));
  if (r.contains("device_io"))
    o += fmt::format("  device I/O  {}\n              {}\n",
                     device_io_summary(r["device_io"], r["device_io"].contains("write_ratio") ? "written" : "read"),
                     r["device_io"].value("merge_note", ""));
  for (const auto& s : merged.at("sources"))
    o += fmt::format("  source      {} ({}): {} I/Os in {}, {:.0f} IOPS, {}, p99 {}\n", s.at("file").get<std::string>(),
                     s.value("hostname", "?"), format_count(s.at("ios").get<uint64_t>()),
                     format_seconds(s.at("elapsed_s").get<double>()), s.at("iops").get<double>(),
                     format_rate(s.at("bytes_per_s").get<double>()), ns(s.at("p99_us")));
  for (const auto& w : merged.value("warnings", json::array())) o += "  warning     " + w.get<std::string>() + "\n";
  return o;
}

}  // namespace ioprobe
