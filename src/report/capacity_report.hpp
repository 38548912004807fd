// The capacity search's section of the result document (kind "capacity"), its text report and
// its HTML section (AU against accelerators with the floor line; samples/s against accelerators
// with the demand line).
//
// Document section "capacity": {accelerator, accelerator_name, model, au_target, gpus_fed, bound
// ("storage" | "metadata" | "workers" | "client-cpu" | "limit" | "budget"), boundary_measured, answer,
// samples_per_s_per_gpu, sample_bytes, point_s, repeats, budget_s, elapsed_s, max_gpus, stop_reason, points [{gpus, au,
// au_min, samples_per_s, bytes_per_s, repeats, spread, demand_samples_per_s, cpu_fraction, consumer_lag, client_bound,
// workers_bound, metadata_bound, steady, passed, note}]} (reports/result.schema.json).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "capacity/search.hpp"

namespace ioprobe {

/// What the section needs beyond the search's answer.
struct CapacitySectionInputs {
  std::string accelerator, accelerator_name, model;
  double au_target = 0.9;            // fraction
  double samples_per_s_per_gpu = 0;  // the demand of one emulated accelerator
  double sample_bytes = 0;           // bytes per sample for the bytes/s demand
  double point_s = 0, budget_s = 0, elapsed_s = 0;
  uint32_t repeats = 0, max_gpus = 0;
  std::string stop_reason;  // "completed" | "limit" | "budget" | "interrupted"
};

nlohmann::json capacity_json(const CapacityAnswer& a, const CapacitySectionInputs& in);

/// The text report of a "capacity" document. Throws nlohmann::json::exception when required
/// fields are missing.
std::string render_capacity_text(const nlohmann::json& doc);

/// The HTML section body of a "capacity" document: the answer, the two charts
/// (<svg data-chart="capacity-au"> and data-chart="capacity-rate") and the table of points; across
/// hosts each point's host rows under it (<tr class="host" data-host="NAME">), every string escaped.
std::string render_capacity_html(const nlohmann::json& doc);

}  // namespace ioprobe
