// Builds the "run" sections of the result document from measured values.
//
// Sections added to document_header("run", ...):
//   target   target_json() + {cache: "cold"|"warm", direct: bool, cache_detail, engine, engine_reason}
//            + the run's facts (report/document_sections.hpp TargetRunFacts)
//   targets  report/document_sections.hpp targets
//   dataset  report/document_sections.hpp DatasetSection: {preset, description, model, root, files, bytes, dirs,
//             full_files, size_dist, size_mean_bytes, size_stdev_bytes, action, generate_s, enumerate_s, skipped,
//             kind ("files" | "sharded" | "token"), records_per_file; sharded and token: records, size_* of one
//             record; token: seq_len, token_bytes}
//   loader   {num_workers, batch_size, prefetch_factor, shuffle, drop_last, epochs, duration_s,
//             cpu_per_sample_us, gpus, engine, direct, step_time_s, max_outstanding_batches, pattern;
//             sharded: read_size_bytes}
//   results  {samples, bytes (delivered in batches), io_bytes (transferred, O_DIRECT padding included), errors,
//   elapsed_s, samples_per_s, bytes_per_s, files_per_s,
//             epochs_completed, stop_reason, first_batch_s,
//             file_latency_us{count,mean,min,p50,p90,p99,p999,max,sum_ns,buckets} (stats/latency_json.hpp),
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

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ingest/analysis.hpp"
#include "ingest/calibration_effect.hpp"
#include "loader/config.hpp"
#include "loader/loader_result.hpp"
#include "report/cluster_json.hpp"
#include "report/device_io_section.hpp"
#include "report/document.hpp"
#include "report/document_sections.hpp"
#include "stats/latency_json.hpp"
#include "topology/host.hpp"

