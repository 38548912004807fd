// The "checkpoint" section of the result document (kind "checkpoint") and its text rendering.
// The text is rendered from the JSON, so `ioprobe report FILE.json` can re-render it.
// Keys: see checkpoint_json.cpp; every rate is bytes_per_s (print as MB/s = 10^6 B/s and MiB/s).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/run_data.hpp"

namespace ioprobe {

/// Builds the "checkpoint" section, with derived figures (ratios, goals, bound, MLPerf-style
/// duration = max over ranks and throughput = min over ranks).
nlohmann::json checkpoint_json(const checkpoint::CheckpointRunData& d);

/// Human-readable report of a whole result document of kind "checkpoint".
std::string render_checkpoint_text(const nlohmann::json& doc);

}  // namespace ioprobe
