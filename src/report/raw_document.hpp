// The "raw" result document as a typed value: built once by `ioprobe raw` (cli/raw_command.cpp)
// from the run's outcome, its warnings and labels worked out there; written by raw_document_json,
// read back strictly by raw_document_from_json for `ioprobe report`, and rendered as text
// (report/raw_report.hpp) from this value only.
//
// Keys (reports/result.schema.json), besides the header of report/document.hpp document_header:
//   target    report/document_sections.hpp TargetSection (the probed keys)
//   raw       {filename, rw, bs, iodepth, numjobs, size_bytes, direct, engine_requested, runtime_s,
//              sqpoll_requested, seed,
//              engine {name, reason, fixed_buffers, registered_files, sqpoll, notes[]},
//              layout {block_device, file_bytes, region_bytes, created, note},
//              page_cache_resident_fraction (at start, after any eviction; -1 unknown),
//              cache ("cold" | "warm" | "bypassed (O_DIRECT)" | "buffered write"),
//              page_cache_evicted (true/false, null: not tried), evict_error ("" or the errno text),
//              reads_from (reads: "device", "page cache", "mixed", "unknown", as the device accounting
//                measured it for buffered reads when it could tell; else a buffered re-read of a region
//                that fits in memory: "device for the first pass, then the page cache (the region was
//                read N times)"; writes: ""),
//              writes_to (writes: "device (O_DIRECT)", "page cache (not durable: no fsync)"; reads: ""),
//              results {ios, bytes, elapsed_s, iops, bytes_per_s,
//                       latency_us {count, mean, min, p50, p90, p99, p999, max, sum_ns, buckets}
//                       (stats/latency_json.hpp), errors, first_error, first_error_detail (null or
//                       core/error_record.hpp), stop_reason, cpu {user_s, sys_s, per_io_us},
//                       device_io (report/device_io_section.hpp DeviceIoSection; + scope across hosts)}}
//   partial, warnings
//   sources   (merged documents only, report/document_merge.hpp) [{file, hostname, ios, bytes, iops,
//              bytes_per_s, elapsed_s, p99_us}]; sources_apart (true, or absent)
//   cluster   (across hosts only) {launcher, hosts, mpi_ranks, start_skew_s (upper bound, s),
//              files ("one per process: FILENAME.rank<R>" or "the block device, read by every
//              process"), merge (how the processes' results were added)}
//   hosts     (across hosts only) [{hostname, host_index, mpi_ranks [int], files [string],
//              target {fs_type, device, memory_backed}, straggler, device_io (the host's own
//              devices, counted once per host, against its bytes; cold_read_nothing, cold_read_short),
//              results {ios, bytes, errors, elapsed_s, first_done_s, last_done_s, iops, bytes_per_s,
//                       latency_us {count, p50, p99, p999}, cpu_s}}]
// cpu counts every thread of the process (getrusage RUSAGE_SELF), io_uring workers included.
// Across hosts raw.results are the merged ones (IOPS and B/s = merged totals / the longest elapsed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/raw_parts.hpp"
#include "core/error_record.hpp"
#include "engine/engine_kind.hpp"
#include "raw/raw_config.hpp"
#include "raw/raw_run.hpp"
#include "raw/raw_target.hpp"
#include "report/device_io_section.hpp"
#include "report/document_sections.hpp"
#include "report/run_document.hpp"
#include "stats/histogram.hpp"
#include "topology/target.hpp"

