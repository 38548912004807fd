// Pieces shared by the text renderings of result documents.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// "\nWarnings\n  - ...\n" for the document's "warnings" array; empty when there are none.
std::string render_warnings(const nlohmann::json& doc);

}  // namespace ioprobe
