// A loader result as JSON with nothing lost, and back: what a multi-host run sends from each
// host to the one that merges (LoaderResult::merge) and writes the document.
//
// {elapsed_ns, epochs_completed, partial, stop_reason, stopped_on_errors, samples, bytes, errors,
//  io_bytes, error_samples[] (error records, core/error_record.hpp), file_latency, open_latency, batch_wait
//  (histograms: {count, min_ns, max_ns, sum_ns, buckets[[lower_ns, count], ...]}), timeline {interval_ns, points[{t_s,
//  samples, bytes, wait_s}]}, wait_ns, first_batch_ns, cpu_user_s, cpu_sys_s, cache_prep_cpu_s,
//  epoch_resident_fraction[], residency_method, cache_notes[], workers[{rank, worker, files, bytes, io_bytes, errors,
//  busy_ns, cpu_work_ns, put_cpu_ns, other_cpu_ns, runq_wait_ns, decoded, decode_errors,
//           decode_cpu_ns, decoded_pixels, file_latency,
//           open_latency, cpu_list, numa}],
//  ranks[{rank, batches, samples, bytes, wait_ns, compute_ns, nominal_compute_ns, first_batch_ns,
//         elapsed_ns, batch_wait, timeline, max_outstanding, deliveries (only when recorded:
//         [[t_ns, samples, bytes, wait_ns], ...])}]}
// Integers stay integers and doubles are written with round-trip precision, so
// loader_result_from_json(loader_result_to_json(r)) equals r field by field. Decoding is strict
// (core/json_field.hpp): every key is required but those marked optional below, which senders of
// older versions did not write.
#pragma once

#include <nlohmann/json.hpp>

#include "loader/loader_result.hpp"

namespace ioprobe {

/// Every field of `r`, workers and ranks included (with their histograms and timelines).
nlohmann::json loader_result_to_json(const LoaderResult& r);

/// Inverse of loader_result_to_json. Throws UsageError naming the missing or mistyped key and its
/// path from `where` ("loader result.workers[1]") for a document that is not one. Optional, read
/// as "nothing of the kind ran" when absent: epoch_samples, epoch_bytes, epoch_ns; a worker's
/// put_cpu_ns, other_cpu_ns, runq_wait_ns (-1: not measured), decoded, decode_errors,
/// decode_cpu_ns, decoded_pixels; a rank's main_*, pin_*, h2d_* (h2d_device -1) and deliveries.
LoaderResult loader_result_from_json(const nlohmann::json& j, const std::string& where = "loader result");

/// nlohmann's hooks for the two above: `nlohmann::json j = r;` and `j.get<LoaderResult>()`.
void to_json(nlohmann::json& j, const LoaderResult& r);
void from_json(const nlohmann::json& j, LoaderResult& r);

}  // namespace ioprobe
