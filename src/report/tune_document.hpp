// The "tune" result document as a typed value, its codec (report/tune_document_codec.cpp), its
// text rendering (report/tune_text.cpp) and the CSV of its points.
//
// Sections of a "tune" document, besides the header (schema, ioprobe_version, kind "tune", command,
// created_utc, host) and target, targets, dataset and warnings as in "run":
//   loader          {batch_size, gpus, engine, direct, shuffle, cpu_per_sample_us, step_time_s} + the consumer
//                   model (add_consumer_model's keys, report/run_document.hpp)
//   demand          {accelerator, accelerator_name, model, gpus, rate_family, samples_per_s_per_gpu, source,
//                    required_samples_per_s, required_bytes_per_s, sample_bytes, au_target}
//   tune            {workers[], prefetch_factors[], placements[], placements_reason, repeats, run_s, budget_s,
//                    elapsed_s, runs_done, runs_planned, stop_reason; with --calibration: calibration_effect}
//   points          [{num_workers, prefetch_factor, numa, status ("measured" | "not measured": the sweep stopped,
//                     interrupted or out of budget, before the setting ran; then repeats 0, runs [] and every
//                     figure null), pin_memory and run_s (measured only), repeats, steady_runs, samples_per_s
//                     (median), samples_per_s_min, samples_per_s_max, spread (fraction), bytes_per_s, au
//                     (fraction), cpu_used (CPUs), worker_busy (fraction),
//                     runs[{samples_per_s, bytes_per_s, au, au_min, rate_basis, cpu_used, elapsed_s,
//                           steady_samples, steady}],
//                     device_io (device accounting, when measured), worker_costs (with --calibration)}]
//   recommendation  {valid, meets_demand, point, best, knee (indexes into points), tolerance, shortfall_samples_per_s,
//                    numa, binding_helped, numa_reason, numactl, dataloader, pin_memory_note, oversubscribed, notes[]}
//   rules           [{rule, value, in_sweep, swept, measured, num_workers, samples_per_s (null when not measured),
//                     best_num_workers, best_samples_per_s, holds}]: rules of thumb read off the measured table
//                     (tune/rules.hpp)
//   best_run        the fastest single run's "results" section (as in a "run" document: timeline, latency);
//                   absent when no run finished
//   cluster         (multi-host only) {launcher, hosts, mpi_ranks, gpu_ranks, dataset_placement,
//                    dataset_placement_how, merge}: every setting ran on every process at once; the
//                    points' figures are the merged results
//   partial         true when the sweep was interrupted or ran out of budget
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ingest/analysis.hpp"
#include "ingest/calibration_effect.hpp"
#include "loader/loader_result.hpp"
#include "report/device_io_section.hpp"
#include "report/document_sections.hpp"
#include "report/run_document.hpp"
#include "tune/recommend.hpp"
#include "tune/rules.hpp"
#include "tune/sweep.hpp"
#include "tune/tune_stop.hpp"

