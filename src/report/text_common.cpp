#include "report/text_common.hpp"

#include <fmt/format.h>

#include "core/units.hpp"

namespace ioprobe {

std::string render_warnings(const nlohmann::json& doc) {
  std::string o;
  if (!doc.contains("warnings") || doc["warnings"].empty()) return o;
  o += "\nWarnings\n";
  for (const auto& w : doc["warnings"]) o += "  - " + w.get<std::string>() + "\n";
  return o;
}

std::string render_targets(const nlohmann::json& doc, const std::string& label, size_t width) {
  return doc.contains("targets") ? render_target_rows(doc["targets"], label, width) : std::string();
}

std::string render_target_rows(const nlohmann::json& targets, const std::string& label, size_t width) {
  std::string o;
  if (targets.size() < 2) return o;
  for (const auto& g : targets) {
    const std::string dev = g.value("device", "");
    const auto& bf = g["bytes_fraction"];
    const uint64_t files = g.value("files", 0ULL);
    o += fmt::format("  {:<{}} {} at {}{}: {} file{} ({:.0f}%), {}{}, O_DIRECT {}{}\n", o.empty() ? label : "", width,
                     g.value("fs_type", "?"), g.value("path", ""), dev.empty() ? "" : " (" + dev + ")",
                     format_count(files), files == 1 ? "" : "s", 100 * g.value("files_fraction", 0.0),
                     format_bytes(g.value("bytes", 0ULL)),
                     bf.is_number() ? fmt::format(" ({:.0f}%)", 100 * bf.get<double>()) : "",
                     g.value("o_direct", "not probed"), g.value("memory_backed", false) ? "; RAM, not a device" : "");
  }
  return o;
}

std::string render_target_line(const nlohmann::json& doc) {
  const nlohmann::json& tg = doc.at("target");
  const nlohmann::json& ds = doc.at("dataset");
  const uint64_t bytes = ds.value("bytes", 0ULL);
  const std::string basis = ds.value("bytes_basis", "");
  return fmt::format("  target     {} ({}, {}), {} files, {}{}\n", tg.value("path", ""), tg.value("fs_type", "?"),
                     tg.value("direct", false) ? "O_DIRECT" : "buffered", format_count(ds.value("files", 0ULL)),
                     bytes > 0 ? format_bytes(bytes) : std::string("sizes not indexed"),
                     basis.empty() ? "" : fmt::format(" ({})", basis));
}

std::string render_calibration_line(const nlohmann::json& doc, const std::string& label, size_t width,
                                    const std::string& lead) {
  if (!doc.contains("loader") || !doc["loader"].is_object() || !doc["loader"].contains("calibration")) return "";
  const nlohmann::json& cal = doc["loader"]["calibration"];
  return fmt::format("  {:<{}} {}{} ({}:{} on {}, torch {}, batch size {})\n", label, width, lead,
                     cal.value("file", ""), cal.value("code", ""), cal.value("function", ""), cal.value("host", ""),
                     cal.value("torch_version", ""), cal.value("batch_size", 0));
}

}  // namespace ioprobe