namespace ioprobe {

/// The engine that ran the jobs, and why (engine/engine_choice.hpp), with what the ring got.
struct RawEngineSection {
  EngineKind name = EngineKind::kPsync;
  std::string reason;
  bool fixed_buffers = false, registered_files = false, sqpoll = false;
  std::vector<std::string> notes;  // the engine's notes (fallbacks), in order
};

/// The file or device region the jobs covered (raw/raw_target.hpp RawTarget). Bytes in B.
struct RawLayoutSection {
  bool block_device = false;
  uint64_t file_bytes = 0;
  uint64_t region_bytes = 0;  // per job
  bool created = false;       // laid out by this run
  std::string note;
};

/// What the jobs measured (raw/raw_results.hpp, merged across hosts). The rates, the latency
/// figures and the CPU per I/O are derived from these when written.
struct RawResultsSection {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  double elapsed_s = 0;
  LatencyHistogram latency;  // per-I/O completion latency, ns
  uint64_t errors = 0;
  std::string first_error;                        // error_line() of the first error, "" when none
  std::optional<ErrorRecord> first_error_detail;  // none: no error (or a document written before it)
  std::optional<RawStop> stop;                    // absent in documents `report --merge` wrote
  double cpu_user_s = 0, cpu_sys_s = 0;           // s, every thread of the process
  std::optional<DeviceIoSection>
      device_io;  // against bytes (read or written); + scope across hosts; none: not measured
};

/// The "raw" section: the settings as given, the engine, the layout, the page-cache analysis
/// (labels worked out when the document is made) and the results.
struct RawSection {
  std::string filename;  // escaped (core/text.hpp escape_bytes); across hosts the name as given
  std::string rw;        // "read" | "randread" | "write" | "randwrite"
  uint32_t bs = 0;       // B per request
  unsigned iodepth = 1, numjobs = 1;
  uint64_t size_bytes = 0;  // B per job, 0: the whole existing file
  bool direct = false;
  EngineSelection engine_requested = EngineSelection::kAuto;  // --engine as given
  double runtime_s = 0;                                       // 0: one pass
  bool sqpoll_requested = false;
  uint64_t seed = 0;
  RawEngineSection engine;
  RawLayoutSection layout;
  double page_cache_resident_fraction = -1;  // 0..1 at start, -1 unknown
  std::string cache;                         // "cold" | "warm" | "bypassed (O_DIRECT)" | "buffered write"
  std::optional<bool> page_cache_evicted;    // none: no eviction tried
  std::string evict_error;                   // the errno text of a failed eviction, else ""
  std::string reads_from;                    // report/raw_report.hpp reads_from
  std::string writes_to;                     // report/raw_report.hpp writes_to
  RawResultsSection results;
};

/// The "cluster" section of a run across hosts (cluster/raw_parts.hpp).
struct RawClusterSection {
  std::string launcher;
  int hosts = 0;
  int mpi_ranks = 0;
  double start_skew_s = 0;  // upper bound, s
  std::string files;        // which file each process used
  std::string merge;        // how the processes' results were added
};

/// One row of "hosts": a host's processes merged (cluster/raw_parts.hpp RawHostRow).
struct RawHostSection {
  std::string hostname;
  int host_index = 0;
  std::vector<int> mpi_ranks;
  std::vector<std::string> files;  // one per process, in rank order
  std::string fs_type, device;     // its first process's target
  bool memory_backed = false;
  bool straggler = false;
  HostDeviceIo device_io;  // the host's own devices against its bytes, with the cold-read flags
  uint64_t ios = 0, bytes = 0, errors = 0;
  double elapsed_s = 0, first_done_s = 0, last_done_s = 0;  // s from the common start
  double iops = 0, bytes_per_s = 0;
  uint64_t latency_count = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0;  // µs
  double cpu_s = 0;                            // user + sys, s
};

/// One input of a merged raw document (`report --merge`): its figures as that document gave them.
struct RawSource {
  std::string file;  // escaped path
  std::string hostname;
  uint64_t ios = 0, bytes = 0;
  double iops = 0, bytes_per_s = 0;  // over its own elapsed_s
  double elapsed_s = 0;              // s
  double p99_us = 0;                 // µs
};

/// A "raw" result document.
struct RawDocument {
  RunHeader header;      // kind "raw"
  TargetSection target;  // the probed keys (TargetKeys::kProbed)
  RawSection raw;
  bool partial = false;  // interrupted (or another host's signal stopped this one)
  std::vector<std::string> warnings;
  std::optional<RawClusterSection> cluster;  // across hosts only, with `hosts`
  std::vector<RawHostSection> hosts;
  std::vector<RawSource> sources;  // a merged document's inputs; empty otherwise
  bool sources_apart = false;      // a merged document whose inputs did not run at the same time
};

/// The document of a run on this host: the settings `cfg` (filename as the user gave it), the
/// target's layout and eviction, the engine chosen, the residency at start (-1 unknown) and the
/// results `res`. Its warnings are worked out here after `warnings` (those found before the run,
/// e.g. locked memory): psync at a queue depth > 1, a memory-backed target, a (partly) warm page
/// cache (raw_cache_warnings).
RawDocument make_raw_document(RunHeader header, const TargetInfo& tinfo, const RawConfig& cfg, const RawTarget& target,
                              const RawEngineChoice& engine, double residency, const RawResults& res,
                              std::vector<std::string> warnings);

/// Across hosts: the "cluster" section and the "hosts" rows of the merged run `c` (each row's
/// device_io against the bytes it read, or wrote when `write`; a read's cold_read_* flags only
/// when `cold`, i.e. O_DIRECT), and its warnings (stragglers, ...) after the document's.
void add_raw_cluster(RawDocument& doc, const cluster::ClusterRaw& c, const std::string& launcher, int host_count,
                     const std::string& files);

/// The "hosts" rows of `c` (see add_raw_cluster).
std::vector<RawHostSection> raw_host_sections(const cluster::ClusterRaw& c, bool write, bool cold);

/// True for a write pattern ("write", "randwrite").
bool raw_document_writes(const RawDocument& doc);

/// The document exactly as `ioprobe raw` writes it (the keys above). Derived figures (iops,
/// bytes_per_s, the latency figures, cpu.per_io_us) are computed here from the typed values.
nlohmann::json raw_document_json(const RawDocument& doc);

/// Writes raw_document_json(doc) to `path` as write_json_file does (atomically; its errors).
void write_raw_document(const std::string& path, const RawDocument& doc);

/// A saved raw document read back. Strict: a missing or mistyped field is refused with UsageError
/// naming `where` (e.g. "'a.json'") and the field's path ("'a.json'.raw.results.ios: expected a
/// non-negative integer in range, found ..."), the target and device_io sections included. Derived figures are checked
/// for type and recomputed when written again. Documents written before these fields existed may lack
/// raw.results.first_error_detail; documents `report --merge` wrote lack raw.results.stop_reason.
RawDocument raw_document_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace ioprobe
