// Rendering of `ioprobe raw` results: the "raw" JSON section and the text report.
//
// JSON "raw": {filename, rw, bs, iodepth, numjobs, size_bytes, direct, engine_requested,
//   runtime_s, sqpoll_requested, seed,
//   engine{name, reason, fixed_buffers, registered_files, sqpoll, notes[]},
//   layout{block_device, file_bytes, region_bytes, created, note},
//   page_cache_resident_fraction (at start, after any eviction; -1 unknown),
//   cache ("cold" | "warm" | "bypassed (O_DIRECT)"), page_cache_evicted (true/false, null: not tried),
//   evict_error ("" or the errno text), reads_from (reads: "device", "page cache", "mixed", "unknown"; writes: ""),
//   results{ios, bytes, elapsed_s, iops, bytes_per_s,
//           latency_us{count, mean, min, p50, p90, p99, p999, max, sum_ns, buckets} (stats/latency_json.hpp), errors,
//           first_error, first_error_detail (null or report/error_text.hpp), stop_reason, cpu{user_s, sys_s,
//           per_io_us}}}
// cpu counts every thread of the process (getrusage RUSAGE_SELF), io_uring workers included.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "raw/raw_config.hpp"
#include "raw/raw_run.hpp"
#include "raw/raw_target.hpp"

namespace ioprobe {

/// Where a raw run's reads came from: "device" with O_DIRECT, else by the residency at start
/// (residency_source: "page cache", "mixed", "device"), "unknown" when it is not known; "" for writes.
std::string reads_from(bool direct, bool write, double residency);

/// Where a raw run's writes went: "device (O_DIRECT)" with --direct 1, else "page cache (not
/// durable: no fsync)" (raw does not fsync its writes, so they may still be in memory when the clock
/// stops); "" for reads.
std::string writes_to(bool direct, bool write);

/// The text report's line for a buffered write ("" otherwise): the throughput is the page cache's.
std::string raw_writes_line(bool direct, bool write);

/// The text after "page cache  X % of the region resident at start": O_DIRECT, the eviction or
/// --cache warm, and where the reads came from. `cache` is "cold", "warm" or "" (unknown).
std::string raw_cache_note(bool direct, bool write, const std::string& cache, bool evicted, double residency);

/// The warnings of a buffered read whose region was (partly) in the page cache at start: mixed,
/// or page cache after a failed or ineffective eviction, or with --cache warm. None for O_DIRECT,
/// writes, unknown residency or a memory-backed target (warned of elsewhere).
std::vector<std::string> raw_cache_warnings(const RawConfig& cfg, const RawTarget& target, double residency,
                                            bool memory_backed);

nlohmann::json raw_json(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& engine, double residency,
                        const RawResults& res);

/// Multi-line human report (IOPS, MB/s and MiB/s, latency percentiles, CPU, engine and why).
std::string raw_text(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& engine, double residency,
                     const RawResults& res);

}  // namespace ioprobe
