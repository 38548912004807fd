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
//   results  {samples, bytes (delivered in batches), io_bytes (transferred, O_DIRECT padding included), errors, elapsed_s, samples_per_s, bytes_per_s, files_per_s,
//             epochs_completed, stop_reason, first_batch_s,
//             file_latency_us{mean,p50,p90,p99,p999,max}, open_close_latency_us{...}, batch_wait_us{...},
//             consumer_wait_s, cpu{user_s, sys_s, per_sample_us}, workers[...], timeline[...], error_samples[]}
//   ingest   {accelerator, accelerator_name, model, gpus, rate_family, samples_per_s_per_gpu, source,
//             required_samples_per_s, required_bytes_per_s, sample_bytes, delivered_samples_per_s,
//             delivered_bytes_per_s, accelerator_utilization, accelerator_utilization_min, au_target,
//             worker_busy_fraction, capacity_samples_per_s, capacity_basis, gpus_fed, verdict, verdict_text}
#pragma once

#include <nlohmann/json.hpp>

#include "ingest/analysis.hpp"
#include "loader/loader_run.hpp"
#include "stats/histogram.hpp"

namespace ioprobe {

/// {mean, p50, p90, p99, p999, max} in microseconds.
nlohmann::json latency_us_json(const LatencyHistogram& h);

nlohmann::json loader_results_json(const LoaderResult& r);

nlohmann::json ingest_json(const IngestResult& in, double sample_bytes);

}  // namespace ioprobe
