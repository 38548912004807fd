// Saving one rank's shard to a temporary file: chunk -> (byte grouping) -> zstd or raw ->
// io_uring O_DIRECT writes with double buffering -> index + trailer -> fsync.
// Publishing (rename to the final name) is the saver's job, once every rank succeeded.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "checkpoint/compressor.hpp"
#include "checkpoint/resident_state.hpp"
#include "engine/uring_writer.hpp"

namespace ioprobe::checkpoint {

/// Who compresses: ioprobe's own threads, one zstd frame per piece (piece_pool.hpp; the default),
/// or zstd's own pool (ZSTD_c_nbWorkers) on one frame per chunk (compressor.hpp).
enum class CompressPool { kIoprobe, kZstd };

/// How to write a shard (already validated by the CLI).
struct SaveOptions {
  uint64_t chunk_bytes = 1ull << 30;  // logical bytes per chunk (= checksum unit; = zstd frame with kZstd)
  CompressionSpec compress;
  CompressPool compress_pool = CompressPool::kIoprobe;
  int compress_threads = 1;     // compression workers per rank (0 = in the rank's own thread)
  uint64_t zstd_job_bytes = 0;  // ZSTD_c_jobSize (kZstd only); 0 = zstd's default (2 MiB at level 1)
  bool byte_group = false;
  bool fsync = true;
  UringWriterOptions io;
  int world_size = 0;  // shards the whole save writes (every process's ranks), recorded in each shard; 0 = unknown
};

/// What one rank's save did. Times are wall nanoseconds of this rank's thread; phases overlap
/// with the device writing in the background, so they need not add up to total_ns.
struct RankSaveResult {
  int rank = 0;
  std::string path;              // the temporary file written
  uint64_t logical_bytes = 0;    // logical bytes of the chunks completed
  uint64_t stored_bytes = 0;     // bytes queued to the file (chunks + index + trailer)
  uint64_t written_bytes = 0;    // bytes the kernel completed
  uint64_t zero_copy_bytes = 0;  // of those, written straight from the state's memory (no staging copy)
  uint64_t chunks_done = 0, chunks_total = 0;
  int64_t stage_ns = 0;            // copying state into I/O or grouping buffers, and checksums taken on the
                                   // rank's thread (kIoprobe: none; the workers take them, checksum_cpu_ns)
  int64_t compress_ns = 0;         // kZstd: inside ZSTD_compressStream2 (includes waiting for zstd's workers);
                                   // kIoprobe: blocked waiting for the next compressed piece (+ inline compression)
  int64_t compress_busy_ns = 0;    // kIoprobe: CPU time the workers spent compressing, summed over workers
  int64_t compress_active_ns = 0;  // kIoprobe: first piece submitted .. last piece taken (wall)
  int compress_workers_used = 0;   // kIoprobe: workers that compressed at least one piece
  int64_t checksum_cpu_ns = 0;     // kIoprobe: CPU time the workers spent on the pieces' XXH3 checksums, summed
  uint64_t frames = 0;             // zstd frames written
  int64_t write_wait_ns = 0;       // blocked waiting for the device (no free buffer, final flush)
  int64_t fsync_ns = 0;
  int64_t total_ns = 0;      // open .. fsync done
  bool direct = false;       // O_DIRECT was used
  bool interrupted = false;  // stopped by SIGINT/SIGTERM or by another rank's failure
  int err = 0;               // errno of the failure, 0 when none
  std::string err_op;        // "create", "write", "fsync", "zstd"...
  std::string err_detail;
};

/// Writes `state` to `tmp_path` (created with O_EXCL). Never throws for I/O errors: they land in
/// err/err_op. Stops early when interrupted() or `*abort` becomes true.
RankSaveResult save_shard(const ResidentState& state, const std::string& tmp_path, const SaveOptions& opts,
                          const std::atomic<bool>* abort);

}  // namespace ioprobe::checkpoint
