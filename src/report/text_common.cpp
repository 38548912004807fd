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
  std::string o;
  if (!doc.contains("targets") || doc["targets"].size() < 2) return o;
  for (const auto& g : doc["targets"]) {
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

}  // namespace ioprobe