namespace ioprobe {

/// The "status" of a point the sweep never ran.
inline constexpr const char* kTuneNotMeasured = "not measured";

/// The tune's loader section: the settings every point shares (num_workers and prefetch_factor are
/// the points'), and the consumer model.
struct TuneLoaderSection {
  uint32_t batch_size = 0;  // samples
  uint32_t gpus = 0;        // GPU ranks of this process
  EngineKind engine = EngineKind::kPsync;
  bool direct = false;  // O_DIRECT
  bool shuffle = false;
  double cpu_per_sample_us = 0;
  double step_time_s = 0;  // the GPU step, s
  RunConsumerModel consumer;
};

/// The GPUs' demand the sweep was measured against (the accelerator catalog's figures, or the user's).
struct TuneDemandSection {
  Demand demand;                      // per GPU; demand.gpus: GPU ranks of the whole job
  double required_samples_per_s = 0;  // all GPUs together
  double required_bytes_per_s = 0;    // required_samples_per_s x sample_bytes, B/s
  double sample_bytes = 0;            // B per sample: the dataset's, else what the sweep read
};

/// The plan of the sweep and how far it went.
struct TuneSweepSection {
  std::vector<uint32_t> workers;           // num_workers values swept
  std::vector<uint32_t> prefetch_factors;  // prefetch_factor values swept
  std::vector<std::string> placements;     // "none" | "node:N"
  std::string placements_reason;           // why these placements, one sentence
  uint32_t repeats = 0;                    // runs per setting
  double run_s = 0;                        // each run's length, s (a point's own run_s when lengthened)
  double budget_s = 0;                     // --budget, s
  double elapsed_s = 0;                    // the whole tune, s
  uint64_t runs_done = 0;
  uint64_t runs_planned = 0;
  TuneStop stop;  // written as stop_reason (tune/tune_stop.hpp)
  // With --calibration: what the calibration changes in the modelled CPU ceiling at the
  // recommended setting (a model, not a measurement; written by calibration_effect_json);
  // absent: tuned without one.
  std::optional<CalibrationEffect> calibration_effect;
};

/// The worker costs a point's runs took from the calibration (--calibration): µs per sample,
/// start-up CPU in s, at the point's worker processes per CPU.
struct TuneWorkerCosts {
  double workers_per_cpu = 0;
  double cpu_per_sample_us = 0;  // loop + put + other
  double loop_per_sample_us = 0;
  double put_per_sample_us = 0;
  double other_per_sample_us = 0;
  double startup_cpu_s = 0;
  std::string basis;  // which calibrated level(s) the costs come from, in words
};

/// A point's device accounting (cli/device_accounting.hpp TuneDeviceIo): its runs' device_io
/// section, without a reference (report/device_io_section.hpp), with the devices' read rate over
/// the runs' intervals and its ratio to the point's delivered rate.
struct TunePointDeviceIo {
  DeviceIoSection section;
  double device_read_bytes_per_s = 0;     // bytes_read / interval_s, B/s
  std::optional<double> read_rate_ratio;  // over the point's bytes_per_s; none (null): not measured
};

/// One setting of the sweep as the document keeps it: the measured point (no runs: "not measured";
/// its runs without worker_busy and intervals, which the document does not keep).
struct TunePointEntry {
  TunePoint point;
  std::optional<TunePointDeviceIo> device_io;   // where the devices were measured
  std::optional<TuneWorkerCosts> worker_costs;  // with --calibration only
};

/// A rule of thumb read off the table (tune/rules.hpp WorkersRule, in the document's words).
struct TuneRule {
  std::string rule;                          // "num_workers = 4 x CPU cores"
  uint32_t value = 0;                        // the rule's num_workers here
  bool in_sweep = false;                     // the sweep's plan held it
  bool swept = false;                        // the sweep ran it
  bool measured = false;                     // a steady point at it exists
  uint32_t num_workers = 0;                  // = value
  std::optional<double> samples_per_s;       // at the rule's setting, samples/s; absent: not measured
  std::optional<uint32_t> best_num_workers;  // the fastest point's; absent: none known
  std::optional<double> best_samples_per_s;  // samples/s there; absent: none known
  bool holds = false;                        // the rule's setting is within the tolerance of the best
};

/// A tune across hosts: how the job was laid out; every setting ran on every process at once.
struct TuneClusterSection {
  std::string launcher;  // "mpirun", "srun", ...
  int hosts = 0;
  int mpi_ranks = 0;
  uint32_t gpu_ranks = 0;         // summed over hosts
  std::string dataset_placement;  // "shared" | "node-local"
  std::string dataset_placement_how;
  std::string merge;  // how the processes' results were merged, in words
};

/// A "tune" result document, built once by `ioprobe tune` and read back by `ioprobe report`.
struct TuneDocument {
  RunHeader header;      // as a run's; the kind is "tune"
  TargetSection target;  // with the read setting (report/document_sections.hpp)
  std::vector<TargetShareSection> targets;
  DatasetSection dataset;
  TuneLoaderSection loader;
  TuneDemandSection demand;
  TuneSweepSection tune;
  std::vector<TunePointEntry> points;
  Recommendation recommendation;
  std::vector<TuneRule> rules;
  std::optional<LoaderResult> best_run;       // as far as a document keeps it (run_results_from_json)
  std::optional<TuneClusterSection> cluster;  // none: a one-process tune
  bool partial = false;
  std::vector<std::string> warnings;
};

/// The document exactly as `ioprobe tune` writes it (the keys above).
nlohmann::json tune_document_json(const TuneDocument& doc);

/// A saved tune document read back. Strict: a missing or mistyped field of a typed section is
/// refused with UsageError naming `where` (e.g. "'a.json'") and the field's path
/// ("'a.json'.points[2].repeats: ..."); indexes into points out of range are refused.
TuneDocument tune_document_from_json(const nlohmann::json& j, const std::string& where);

/// Writes tune_document_json(doc) to `path` as write_json_file does (atomically; its errors).
void write_tune_document(const std::string& path, const TuneDocument& doc);

/// The self-contained HTML page of one tune document (report/html_report.hpp).
std::string render_tune_html(const TuneDocument& doc);

/// The points as a tune document keeps them: each point with no device accounting or worker costs.
std::vector<TunePointEntry> tune_point_entries(const std::vector<TunePoint>& points);

/// True when the point holds measurements (its runs).
inline bool tune_point_measured(const TunePointEntry& p) { return !p.point.runs.empty(); }

/// The rules of thumb of a sweep: "num_workers = 4 x CPU cores" read off `points`.
std::vector<TuneRule> tune_rules(const WorkersRule& w, const std::vector<TunePoint>& points);

/// The "cluster" section of a tune run across hosts (above), with its merge rule.
TuneClusterSection tune_cluster_section(const std::string& launcher, int hosts, int mpi_ranks, uint32_t gpu_ranks,
                                        const std::string& placement, const std::string& placement_how);

/// The text report of a tune document: the table, the knee and the recommendation.
std::string render_tune_text(const TuneDocument& doc);

/// The points of a tune document as CSV (RFC 4180, header row, units in the column names); the
/// last column is the status, and a "not measured" row has empty figure fields.
std::string render_tune_csv(const TuneDocument& doc);

/// A CSV field: quoted when it holds a comma, quote, CR or LF; quotes doubled (RFC 4180).
std::string csv_field(const std::string& s);

}  // namespace ioprobe
