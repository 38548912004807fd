// A RawResults (raw/raw_results.hpp) as JSON with nothing lost, and back: what a process of a
// multi-host raw run sends to the one that merges (RawResults::merge).
//
// {ios, bytes, elapsed_s, latency (stats/latency_json.hpp histogram_ns_json), cpu_user_s,
//  cpu_sys_s, errors, first_error (core/error_record.hpp), partial, stop_reason, engine_notes[],
//  fixed_buffers, registered_files, sqpoll}
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "raw/raw_results.hpp"

namespace ioprobe {

/// Every field of `r`, the histogram with its buckets.
nlohmann::json raw_results_to_json(const RawResults& r);
/// Inverse of raw_results_to_json. Throws UsageError naming the missing or mistyped key and its
/// path from `where`.
RawResults raw_results_from_json(const nlohmann::json& j, const std::string& where);

/// nlohmann's hooks for the two above (errors name "raw result").
void to_json(nlohmann::json& j, const RawResults& r);
void from_json(const nlohmann::json& j, RawResults& r);

}  // namespace ioprobe
