// Restoring shards: cold page cache (each file is fdatasync'ed, then its cached pages dropped
// with posix_fadvise(DONTNEED), before the clock starts), sequential io_uring reads with
// O_DIRECT (4 reads of `read_block_bytes` in flight ahead of decompression: engine/uring_reader;
// buffered where the filesystem refuses O_DIRECT), zstd decompression (one frame per chunk or per
// piece, shard_format.hpp), byte ungrouping, and verification of every chunk's XXH3-64 checksums
// (stored bytes and logical bytes) against the shard's index. Shards of format version 3 (one
// frame per piece, piece checksums) are decoded by `decode_threads` workers per rank
// (decode_pool.hpp) while the rank's thread reads; older ones by the rank's thread alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error_record.hpp"

namespace ioprobe::checkpoint {

/// One rank's restore.
struct RankRestoreResult {
  std::string path;
  uint64_t logical_bytes = 0;  // verified logical bytes
  uint64_t stored_bytes = 0;   // bytes read from the file (chunk data)
  uint64_t chunks_verified = 0, chunks_total = 0;
  int64_t total_ns = 0;        // open .. last chunk verified
  int64_t read_ns = 0;         // waiting for reads (io_uring completions)
  bool direct = false;         // read with O_DIRECT
  int64_t decompress_ns = 0;   // inside zstd (and ungrouping; version 3: and checksums, summed over decoders)
  int decode_threads = 0;      // decoders used (version 3 shards), 0 = the rank's thread alone
  int64_t decode_wait_ns = 0;  // version 3: the rank's thread waiting for decoders
  bool interrupted = false;
  bool corrupt = false;  // a checksum mismatch or an undecodable chunk
  // What failed: the shard (path); the chunk, its byte ranges and why (detail); where a system
  // call failed (open, a read of the chunk), its errno and the operation (with its offset). A file
  // that is not a shard: the path and why (detail). empty() when fine.
  ErrorRecord error;
};

struct RestoreResult {
  std::vector<RankRestoreResult> ranks;  // in the order of `paths`
  int64_t wall_ns = 0;                   // all ranks (run in parallel, one thread each)
  bool ok = false;
  bool interrupted = false;
};

/// What a restore does with each chunk: decode it and check both checksums (a restore), or check
/// its stored bytes' checksum only, without decompressing (make_verify_decoder).
enum class RestoreMode { kDecode, kVerifyStored };

/// Restores and verifies the shard files `paths` in parallel, one thread per file, each with
/// `decode_threads` decoders for version 3 shards (0 = decode on the file's thread). `cold`
/// (the default): each file's cached pages are dropped first and it is read with O_DIRECT where
/// the filesystem takes it; warm: read buffered, whatever the page cache holds of it (a restore
/// right after the save, as a restarted trainer on the same host finds it). Never
/// throws for I/O or data errors (see RankRestoreResult::error, an ErrorRecord); std::bad_alloc and
/// std::system_error (a thread that cannot start) reach the caller. `mode` kVerifyStored reads the
/// same way but decodes nothing (decode_threads is then unused and decompress_ns is hashing time).
RestoreResult restore_checkpoint(const std::vector<std::string>& paths, uint64_t read_block_bytes,
                                 int decode_threads = 1, bool cold = true, RestoreMode mode = RestoreMode::kDecode);

}  // namespace ioprobe::checkpoint
