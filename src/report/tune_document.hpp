// The "tune" sections of the result document, its text rendering and the CSV of its points.
//
// Sections added to document_header("tune", ...), besides target, dataset and warnings as in "run":
//   loader          {batch_size, gpus, engine, direct, shuffle, cpu_per_sample_us, step_time_s}
//   demand          {accelerator, accelerator_name, model, gpus, rate_family, samples_per_s_per_gpu, source,
//                    required_samples_per_s, required_bytes_per_s, sample_bytes, au_target}
//   tune            {workers[], prefetch_factors[], placements[], placements_reason, repeats, run_s, budget_s,
//                    elapsed_s, runs_done, runs_planned, stop_reason}
//   points          [{num_workers, prefetch_factor, numa, status ("measured" | "not measured": the sweep stopped,
//                     interrupted or out of budget, before the setting ran; then repeats 0, runs [] and every
//                     figure null), repeats, samples_per_s (median), samples_per_s_min, samples_per_s_max, spread
//                     (fraction), bytes_per_s, au (fraction), cpu_used (CPUs), worker_busy (fraction),
//                     runs[{samples_per_s, bytes_per_s, au, cpu_used, elapsed_s}]}]
//   recommendation  {valid, meets_demand, point, best, knee (indexes into points), tolerance, shortfall_samples_per_s,
//                    numa, binding_helped, numa_reason, numactl, dataloader, oversubscribed, notes[]}
//   rules           [{rule, value, measured, num_workers, samples_per_s (null when not measured), best_num_workers,
//                     best_samples_per_s, holds}]: rules of thumb read off the measured table (tune/rules.hpp)
//   best_run        the fastest single run's "results" section (as in a "run" document: timeline, latency)
//   cluster         (multi-host only) {launcher, hosts, mpi_ranks, gpu_ranks, dataset_placement,
//                    dataset_placement_how, merge}: every setting ran on every process at once; the
//                    points' figures are the merged results
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune/recommend.hpp"
#include "tune/rules.hpp"
#include "tune/sweep.hpp"

namespace ioprobe {

/// The "status" of a point the sweep never ran.
inline constexpr const char* kTuneNotMeasured = "not measured";

/// The points array (above): a point without runs is "not measured", its figures null.
nlohmann::json tune_points_json(const std::vector<TunePoint>& points);

/// True when the point holds measurements: not "not measured" and at least one repeat (documents
/// written before "status" existed gave an unmeasured point zeros and repeats 0).
bool tune_point_measured(const nlohmann::json& point);
nlohmann::json recommendation_json(const Recommendation& r);

/// The "rules" array: "num_workers = 4 x CPU cores" read off `points`.
nlohmann::json tune_rules_json(const WorkersRule& w, const std::vector<TunePoint>& points);

/// The "cluster" section of a tune run across hosts (above).
nlohmann::json sweep_cluster_json(const std::string& launcher, int hosts, int mpi_ranks, uint32_t gpu_ranks,
                                  const std::string& placement, const std::string& placement_how);

/// The text report of a "tune" document: the table, the knee and the recommendation.
std::string render_tune_text(const nlohmann::json& doc);

/// The points of a "tune" document as CSV (RFC 4180, header row, units in the column names); the
/// last column is the status, and a "not measured" row has empty figure fields.
std::string render_tune_csv(const nlohmann::json& doc);

/// A CSV field: quoted when it holds a comma, quote, CR or LF; quotes doubled (RFC 4180).
std::string csv_field(const std::string& s);

}  // namespace ioprobe
