// Terminal rendering of a "run" result document (the JSON is the source of truth, so
// `ioprobe report FILE.json` prints exactly what the run printed).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// The text report of a run document. Throws nlohmann::json::exception on a malformed document.
std::string render_run_text(const nlohmann::json& doc);

}  // namespace ioprobe
