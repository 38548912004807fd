#include "report/calibration_effect_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/json_field.hpp"
#include "core/units.hpp"

namespace ioprobe {

namespace {

nlohmann::json rate_or_null(double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json ceiling_json(const CpuCeiling& c) {
  return {{"worker_us_per_sample", c.worker_us_per_sample},
          {"cpu_us_per_sample", c.cpu_us_per_sample},
          {"workers_samples_per_s", rate_or_null(c.workers_samples_per_s)},
          {"main_samples_per_s", rate_or_null(c.main_samples_per_s)},
          {"cpus_samples_per_s", rate_or_null(c.cpus_samples_per_s)}};
}

// "2,450 samples/s (bound: workers, 3,265 µs CPU per sample in a worker)" or "no CPU ceiling (...)":
// one side of the effect (a rate of 0 is written as null: no ceiling).
std::string ceiling_text(const CpuCeiling& c) {
  if (!(c.samples_per_s > 0))
    return fmt::format("no CPU ceiling ({:.0f} µs CPU per sample modelled)", c.cpu_us_per_sample);
  return fmt::format("{} samples/s (bound: {}; {:.0f} µs CPU per sample in a worker, {:.0f} µs in all threads)",
                     format_count(static_cast<uint64_t>(std::llround(c.samples_per_s))), c.bound,
                     c.worker_us_per_sample, c.cpu_us_per_sample);
}

// A number that is written as null when 0 (calibration_effect_json's rates): 0 for null.
double effect_rate_or_null(const nlohmann::json& j, const char* key, const std::string& w) {
  const nlohmann::json& v = json_at(j, key, w);
  return v.is_null() ? 0 : json_as<double>(v, json_path(w, key));
}

CpuCeiling effect_ceiling_from_json(const nlohmann::json& effect, const char* which, const std::string& w) {
  CpuCeiling c;
  const std::string parts = json_path(w, which);
  const nlohmann::json& p = json_at(effect, which, w);
  c.worker_us_per_sample = json_field<double>(p, "worker_us_per_sample", parts);
  c.cpu_us_per_sample = json_field<double>(p, "cpu_us_per_sample", parts);
  c.workers_samples_per_s = effect_rate_or_null(p, "workers_samples_per_s", parts);
  c.main_samples_per_s = effect_rate_or_null(p, "main_samples_per_s", parts);
  c.cpus_samples_per_s = effect_rate_or_null(p, "cpus_samples_per_s", parts);
  const std::string total = fmt::format("{}_ceiling_samples_per_s", which);
  c.samples_per_s = effect_rate_or_null(effect, total.c_str(), w);
  const std::string bound = fmt::format("{}_bound", which);
  c.bound = json_field<std::string>(effect, bound.c_str(), w);
  return c;
}

}  // namespace

nlohmann::json calibration_effect_json(const CalibrationEffect& e) {
  return {{"label", "modelled"},
          {"setting",
           {{"ranks", e.ranks}, {"num_workers", e.num_workers}, {"batch_size", e.batch_size}, {"cpus", e.cpus}}},
          {"calibrated_ceiling_samples_per_s", rate_or_null(e.calibrated.samples_per_s)},
          {"uncalibrated_ceiling_samples_per_s", rate_or_null(e.uncalibrated.samples_per_s)},
          {"calibrated_bound", e.calibrated.bound},
          {"uncalibrated_bound", e.uncalibrated.bound},
          {"calibrated", ceiling_json(e.calibrated)},
          {"uncalibrated", ceiling_json(e.uncalibrated)},
          {"model",
           "the lowest of: workers = ranks x num_workers x 1e6 / a worker's serial CPU per sample (with the GIL: "
           "loop + put x GIL share + other threads; else the largest of them); GIL (a thread pipeline only) = ranks x "
           "1e6 / (CPU per sample x its GIL share); main process = ranks x batch_size x "
           "1e6 / main-process CPU per batch; CPUs = cpus x 1e6 / all threads' CPU per sample. Uncalibrated: the "
           "same with the costs of a run without --calibration (--cpu-per-sample and --main-cpu-per-batch at 0)"}};
}

std::string calibration_effect_text(const std::optional<CalibrationEffect>& effect, double delivered,
                                    const std::string& delivered_label) {
  if (!effect) return "";
  const CalibrationEffect& e = *effect;
  std::string text = fmt::format(
      "modelled, not measured: CPU ceiling at {} rank(s) x {} worker(s) on {} CPU(s): with the calibration {}, "
      "without it {}",
      e.ranks, e.num_workers, e.cpus, ceiling_text(e.calibrated), ceiling_text(e.uncalibrated));
  if (delivered > 0 && e.calibrated.samples_per_s > 0)
    text += fmt::format("; {} {} samples/s (measured) = {:.0f}% of the calibrated ceiling", delivered_label,
                        format_count(static_cast<uint64_t>(std::llround(delivered))),
                        100 * delivered / e.calibrated.samples_per_s);
  return text;
}

std::string render_calibration_effect_line(const std::optional<CalibrationEffect>& effect, const std::string& label,
                                           size_t width, double delivered, const std::string& delivered_label) {
  if (!effect) return "";
  return fmt::format("  {:<{}} {}\n", label, width, calibration_effect_text(effect, delivered, delivered_label));
}

CalibrationEffect calibration_effect_from_json(const nlohmann::json& j, const std::string& w) {
  CalibrationEffect e;
  json_field<std::string>(j, "label", w);
  json_field<std::string>(j, "model", w);
  const std::string sw = json_path(w, "setting");
  const nlohmann::json& s = json_at(j, "setting", w);
  e.ranks = json_field<uint32_t>(s, "ranks", sw);
  e.num_workers = json_field<uint32_t>(s, "num_workers", sw);
  e.batch_size = json_field<uint32_t>(s, "batch_size", sw);
  e.cpus = json_field<int>(s, "cpus", sw);
  e.calibrated = effect_ceiling_from_json(j, "calibrated", w);
  e.uncalibrated = effect_ceiling_from_json(j, "uncalibrated", w);
  return e;
}

}  // namespace ioprobe
