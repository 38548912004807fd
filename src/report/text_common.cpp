#include "report/text_common.hpp"

namespace ioprobe {

std::string render_warnings(const nlohmann::json& doc) {
  std::string o;
  if (!doc.contains("warnings") || doc["warnings"].empty()) return o;
  o += "\nWarnings\n";
  for (const auto& w : doc["warnings"]) o += "  - " + w.get<std::string>() + "\n";
  return o;
}

}  // namespace ioprobe
