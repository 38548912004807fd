// The calibration_effect section of run, tune and capacity documents (--calibration), its text
// line and the run HTML report's row: the loader's CPU ceiling modelled with the calibration's
// costs beside the same model with the costs a run without --calibration takes
// (ingest/calibration_effect.hpp). A model, labelled "modelled" in the document, the text and the
// HTML, never a measurement.
//
// calibration_effect: {label: "modelled", setting: {ranks, num_workers, batch_size, cpus},
//   calibrated_ceiling_samples_per_s, uncalibrated_ceiling_samples_per_s (samples/s; null: that
//   model sets no CPU ceiling), calibrated_bound, uncalibrated_bound ("workers" | "GIL" | "main process" |
//   "CPUs" | "none"), calibrated / uncalibrated: {worker_us_per_sample, cpu_us_per_sample (µs),
//   workers_samples_per_s, main_samples_per_s, cpus_samples_per_s (samples/s, null: no bound)},
//   model: the formula in words}
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ingest/calibration_effect.hpp"

namespace ioprobe {

/// The calibration_effect section of `e` (the layout above).
nlohmann::json calibration_effect_json(const CalibrationEffect& e);

/// A calibration_effect section (calibration_effect_json's layout) read back. Strict: a missing or
/// mistyped key is refused with UsageError naming `where` and the key's path; a rate written as null
/// (no bound) reads as 0; label and model are checked for type and written again by
/// calibration_effect_json.
CalibrationEffect calibration_effect_from_json(const nlohmann::json& j, const std::string& where);

/// The text of the line below without its label: "modelled, not measured: CPU ceiling at ..."
/// (the HTML report's row). "" without an effect.
std::string calibration_effect_text(const std::optional<CalibrationEffect>& effect, double delivered_samples_per_s = 0,
                                    const std::string& delivered_label = "the run delivered");

/// "  LABEL  modelled, not measured: CPU ceiling at R rank(s) x W worker(s) on C CPU(s): with the
/// calibration X samples/s (bound: ...), without it no CPU ceiling (...)" for a calibration_effect section,
/// with `delivered_samples_per_s` (> 0: a measured rate, e.g. the run's) as a share of the
/// calibrated ceiling; `delivered_label` names it ("the run delivered"). The label is padded to
/// `width`. "" without an effect.
std::string render_calibration_effect_line(const std::optional<CalibrationEffect>& effect, const std::string& label,
                                           size_t width, double delivered_samples_per_s = 0,
                                           const std::string& delivered_label = "the run delivered");

}  // namespace ioprobe
