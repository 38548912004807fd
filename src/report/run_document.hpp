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

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ingest/analysis.hpp"
#include "loader/loader_result.hpp"
#include "stats/latency_json.hpp"

namespace ioprobe {

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

}  // namespace ioprobe
