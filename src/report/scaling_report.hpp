// The "scaling" result document (kind "scaling") as a typed value, its codec and its text rendering.
//
// Besides the header (schema, ioprobe_version, kind, command, created_utc, host), target (target_json),
// partial and warnings, the document has:
// JSON "scaling": {dir, file, file_created, rw, bs, iodepth, runtime_s, direct (always true),
//   raid_kind ("md" | "btrfs" | null), level (null for one device),
//   members [{device, path, iops, bytes_per_s, p50_us, p99_us, ios, bytes, elapsed_s, engine, error,
//             nominal {device_class, bytes_per_s (null when none applies), basis, label "nominal"}}],
//   array {path, iops, bytes_per_s, p50_us, p99_us, ios, bytes, elapsed_s, engine, error},
//   sum_bytes_per_s, sum_iops, array_bytes_per_s, efficiency (array / sum; null when not every
//   point was measured), expectation {factor (null unknown), rule, expected_bytes_per_s},
//   interrupted, notes []}
// Rates are B/s; latencies µs; error null when measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/document_sections.hpp"
#include "report/run_document.hpp"
#include "scaling/scaling.hpp"

namespace ioprobe {

/// The "scaling" section: the pattern measured and the result. Paths (dir, the points' path) are
/// kept as written, escaped with escape_bytes(); a point's error "" is null in the JSON; the
/// result's efficiency, expectation.factor and expected_bytes_per_s 0 are null (unknown); the
/// members' nominal speeds keep class, B/s and basis (not the PCIe link).
struct ScalingSection {
  std::string dir;       // --dir, escaped
  std::string rw;        // "read" | "randread"
  uint32_t bs = 0;       // bytes per request
  unsigned iodepth = 0;  // requests in flight
  double runtime_s = 0;  // seconds per measurement
  ScalingResult result;  // array.name is "array"; array.path is the "file" read
};

/// A "scaling" result document, built once by `ioprobe scaling` and read back by `ioprobe report`.
struct ScalingDocument {
  RunHeader header;      // as a run's; the kind is "scaling"
  TargetSection target;  // report/document_sections.hpp
  bool partial = false;  // interrupted
  std::vector<std::string> warnings;
  ScalingSection scaling;
};

/// The section of a measurement: `cfg`'s pattern and `r`, its paths escaped.
ScalingSection scaling_section(const ScalingConfig& cfg, const ScalingResult& r);

/// The document exactly as `ioprobe scaling` writes it (the keys above).
nlohmann::json scaling_document_json(const ScalingDocument& doc);

/// A saved scaling document read back. Strict: a missing or mistyped field is refused with
/// UsageError naming `where` (e.g. "'s.json'") and the field's path ("'s.json'.scaling.members[1].iops:
/// ..."; "'s.json'.target.fs_type: ...").
ScalingDocument scaling_document_from_json(const nlohmann::json& j, const std::string& where);

/// Writes scaling_document_json(doc) to `path` as write_json_file does (atomically; its errors).
void write_scaling_document(const std::string& path, const ScalingDocument& doc);

/// Text of a scaling document: each member, their sum, the array, the efficiency against the
/// RAID level's expectation, and nominal interface speeds labelled as nominal.
std::string render_scaling_text(const ScalingDocument& doc);

}  // namespace ioprobe
