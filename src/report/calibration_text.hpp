// The text report of a calibration document (`ioprobe calibrate`, and `ioprobe report CAL.json`).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// The figures with their spread, where and on what they were measured, and the options that use
/// them. `doc` is a calibration document (calibrate/calibration.hpp calibration_to_json).
std::string render_calibration_text(const nlohmann::json& doc);

}  // namespace ioprobe
