// Reading one shard file for a restore (shard_format.hpp): the cold open, the trailer and the
// metadata (region table, chunk index), then the chunks' stored bytes as one stream read ahead
// by io_uring (engine/uring_reader.hpp: O_DIRECT, buffered where the filesystem refuses it).
// What the bytes mean is the decoders' business (shard_decoder.hpp); this reader knows only where
// they lie.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/shard_format.hpp"
#include "checkpoint/state_spec.hpp"
#include "core/error_record.hpp"

namespace ioprobe {
class UringFileReader;
}

namespace ioprobe::checkpoint {

/// Reads `path`'s trailer, region table and chunk index with plain reads (no O_DIRECT, nothing
/// dropped from the cache, nothing written) and checks them as a restore does (shard_format.hpp).
/// Returns "" with `t` and `index` filled, or why the file is not a shard this ioprobe reads (one
/// line: the open error names the path, the others do not). Never throws for I/O or data errors.
std::string check_shard_metadata(const std::string& path, Trailer& t, std::vector<IndexEntry>& index);

class ShardReader {
 public:
  /// Makes `path` cold: its dirty pages are written (fdatasync) and its cached pages dropped
  /// (posix_fadvise DONTNEED), so the reads that follow go to the device (O_DIRECT reads bypass
  /// the cache anyway; this keeps the buffered fallback and the metadata reads cold too). Returns
  /// an empty record, or the failure opening it (errno, op "open", the path). Call before the
  /// clock starts.
  static ErrorRecord make_cold(const std::string& path);

  /// Opens `path` (made cold first by make_cold when `cold`; then read with O_DIRECT where the
  /// filesystem takes it, else buffered), reads the
  /// trailer and the metadata and starts the stream of stored bytes in reads of
  /// `read_block_bytes` (4 in flight). Never throws for I/O or data errors: failed() is then
  /// true with failure() (the path, errno and operation where a system call failed, else why in
  /// `detail`) and corrupt() for data that is not a shard; std::bad_alloc reaches the caller.
  ShardReader(const std::string& path, uint64_t read_block_bytes, bool cold = true);
  /// Cold: drops the file's cached pages again, so a restore leaves no cache behind.
  ~ShardReader();
  ShardReader(const ShardReader&) = delete;
  ShardReader& operator=(const ShardReader&) = delete;

  bool failed() const { return !failure_.empty(); }
  const ErrorRecord& failure() const { return failure_; }
  /// error_line(failure()): one line naming the path.
  std::string error() const { return error_line(failure_); }
  bool corrupt() const { return corrupt_; }
  const std::string& path() const { return path_; }
  bool direct() const { return direct_; }

  const Trailer& trailer() const { return trailer_; }
  const std::vector<IndexEntry>& index() const { return index_; }
  /// The state's layout from the region table: where each piece of a chunk falls (chunker.hpp).
  const RankState& shape() const { return shape_; }

  /// Starts chunk `e`, which must follow the previous chunk's stored bytes (the stored bytes lie
  /// back to back from offset 0). Returns "" or why not (the shard is corrupt).
  std::string begin_chunk(const IndexEntry& e);
  /// The next stored bytes of the chunk begun: `p` into the reader's current block, `k` > 0 and at
  /// most `max` bytes, valid until the next call. False at the chunk's end, or when the read
  /// failed: then read_failure() says why (detail "stored data ends early", or the device's
  /// errno and operation with its offset; no path: the caller names the file).
  bool next(const uint8_t*& p, size_t& k, size_t max = SIZE_MAX);
  /// Stored bytes of the chunk begun not yet handed out.
  uint64_t chunk_left() const { return left_; }
  const ErrorRecord& read_failure() const { return read_failure_; }
  bool read_failed() const { return !read_failure_.empty(); }

  uint64_t stored_bytes() const { return stored_bytes_; }  // chunk bytes handed out so far
  int64_t read_ns() const { return read_ns_; }             // time next() waited for the device

 private:
  std::string path_;
  ErrorRecord failure_, read_failure_;
  bool cold_ = true, corrupt_ = false, direct_ = false;
  std::unique_ptr<UringFileReader> rd_;
  Trailer trailer_;
  std::vector<IndexEntry> index_;
  RankState shape_;
  uint64_t pos_ = 0;  // stream offset of the next byte handed out
  uint64_t left_ = 0;
  const uint8_t* blk_ = nullptr;
  size_t blk_len_ = 0, blk_pos_ = 0;
  uint64_t stored_bytes_ = 0;
  int64_t read_ns_ = 0;
};

}  // namespace ioprobe::checkpoint
