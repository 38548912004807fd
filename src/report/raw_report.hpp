// Rendering of `ioprobe raw` results: the "raw" JSON section and the text report.
//
// JSON "raw": {filename, rw, bs, iodepth, numjobs, size_bytes, direct, engine_requested,
//   runtime_s, sqpoll_requested, seed,
//   engine{name, reason, fixed_buffers, registered_files, sqpoll, notes[]},
//   layout{block_device, file_bytes, region_bytes, created, note},
//   page_cache_resident_fraction (at start, -1 unknown),
//   results{ios, bytes, elapsed_s, iops, bytes_per_s,
//           latency_us{count, mean, min, p50, p90, p99, p999, max, sum_ns, buckets} (report/latency_json.hpp), errors, first_error, first_error_detail (null or report/error_text.hpp), stop_reason,
//           cpu{user_s, sys_s, per_io_us}}}
// cpu counts every thread of the process (getrusage RUSAGE_SELF), io_uring workers included.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "raw/raw_config.hpp"
#include "raw/raw_run.hpp"
#include "raw/raw_target.hpp"

namespace ioprobe {

nlohmann::json raw_json(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& engine,
                        double residency, const RawResults& res);

/// Multi-line human report (IOPS, MB/s and MiB/s, latency percentiles, CPU, engine and why).
std::string raw_text(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& engine, double residency,
                     const RawResults& res);

}  // namespace ioprobe
