// The result document of `ioprobe checkpoint` (kind "checkpoint") as a typed value: built once from
// what the run measured (checkpoint_section, report/checkpoint_json.cpp), written by
// checkpoint_document_json and read back by checkpoint_document_from_json
// (report/checkpoint_document_codec.cpp); the text report is rendered from it.
//
// Units: bytes in B, times in s, rates in B/s (logical bytes / time unless the name says stored),
// printed as MB/s (10^6 B/s) and MiB/s. A field that is null in the JSON is an empty optional here;
// an optional section or key absent from the JSON is an empty optional too (each says which).
// Errors: checkpoint_document_from_json throws UsageError naming the file and the field's path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/restorer.hpp"
#include "checkpoint/save_series.hpp"
#include "core/error_record.hpp"
#include "report/checkpoint_cluster_section.hpp"
#include "report/device_io_section.hpp"
#include "report/document_sections.hpp"
#include "report/run_document.hpp"

namespace ioprobe {

/// One region of a rank's state (state.ranks[].regions[]): "params", "grads", "optimizer", ...
struct CheckpointStateRegion {
  std::string kind;
  uint64_t bytes = 0;
};

/// One rank of the state this host saves.
struct CheckpointStateRank {
  int rank = 0;        // global rank
  uint64_t bytes = 0;  // logical bytes of its shard
  std::vector<CheckpointStateRegion> regions;
};

/// checkpoint.state: what was saved. Sizes in B.
struct CheckpointStateSection {
  std::string source;            // "--size", "--params" or the preset's name
  std::optional<double> params;  // model parameters; null for --size runs (a size, no model)
  uint64_t bytes_per_param = 0;  // B per parameter (DLIO's 14)
  int tp = 1, pp = 1, dp = 1, zero_stage = 0, world_size = 1;
  uint64_t world_bytes = 0;  // the whole job's checkpoint
  uint64_t host_bytes = 0;   // this host's ranks
  uint64_t ranks_on_host = 0;
  uint64_t resident_bytes = 0;            // state held in memory
  uint64_t resident_huge_page_bytes = 0;  // of those, on transparent huge pages (measured)
  bool resident_cyclic = false;           // state larger than the memory budget, resident windows reused
  std::vector<CheckpointStateRank> ranks;
  std::string content = "tensors";  // "tensors" | "text" | "random" (--data)
};

/// checkpoint.config: how the save wrote.
struct CheckpointConfigSection {
  std::string dir;  // escaped
  uint64_t chunk_bytes = 0;
  std::string compress;       // "none" | "zstd:LEVEL"
  std::string compress_pool;  // "none" | "zstd" | "ioprobe"
  int compress_threads_per_rank = 0;
  bool byte_group = false;
  bool fsync = true;
  uint64_t io_bytes = 0;  // B per write request
  uint64_t io_depth = 0;  // write requests in flight
  bool direct_requested = true;
  std::optional<bool> huge_pages;  // absent from documents written before --huge-pages
  uint64_t flush_every_bytes = 0;  // 0: no background fdatasync
  bool async = false;
  double step_time_s = 0;
  uint64_t zstd_job_bytes = 0;  // zstd's own pool only (0 otherwise)
  int zstd_workers_busy_per_chunk = 0;
  std::optional<uint64_t> frame_bytes;  // ioprobe's own pool only: one zstd frame per piece of this size
};

/// Per-rank compression figures of a save (present when the rank's workers compressed).
struct CheckpointRankCompression {
  double busy_s = 0;             // compress_busy_s: time inside zstd, summed over the rank's workers
  double workers_busy_mean = 0;  // compress_workers_busy_mean: busy_s / the pool's wall time
  int workers_used = 0;          // compress_workers_used
  double checksum_cpu_s = 0;     // the workers' XXH3 of pieces and frames
};

/// One rank's save (checkpoint.save.ranks[]). A failed save's rank has no bytes_on_disk or rate.
struct CheckpointSaveRank {
  int rank = 0;
  uint64_t logical_bytes = 0, stored_bytes = 0;
  std::optional<uint64_t> bytes_on_disk;    // null unless the save completed
  double duration_s = 0;                    // open .. fsync returned
  std::optional<double> write_bytes_per_s;  // null unless the save completed
  double stage_s = 0, compress_s = 0, write_wait_s = 0, fsync_s = 0;
  uint64_t written_bytes = 0;  // bytes the kernel completed
  uint64_t chunks_done = 0, chunks_total = 0;
  bool direct = false;
  uint64_t zstd_frames = 0, zero_copy_bytes = 0;
  std::optional<CheckpointRankCompression> compression;  // its keys sit in the row itself
  std::optional<std::string> host;                       // across hosts: the host that wrote it
};

/// checkpoint.save.phases_max_over_ranks_s: each phase's longest rank, s (the phases overlap).
struct CheckpointPhases {
  double stage = 0, compress = 0, write_wait = 0, fsync = 0;
};

/// checkpoint.save.compression (ioprobe's own pool only).
struct CheckpointSaveCompression {
  std::string pool = "ioprobe";
  int workers_per_rank = 0;
  double workers_busy_mean_per_rank = 0;
  int workers_used_min_over_ranks = 0;
  double checksum_cpu_s_max_over_ranks = 0;
};

/// checkpoint.save.async (--async): what the emulated training saw while the save persisted.
struct CheckpointSaveAsync {
  double training_blocked_s = 0;
  uint64_t steps_during_persistence = 0;
  double step_baseline_s = 0;
  double step_mean_during_persistence_s = 0;
  double step_slowdown = 0;  // mean / baseline - 1
};

/// save.device_io: the devices' writes during the save, as a device_io section with its write
/// ratio to the bytes on disk (report/device_io_section.hpp; across hosts with a scope), and
/// against the state's logical bytes.
struct CheckpointSaveDeviceIo {
  DeviceIoSection section;
  uint64_t logical_bytes = 0;                  // B
  std::optional<double> written_over_logical;  // bytes written / logical_bytes; none (null): not measured or 0 B
};

/// The save's device_io from the devices' accounting `io` over the save, the shard files' bytes
/// on disk and the state's logical bytes.
CheckpointSaveDeviceIo checkpoint_save_device_io(const DeviceIo& io, uint64_t on_disk, uint64_t logical);

/// checkpoint.save: the last save attempted. A save that did not complete claims no rate, ratio
/// or size on disk (those are empty); what it did stays.
struct CheckpointSaveSection {
  bool ok = false, durable = false, interrupted = false;
  std::string durability;  // in words
  uint64_t written_bytes = 0, durable_bytes = 0;
  bool direct = false;
  uint64_t logical_bytes = 0, stored_bytes = 0;
  std::optional<uint64_t> bytes_on_disk;
  std::optional<double> ratio;  // logical / stored
  double duration_max_s = 0;
  std::optional<double> throughput_min_rank_bytes_per_s;
  double time_to_staged_s = 0, ranks_done_s = 0, publish_s = 0;
  std::optional<double> time_to_durable_s;
  std::optional<double> write_bytes_per_s;         // logical bytes / time to durable
  std::optional<double> stored_write_bytes_per_s;  // stored bytes / time to durable
  CheckpointPhases phases_max_over_ranks_s;
  double user_cpu_s = 0, sys_cpu_s = 0, cpu_per_wall = 0;
  std::vector<CheckpointSaveRank> ranks;
  std::optional<CheckpointSaveCompression> compression;
  // Why the save failed (checkpoint/saver.hpp SaveResult::failure), written as save.failure (its
  // line) and save.failure_detail (the record); absent: it did not fail.
  std::optional<ErrorRecord> failure;
  std::optional<CheckpointSaveAsync> async;
  std::optional<CheckpointSaveDeviceIo> device_io;  // save.device_io; none: not measured
};

/// checkpoint.raw_write: the raw sequential write of the same target in the same run.
struct CheckpointRawWrite {
  bool available = false;
  std::string reason;  // unavailable only: why
  uint64_t bytes = 0;
  double duration_max_s = 0;
  double write_bytes_per_s = 0;  // the better of the runs
  bool direct = false;
  bool fsync = true;
  std::vector<double> runs_bytes_per_s;  // before and after the save
  std::string settle;
  std::optional<std::string> after_save_skipped;  // why the run after the save did not run
};

/// checkpoint.comparison: the save against the raw write, and the goals analysis (ioprobe's design
/// targets: uncompressed >= 90% of raw; compressed >= 90% of min(raw x ratio, cores x one core's
/// zstd speed), every figure measured in this run). Keys absent where the case does not apply.
struct CheckpointComparison {
  bool available = false;
  std::optional<std::string> reason;          // unavailable only
  std::optional<double> checkpoint_over_raw;  // null when unavailable
  std::optional<bool> ratio_meaningful;       // available only
  std::optional<std::string> ratio_note;      // when not meaningful: why, and the --size to use
  std::optional<double> goal_bytes_per_s, limit_bytes_per_s;
  std::optional<std::string> bound;  // "write" | "compression"
  std::optional<int> cores;
  std::optional<double> zstd_single_thread_bytes_per_s, cpu_limit_bytes_per_s, write_limit_bytes_per_s;
  std::optional<double> zstd_multithread_in_memory_bytes_per_s, checkpoint_over_zstd_multithread;
  std::optional<double> ioprobe_pool_in_memory_bytes_per_s;
  std::optional<std::string> compress_pool;  // with the pool probe: the pool the save used
  std::optional<double> measured_cpu_limit_bytes_per_s, cores_speedup_measured, measured_limit_bytes_per_s,
      checkpoint_over_measured_limit;
  std::optional<double> checkpoint_over_limit;
};

/// One rank's restore (checkpoint.restore.ranks[]).
struct CheckpointRestoreRank {
  std::string path;  // escaped
  uint64_t logical_bytes = 0, stored_bytes = 0;
  double duration_s = 0, read_s = 0, decompress_s = 0;
  double restore_bytes_per_s = 0;
  uint64_t chunks_verified = 0, chunks_total = 0;
  bool direct = false;
  int decode_threads = 0;
  double decode_wait_s = 0;
  // Across hosts: the shard's global rank, the host that read it and the host that wrote it.
  std::optional<int> shard_rank;
  std::optional<std::string> read_on_host, written_on_host;
};

/// A rank's row from what the restorer measured of it: times in s, the rate in B/s of logical
/// bytes over the rank's whole restore; the cluster fields left empty. Used by --restore and by
/// the --restore-only read-back alike.
CheckpointRestoreRank restore_rank_row(const checkpoint::RankRestoreResult& x);

/// checkpoint.restore (--restore): the shards read back and verified.
struct CheckpointRestoreSection {
  bool ok = false, interrupted = false;
  std::string cache;  // in words: cold, warm or in memory, and how
  bool direct = false;
  uint64_t logical_bytes = 0;
  double duration_max_s = 0;
  double restore_bytes_per_s = 0, throughput_min_rank_bytes_per_s = 0;
  int decode_threads_per_rank = 0;
  std::vector<CheckpointRestoreRank> ranks;
  std::optional<ErrorRecord> error;          // the first rank's failure (error, error_detail); absent: none
  std::optional<DeviceIoSection> device_io;  // restore.device_io (read ratio to the shard bytes); none: not measured
  std::optional<std::string> served_from;    // "device" | "page cache" | "mixed" | "unknown"
};

/// min / median / max of a series' rates, B/s.
struct CheckpointSpread {
  double min = 0, median = 0, max = 0;
};

/// One save of a series (checkpoint.series.saves[]).
struct CheckpointSeriesSave {
  uint64_t index = 0;  // 1-based
  uint64_t logical_bytes = 0, bytes_on_disk = 0;
  double time_to_durable_s = 0, write_bytes_per_s = 0, user_cpu_s = 0, sys_cpu_s = 0;
  std::optional<double> restore_bytes_per_s;  // null without --restore
};

/// checkpoint.series (--repeat, --duration): repeated saves into one directory.
struct CheckpointSeriesSection {
  uint64_t saves_completed = 0;
  std::optional<uint64_t> repeat_requested;  // null: no count limit
  std::optional<double> duration_limit_s;    // null: no time limit
  double elapsed_s = 0;
  checkpoint::SeriesStop stopped_by = checkpoint::SeriesStop::kNone;
  bool durable = true;
  std::string files;
  std::vector<CheckpointSeriesSave> saves;
  std::optional<CheckpointSpread> write_bytes_per_s;    // null: no save completed
  std::optional<CheckpointSpread> restore_bytes_per_s;  // null: no restore
};

/// The "checkpoint" section of a save run.
struct CheckpointSection {
  CheckpointStateSection state;
  CheckpointConfigSection config;
  CheckpointSaveSection save;
  CheckpointRawWrite raw_write;
  CheckpointComparison comparison;
  std::optional<CheckpointRestoreSection> restore;
  std::optional<CheckpointSeriesSection> series;
  double elapsed_s = 0;  // the whole command, setup included
};

/// One shard a read-back found (checkpoint.shards[]), from its trailer read before the clock started.
struct CheckpointReadbackShard {
  std::string path;  // escaped
  int rank = 0;      // from its name, __RANK_0.distcp
  uint64_t format_version = 0;
  std::string codec;  // "none" | "zstd"
  uint64_t chunks = 0;
  uint64_t logical_bytes = 0;
  uint64_t file_bytes = 0;  // st_size
};

/// One shard's verification (checkpoint.verify.ranks[]): read and hashed, nothing decompressed.
struct CheckpointVerifyRank {
  std::string path;  // escaped
  uint64_t stored_bytes = 0, chunks_verified = 0, chunks_total = 0;
  double duration_s = 0, read_s = 0, hash_s = 0;
  bool direct = false;
};

/// checkpoint.verify (--verify-only): the stored bytes' checksum of every chunk.
struct CheckpointVerifySection {
  bool ok = false, interrupted = false;
  std::string cache;  // in words
  bool direct = false;
  uint64_t stored_bytes = 0, chunks_verified = 0, chunks_total = 0;
  double duration_max_s = 0;
  double verify_bytes_per_s = 0;  // stored bytes checked / the slowest rank's duration
  std::vector<CheckpointVerifyRank> ranks;
  std::optional<ErrorRecord> error;  // the first shard's failure (error, error_detail); absent: none
};

/// The "checkpoint" section of a read-back of a checkpoint saved earlier (--restore-only,
/// --verify-only; report/checkpoint_readback.hpp): exactly one of restore and verify is present.
struct CheckpointReadbackSection {
  std::string mode;    // "restore-only" | "verify-only"
  std::string dir;     // escaped
  std::string checks;  // what was checked, in words
  std::vector<CheckpointReadbackShard> shards;
  std::optional<CheckpointRestoreSection> restore;  // restore-only: a save's restore keys
  std::optional<CheckpointVerifySection> verify;    // verify-only
  double elapsed_s = 0;
};

/// A "checkpoint" result document: a save run's (`section`) or a read-back's (`readback`, then
/// `section` is unused). cluster and hosts: across hosts only, both
/// (report/checkpoint_cluster_section.hpp).
struct CheckpointDocument {
  RunHeader header;      // schema, version, command, created_utc, host (kind "checkpoint")
  TargetSection target;  // report/document_sections.hpp
  CheckpointSection section;
  std::optional<CheckpointReadbackSection> readback;  // empty: a save run
  bool partial = false;
  std::vector<std::string> warnings;
  std::optional<CheckpointClusterSection> cluster;  // none: one process (then no hosts)
  std::vector<CheckpointHostSection> hosts;
};

/// A failure kept in the document (save.failure, restore.error, verify.error), in the loader's
/// form (report/run_document.cpp error_samples / error_details): `key` is its line
/// (core/error_record.hpp error_line) and `key`_detail its record (error_record_json); nothing
/// when `e` is empty. Read back from `key`_detail, or, in a document written before the detail,
/// from the line alone (ErrorRecord::detail, no errno); UsageError naming `where` and the field.
void put_checkpoint_error(nlohmann::json& j, const std::string& key, const std::optional<ErrorRecord>& e);
std::optional<ErrorRecord> checkpoint_error_from_json(const nlohmann::json& j, const std::string& key,
                                                      const std::string& where);

/// The checkpoint section as written (the keys above).
nlohmann::json checkpoint_section_json(const CheckpointSection& s);
/// A restore section as written (a save's restore, or a read-back's), and read back strictly
/// (UsageError naming `where` and the field).
nlohmann::json checkpoint_restore_json(const CheckpointRestoreSection& r);
CheckpointRestoreSection checkpoint_restore_from_json(const nlohmann::json& j, const std::string& where);

/// A read-back's checkpoint section as written, and read back strictly
/// (report/checkpoint_readback_codec.cpp).
nlohmann::json checkpoint_readback_section_json(const CheckpointReadbackSection& r);
CheckpointReadbackSection checkpoint_readback_section_from_json(const nlohmann::json& j, const std::string& where);

/// The series section as written (report/checkpoint_series.hpp's keys).
nlohmann::json checkpoint_series_section_json(const CheckpointSeriesSection& s);

/// The document exactly as `ioprobe checkpoint` writes it.
nlohmann::json checkpoint_document_json(const CheckpointDocument& doc);

/// Writes checkpoint_document_json(doc) to `path` as write_json_file does (atomically; its errors).
void write_checkpoint_document(const std::string& path, const CheckpointDocument& doc);

/// A saved checkpoint document read back. Strict: a missing or mistyped field is refused with
/// UsageError naming `where` (e.g. "'a.json'") and the field's path
/// ("'a.json'.checkpoint.save.ok: missing key ..."). Absent keys accepted: those documented as
/// optional above (config.huge_pages from older documents; keys a case does not write).
CheckpointDocument checkpoint_document_from_json(const nlohmann::json& j, const std::string& where);

/// The document's header (document_header("checkpoint", argv, host) as typed fields).
RunHeader checkpoint_header(const std::vector<std::string>& argv, const HostInfo& host);

}  // namespace ioprobe
