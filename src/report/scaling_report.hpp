// The "scaling" section of the result document (kind "scaling") and its text rendering.
//
// JSON "scaling": {dir, file, file_created, rw, bs, iodepth, runtime_s, direct (always true),
//   raid_kind ("md" | "btrfs" | null), level (null for one device),
//   members [{device, path, iops, bytes_per_s, p50_us, p99_us, ios, bytes, elapsed_s, engine, error,
//             nominal {device_class, bytes_per_s (null when none applies), basis, label "nominal"}}],
//   array {path, iops, bytes_per_s, p50_us, p99_us, ios, bytes, elapsed_s, engine, error},
//   sum_bytes_per_s, sum_iops, array_bytes_per_s, efficiency (array / sum; null when not every
//   point was measured), expectation {factor (null unknown), rule, expected_bytes_per_s},
//   interrupted, notes []}
// Rates are B/s; latencies µs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "scaling/scaling.hpp"

namespace ioprobe {

nlohmann::json scaling_json(const ScalingConfig& cfg, const ScalingResult& r);

/// Text of a whole document of kind "scaling": each member, their sum, the array, the efficiency
/// against the RAID level's expectation, and nominal interface speeds labelled as nominal.
std::string render_scaling_text(const nlohmann::json& doc);

}  // namespace ioprobe
