// Builds the "run" sections of the result document from measured values.
//
// Sections added to document_header("run", ...):
//   target   target_json() + {cache: "cold"|"warm", direct: bool, cache_detail, engine, engine_reason}
//   dataset  {preset, description, model, root, files, bytes, dirs, full_files, size_dist, size_mean_bytes,
//             size_stdev_bytes, action, generate_s, enumerate_s, skipped, kind ("files" | "sharded" | "token"),
//             records_per_file; sharded and token: records, size_* of one record; token: seq_len, token_bytes}
//   loader   {num_workers, batch_size, prefetch_factor, shuffle, drop_last, epochs, duration_s,
//             cpu_per_sample_us, gpus, engine, direct, step_time_s, max_outstanding_batches, pattern;
//             sharded: read_size_bytes}
//   results  {samples, bytes (delivered in batches), io_bytes (transferred, O_DIRECT padding included), errors,
//   elapsed_s, samples_per_s, bytes_per_s, files_per_s,
//             epochs_completed, stop_reason, first_batch_s,
//             file_latency_us{count,mean,min,p50,p90,p99,p999,max,sum_ns,buckets} (report/latency_json.hpp),
//             open_close_latency_us{...}, batch_wait_us{...}, consumer_wait_s, cpu{user_s, sys_s, per_sample_us},
//             workers[...], timeline[...], error_samples[] (their lines), error_details[] (report/error_text.hpp),
//             error_files (distinct files among error_details: exact when error_files_complete, else a lower bound,
//             later distinct failures dropped), error_files_complete (error_details' counts sum to errors); with
//             --decode jpeg: decode{codec, samples, errors, cpu_s, cpu_us_per_sample, megapixels, us_per_megapixel}:
//             worker-thread CPU of libjpeg-turbo's decode, measured per sample}
//   ingest   {accelerator, accelerator_name, model, gpus, rate_family, samples_per_s_per_gpu, source,
//             required_samples_per_s, required_bytes_per_s, sample_bytes, delivered_samples_per_s,
//             delivered_bytes_per_s, accelerator_utilization, accelerator_utilization_min, au_target,
//             worker_busy_fraction, gpus_fed (measured by this run), main_busy_fraction,
//             main_ceiling_samples_per_s, pin_busy_fraction, pin_ceiling_samples_per_s, worker_cpu_fraction,
//             worker_runq_fraction (workers' wait for a CPU / their busy time; null: not measured),
//             worker_feeder_busy_fraction, worker_feeder_ceiling_samples_per_s (the workers' queue feeder
//             threads: put CPU / (elapsed x workers), and the samples/s they cap the workers at; 0: no put
//             modelled), verdict, verdict_text}
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ingest/analysis.hpp"
#include "loader/loader_result.hpp"
#include "report/latency_json.hpp"
#include "stats/histogram.hpp"

namespace ioprobe {

/// The "results" section as a typed value: what loader_results_json writes and
/// `ioprobe report --merge` reads back from saved documents, adds and writes again.
struct RunResults {
  uint64_t samples = 0, bytes = 0, io_bytes = 0, errors = 0;
  double elapsed_s = 0;  // from the common start to the last batch
  uint32_t epochs_completed = 0;
  std::string stop_reason;
  double first_batch_s = 0;                                 // max over ranks
  LatencyHistogram file_latency, open_latency, batch_wait;  // ns
  double consumer_wait_s = 0;                               // summed over ranks
  double cpu_user_s = 0, cpu_sys_s = 0;                     // summed over processes
  Timeline timeline;                                        // summed over ranks, interval by interval
  nlohmann::json workers = nlohmann::json::array();         // per-worker rows, as written
  std::vector<ErrorRecord> error_samples;                   // the first kMaxErrorSamples distinct failures, with counts
  uint64_t error_files = 0;        // distinct files the failures hit (LoaderResult::error_files), or a lower bound
  bool error_files_exact = false;  // error_files is exact (the document's error_files_complete)
  // --decode jpeg, summed over workers (and parts): samples decoded, those that failed, the
  // workers' CPU time decoding (ns) and the pixels decoded. All 0: no decode ran.
  uint64_t decoded = 0, decode_errors = 0, decoded_pixels = 0;
  int64_t decode_cpu_ns = 0;

  /// Adds another part of a run (another host's document): counts, CPU and waits add,
  /// histograms and timelines add bucket by bucket (percentiles of the sum are exact to the
  /// bucket), elapsed_s and first_batch_s are the max, epochs_completed the min; rates are
  /// recomputed by run_results_json as totals / max elapsed. Throws UsageError when the
  /// timelines' intervals differ (nothing changed then).
  void merge(const RunResults& other);
};

/// The values of the results section of a run.
RunResults run_results_of(const LoaderResult& r);
/// The results section (keys above; rates = totals / elapsed_s).
nlohmann::json run_results_json(const RunResults& r);
/// Reads a results section `j` back. Throws UsageError naming `where` ("'A.json' results") and the
/// key that is missing or mistyped; documents written before latency buckets were saved are
/// refused with that reason.
RunResults run_results_from_json(const nlohmann::json& j, const std::string& where);

/// nlohmann's hooks: `nlohmann::json j = results;` and `j.get<RunResults>()` (errors name "results").
void to_json(nlohmann::json& j, const RunResults& r);
void from_json(const nlohmann::json& j, RunResults& r);

/// run_results_json(run_results_of(r)).
nlohmann::json loader_results_json(const LoaderResult& r);

nlohmann::json ingest_json(const IngestResult& in, double sample_bytes);

/// Adds the consumer model to a run's or tune's `loader` section: main_cpu_per_batch_us, decode
/// ("jpeg" | "none"),
/// pin_memory, pin_bytes_per_batch (0: the bytes read) and, with --calibration, "calibration":
/// {file, code, function, host, torch_version, batch_size, created} from the document `cal`.
void add_consumer_model(nlohmann::json& loader, const LoaderConfig& l, const std::string& cal_path,
                        const nlohmann::json& cal);

}  // namespace ioprobe
