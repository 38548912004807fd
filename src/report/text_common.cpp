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

std::string render_target_rows(const std::vector<TargetShareSection>& targets, const std::string& label, size_t width) {
  std::string o;
  if (targets.size() < 2) return o;
  for (const auto& g : targets) {
    const TargetSection& t = g.target;
    o += fmt::format("  {:<{}} {} at {}{}: {} file{} ({:.0f}%), {}{}, O_DIRECT {}{}\n", o.empty() ? label : "", width,
                     t.fs_type, t.path, t.device.empty() ? "" : " (" + t.device + ")", format_count(g.files),
                     g.files == 1 ? "" : "s", 100 * g.files_fraction, format_bytes(g.bytes),
                     g.bytes_fraction ? fmt::format(" ({:.0f}%)", 100 * *g.bytes_fraction) : "", t.o_direct,
                     t.memory_backed ? "; RAM, not a device" : "");
  }
  return o;
}

std::string render_target_line(const TargetSection& target, const DatasetSection& dataset) {
  const bool direct = target.reading && target.reading->direct;
  return fmt::format("  target     {} ({}, {}), {} files, {}{}\n", target.path, target.fs_type,
                     direct ? "O_DIRECT" : "buffered", format_count(dataset.files),
                     dataset.bytes > 0 ? format_bytes(dataset.bytes) : std::string("sizes not indexed"),
                     dataset.bytes_basis ? fmt::format(" ({})", *dataset.bytes_basis) : "");
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
