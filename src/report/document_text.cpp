#include "report/document_text.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/units.hpp"
#include "engine/engine_choice.hpp"
#include "report/device_io_report.hpp"
#include "report/error_text.hpp"
#include "report/raw_cluster_json.hpp"
#include "report/raw_report.hpp"
#include "report/tune_document.hpp"

namespace ioprobe {

namespace {

using json = nlohmann::json;

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

void flatten(const json& j, const std::string& where, std::string& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), where + "/" + it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], fmt::format("{}/{}", where, i), out);
  } else if (!j.is_null()) {
    out += csv_cell(where) + "," + csv_cell(j.is_string() ? j.get<std::string>() : j.dump()) + "\n";
  }
}

}  // namespace

std::string render_raw_document_text(const json& doc) {
  const json& r = doc.at("raw");
  const json& res = r.at("results");
  const json& lat = res.at("latency_us");
  const json& layout = r.value("layout", json::object());
  const json& engine = r.value("engine", json::object());
  std::string out;
  out += fmt::format("ioprobe raw: {} {} B, iodepth {}, numjobs {}, direct={} on {}{}\n", r.at("rw").get<std::string>(),
                     r.at("bs").get<uint64_t>(), r.at("iodepth").get<int>(), r.at("numjobs").get<int>(),
                     r.value("direct", false) ? 1 : 0, r.at("filename").get<std::string>(),
                     doc.value("partial", false) ? fmt::format("  [PARTIAL: {}]", res.value("stop_reason", "?")) : "");
  if (layout.contains("region_bytes"))
    out += fmt::format("  region      {} per job{}{}\n", format_bytes(layout.at("region_bytes").get<uint64_t>()),
                       layout.value("block_device", false) ? " (block device)" : "",
                       layout.value("note", "").empty() ? "" : "; " + layout.value("note", ""));
  const double residency = r.value("page_cache_resident_fraction", -1.0);
  if (residency >= 0)
    out += fmt::format("  page cache  {:.1f} % of the region resident at start{}\n", residency * 100,
                       raw_cache_note(r.value("direct", false),
                                      r.value("rw", std::string("read")).find("write") != std::string::npos,
                                      r.value("cache", std::string()), r.value("page_cache_evicted", json()) == true,
                                      residency));
  out += fmt::format("  engine      {} ({})\n", engine.value("name", "?"), engine.value("reason", ""));
  std::string notes;
  for (const auto& n : engine.value("notes", json::array()))
    notes += (notes.empty() ? "" : ", ") + n.get<std::string>();
  if (!notes.empty()) out += fmt::format("              {}\n", notes);
  out += fmt::format("  I/Os        {} in {}{}\n", format_count(res.at("ios").get<uint64_t>()),
                     format_seconds(res.at("elapsed_s").get<double>()),
                     res.contains("stop_reason") ? " (" + res.value("stop_reason", "") + ")" : "");
  out += fmt::format("  IOPS        {}\n",
                     format_count(static_cast<uint64_t>(std::llround(res.at("iops").get<double>()))));
  out += fmt::format("  throughput  {}\n", format_rate(res.at("bytes_per_s").get<double>()));
  out += raw_writes_line(r.value("direct", false),
                         r.value("rw", std::string("read")).find("write") != std::string::npos);
  auto ns = [&](const char* k) { return format_ns(lat.at(k).get<double>() * 1000.0); };
  out += fmt::format("  latency     mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n", ns("mean"), ns("p50"),
                     ns("p90"), ns("p99"), ns("p999"), ns("max"));
  const json& cpu = res.at("cpu");
  out += fmt::format("  CPU         user {:.2f} s  sys {:.2f} s  = {:.2f} µs per I/O (all threads incl. io_uring "
                     "workers)\n",
                     cpu.at("user_s").get<double>(), cpu.at("sys_s").get<double>(), cpu.at("per_io_us").get<double>());
  if (res.value("errors", uint64_t{0}) > 0) {
    out += fmt::format("  errors      {} (first: {}); the run stopped early\n",
                       format_count(res.at("errors").get<uint64_t>()), res.value("first_error", ""));
    // The hint from the errno stored beside the text (documents before it have none: no hint).
    const std::string hint = res.contains("first_error_detail") && res["first_error_detail"].is_object()
                                 ? error_hint(error_record_from_json(res["first_error_detail"], "raw.results"))
                                 : std::string();
    if (!hint.empty()) out += "              " + hint + "\n";
  }
  if (res.contains("device_io")) {  // as `raw` printed it when it ran
    const json& d = res["device_io"];
    out += fmt::format("  device I/O  {}{}\n", device_io_summary(d, d.contains("write_ratio") ? "written" : "read"),
                       d.contains("scope") ? fmt::format(" ({})", d.value("scope", "")) : "");
  }
  out += render_raw_hosts_text(doc);
  for (const auto& w : doc.value("warnings", json::array()))
    if (w.is_string()) out += "  warning     " + w.get<std::string>() + "\n";
  return out;
}

std::string render_document_csv(const json& doc) {
  if (doc.value("kind", "") == "tune") return render_tune_csv(tune_document_from_json(doc, "tune document"));
  std::string out = std::string(kDocumentCsvHeader) + "\n";
  flatten(doc, "", out);
  return out;
}

}  // namespace ioprobe