namespace ioprobe {

/// A result's rates as its results section writes them: elapsed_s, then samples, bytes and
/// files (samples + errors) per second over it (0 when nothing was timed), and its CPU (user + sys)
/// per sample in µs.
struct ResultRates {
  double elapsed_s = 0;
  double samples_per_s = 0;
  double bytes_per_s = 0;  // B/s
  double files_per_s = 0;
  double cpu_per_sample_us = 0;
};
ResultRates result_rates(const LoaderResult& r);

/// The JPEG decode totals of a result (--decode jpeg), summed over its workers' rows: samples
/// decoded, errors, worker-thread CPU (s), µs per sample (decoded + errors), megapixels, µs per
/// megapixel. Absent when no worker decoded.
struct DecodeTotals {
  uint64_t samples = 0;
  uint64_t errors = 0;
  double cpu_s = 0;
  double cpu_us_per_sample = 0;
  double megapixels = 0;
  double us_per_megapixel = 0;
};
std::optional<DecodeTotals> decode_totals(const LoaderResult& r);

/// The results section of a run (keys above) from the loader's result: rates = totals /
/// elapsed_s; the decode object from the workers' decode counters (each worker row carries its own
/// decoded, decode_errors, decode_cpu_s and decoded_pixels when it decoded).
nlohmann::json loader_results_json(const LoaderResult& r);

/// A saved document's results section `j` read back into the result it was written from, as far
/// as a document keeps it: totals, histograms, timeline, CPU, error records, the workers' rows (no
/// per-worker histograms) and, from results.epochs when present, the per-epoch samples, bytes,
/// times and residency; no GPU ranks. `ioprobe report --merge` merges these with
/// LoaderResult::merge, the merge of the hosts' parts. Times in seconds come back in ns (rounded).
/// Throws UsageError naming `where` ("'A.json' results") and the key's path when a key is missing
/// or mistyped; documents written before latency buckets were saved are refused with that reason.
/// Optional, for older documents: error_details (then the error_samples texts, no errno), the
/// workers' put_cpu_s, other_cpu_s and runq_wait_s (null or absent: not measured), their decode
/// counters (an older document's decode totals are kept on its first worker row).
LoaderResult run_results_from_json(const nlohmann::json& j, const std::string& where);

nlohmann::json ingest_json(const IngestResult& in, double sample_bytes);

/// Adds the consumer model to a run's or tune's `loader` section: main_cpu_per_batch_us, decode
/// ("jpeg" | "none"),
/// pin_memory, pin_bytes_per_batch (0: the bytes read) and, with --calibration, "calibration":
/// {file, code, function, host, torch_version, batch_size, created} from the document `cal`.
void add_consumer_model(nlohmann::json& loader, const LoaderConfig& l, const std::string& cal_path,
                        const nlohmann::json& cal);

/// The document header of a run (report/document.hpp document_header).
struct RunHeader {
  std::string schema = kResultSchema;  // "ioprobe.result/1"
  std::string ioprobe_version;         // e.g. "0.1.0"
  std::vector<std::string> command;    // the argv, each element escaped with escape_bytes()
  std::string created_utc;             // ISO 8601 time of the run's start
  HostSection host;                    // report/document_sections.hpp
};

/// The demand's keys (accelerator, accelerator_name, model, gpus, rate_family,
/// samples_per_s_per_gpu, source, au_target) as run's ingest and tune's demand sections write
/// them; demand_from_json reads them back strictly (a missing or mistyped one named by its path).
nlohmann::json demand_json(const Demand& d);
Demand demand_from_json(const nlohmann::json& j, const std::string& where);

/// The header's keys (schema, ioprobe_version, kind, command, created_utc, host) of a document of
/// kind `kind` ("run", "tune", ...), as document_header() writes them; a document's codec adds its
/// sections to this object.
nlohmann::json header_json(const RunHeader& h, const char* kind);

/// A saved document's header read back, strictly: the schema must be kResultSchema and the kind
/// `kind`, else UsageError naming `where` and the field ("'a.json'.kind: 'tune' is not a run
/// document"); a missing or mistyped field is refused naming its path (core/json_field.hpp).
RunHeader header_from_json(const nlohmann::json& j, const char* kind, const std::string& where);

/// The calibration document a run's consumer model came from (--calibration): where it was
/// measured, not its figures (those are the loader section's). Fields as in the calibrate document.
struct RunCalibrationRef {
  std::string file;           // the calibration document's path, escaped
  std::string code;           // the user's Dataset file
  std::string function;       // its factory function
  std::string host;           // hostname it was measured on
  std::string torch_version;  // torch.__version__ there
  int batch_size = 0;         // the batch size it was measured at, samples
  std::string created;        // ISO 8601 time of the calibration
};

/// The consumer model of a run's loader section (add_consumer_model): CPU costs in µs, bytes in B.
struct RunConsumerModel {
  double main_cpu_per_batch_us = 0;
  double own_read_cpu_per_file_us = 0;  // of the loop cost, the read the worker does itself (not burned)
  double worker_startup_cpu_us = 0;
  double worker_put_cpu_per_sample_us = 0;
  std::optional<double> worker_put_gil_share;  // with python_gil only: share 0..1 of the put holding the GIL
  std::string worker_put_gil_share_basis;      // with python_gil only: "measured" or "not measured (WHY)"
  double worker_other_cpu_per_sample_us = 0;
  uint32_t tensors_per_batch = 0;
  double main_startup_cpu_us = 0;
  std::string decode = "none";  // "jpeg" | "none"
  bool pin_memory = false;
  double pin_bytes_per_batch = 0;  // B; 0: the bytes read
  std::optional<RunCalibrationRef> calibration;
};

/// The run's loader section: the DataLoader setting that was emulated.
struct RunLoaderSection {
  uint32_t num_workers = 0;
  uint32_t batch_size = 0;  // samples
  uint32_t prefetch_factor = 0;
  bool shuffle = false;
  bool drop_last = false;
  uint32_t epochs = 0;
  double duration_s = 0;  // 0: no time limit
  double cpu_per_sample_us = 0;
  uint64_t gpus = 0;  // GPU ranks of the whole job (a merged document: summed over its inputs)
  uint32_t gpus_per_process = 0;
  EngineKind engine = EngineKind::kPsync;
  bool direct = false;  // O_DIRECT
  double step_time_s = 0;
  uint64_t seed = 0;
  uint64_t max_outstanding_batches = 0;     // rank 0's most batches in flight
  std::string pattern;                      // how the loader reads the dataset, in words
  std::optional<uint64_t> read_size_bytes;  // sharded datasets only: bytes per shard read
  // Sharded datasets read in webdataset's order only: the samples each worker's shuffle buffer
  // holds, and holds before it yields the first.
  std::optional<uint64_t> shuffle_buffer_samples;
  std::optional<uint64_t> shuffle_initial_samples;
  RunConsumerModel consumer;
};

/// The run's results section: what the loader delivered.
struct RunResultsSection {
  LoaderResult loader;  // as far as a document keeps it (run_results_from_json): no ranks, no per-worker histograms
  std::optional<DeviceIoSection> device_io;     // results.device_io (device_io_section.hpp); none: not written
  std::optional<std::vector<RunEpoch>> epochs;  // results.epochs (device_io_report.hpp run_epochs); none: not written
};

/// The run's ingest section: the GPUs' demand against what was delivered.
struct RunIngestSection {
  std::optional<IngestResult> result;       // absent: not available (a merged document), see unavailable_reason
  double sample_bytes = 0;                  // B per sample the demand in bytes/s uses
  std::string unavailable_reason;           // why there is no result
  std::optional<std::string> bytes_source;  // where the bytes came from (device accounting); absent: not measured
  // With --calibration: what the calibration changed in the modelled CPU ceiling
  // (report/calibration_effect_report.hpp writes and reads it); none: a run without one.
  std::optional<CalibrationEffect> calibration_effect;
};

/// One input of a merged run document (report --merge): its figures as that document gave them.
struct RunSource {
  std::string file;  // escaped path
  std::string hostname;
  uint64_t samples = 0;
  uint64_t bytes = 0;
  double samples_per_s = 0;
  double bytes_per_s = 0;
  double elapsed_s = 0;
  double file_latency_p99_us = 0;
};

/// A "run" result document, built once by `ioprobe run` (cli/run_document_build.hpp) and read back
/// by `ioprobe report` (report/run_document_codec.cpp); every section is typed.
struct RunDocument {
  RunHeader header;
  TargetSection target;  // with the read setting and the run's facts
  std::vector<TargetShareSection> targets;
  DatasetSection dataset;
  RunLoaderSection loader;
  RunResultsSection results;
  RunIngestSection ingest;
  bool partial = false;  // interrupted, or stopped early by errors
  std::vector<std::string> warnings;
  std::optional<RunClusterSection> cluster;      // report/cluster_json.hpp; none: a one-process run
  std::optional<std::vector<RunHostRow>> hosts;  // none: a one-process run
  std::vector<RunSource> sources;                // a merged document's inputs; empty otherwise
  bool sources_apart = false;                    // a merged document whose inputs did not run at the same time
};

/// The document exactly as `ioprobe run` writes it (the keys above).
nlohmann::json run_document_json(const RunDocument& doc);

/// Writes run_document_json(doc) to `path` as write_json_file does (atomically; its errors).
void write_run_document(const std::string& path, const RunDocument& doc);

/// A saved run document read back. Strict: a missing or mistyped field of a typed section is
/// refused with UsageError naming `where` (e.g. "'a.json'") and the field's path
/// ("'a.json'.loader.num_workers: missing key ..."; "'a.json'.target.fs_type: expected a string, ...").
/// The optional sections (results.device_io, results.epochs, ingest.calibration_effect, cluster,
/// hosts) are read strictly when present.
RunDocument run_document_from_json(const nlohmann::json& j, const std::string& where);

/// The ingest section of a run whose demand was analysed (ingest_json's keys).
RunIngestSection run_ingest_section(const IngestResult& in, double sample_bytes);

/// The loader section of a run: `l` the loader's configuration (world_ranks set), `max_outstanding`
/// rank 0's most batches in flight, `pattern` the read pattern in words, `sharded` whether the
/// dataset is sharded (then read_size_bytes), and the consumer model (add_consumer_model's keys;
/// `cal` the --calibration document or null).
RunLoaderSection run_loader_section(const LoaderConfig& l, uint64_t max_outstanding, const std::string& pattern,
                                    bool sharded, const std::string& cal_path, const nlohmann::json& cal);

/// The consumer model of `l` (add_consumer_model's keys): `cal` the --calibration document read
/// from `cal_path`, or null. Reads the calibration's names with defaults (it was checked when read).
RunConsumerModel consumer_model(const LoaderConfig& l, const std::string& cal_path, const nlohmann::json& cal);

/// Writes `m` into a loader section (run's, tune's or capacity's).
void consumer_model_json(const RunConsumerModel& m, nlohmann::json& loader);

/// The consumer model of a loader section `loader` read back strictly (UsageError naming the
/// field under `where`); its calibration object is optional (written with --calibration only).
RunConsumerModel consumer_model_from_json(const nlohmann::json& loader, const std::string& where);

/// The run's header: document_header("run", argv, host) as typed fields.
RunHeader run_header(const std::vector<std::string>& argv, const HostInfo& host);

}  // namespace ioprobe
