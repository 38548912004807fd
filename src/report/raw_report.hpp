// The text of `ioprobe raw` results, rendered from the typed document (report/raw_document.hpp),
// and the page-cache labels and warnings the document is made with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "raw/raw_config.hpp"
#include "raw/raw_run.hpp"
#include "raw/raw_target.hpp"
#include "report/raw_document.hpp"

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

/// Buffered reads that read more bytes than the region (`bytes` over numjobs x `region_bytes` per
/// job) where the region fits in `memory_bytes` (the host's RAM or its cgroup limit; 0: unknown,
/// taken as fitting): only the first pass can come from where `first_pass` (reads_from) says, the
/// re-reads come from the page cache. Returns "FIRST_PASS for the first pass, then the page cache
/// (the region was read N times)" then, else `first_pass` as it is (also for "page cache").
std::string reread_reads_from(const std::string& first_pass, uint64_t bytes, unsigned numjobs, uint64_t region_bytes,
                              uint64_t memory_bytes);

/// The text after "page cache  X % of the region resident at start": O_DIRECT, the eviction or
/// --cache warm, and where the reads came from (`from`: the document's reads_from). `cache` is
/// "cold", "warm" or "" (unknown).
std::string raw_cache_note(bool direct, bool write, const std::string& cache, bool evicted, const std::string& from);

/// The warnings of a buffered read whose region was (partly) in the page cache at start: mixed,
/// or page cache after a failed or ineffective eviction, or with --cache warm; and of one that
/// re-read its region from the page cache (`from`, the reads_from label, is a reread_reads_from
/// one). None for O_DIRECT, writes or a memory-backed target (warned of elsewhere); the residency
/// ones none when it is unknown.
std::vector<std::string> raw_cache_warnings(const RawConfig& cfg, const RawTarget& target, double residency,
                                            bool memory_backed, const std::string& from = "");

/// The report of one run as `ioprobe raw` prints it first: pattern, region, page-cache residency,
/// engine, I/Os, IOPS, MB/s and MiB/s, latency percentiles, CPU, and the errors with their hint.
std::string render_raw_results_text(const RawDocument& doc);

/// The "Hosts" section of a run across hosts ("" for one process): a row per host and each host's
/// device I/O line.
std::string render_raw_hosts_text(const RawDocument& doc);

/// The summary of raw.results.device_io (report/device_io_report.hpp device_io_summary: against
/// the bytes read, or written by a write run); "" when the document has none.
std::string raw_device_io_summary(const RawDocument& doc);

/// The whole text report of a raw document as `ioprobe report` prints it: the results, the
/// device I/O line (with its scope across hosts), the Hosts section and the warnings.
std::string render_raw_text(const RawDocument& doc);

}  // namespace ioprobe
