// Parallel decoding for restores of shards with one zstd frame per piece and piece checksums
// (shard_format.hpp, version 3): each frame is decoded, byte-ungrouped and checksummed by one
// of `threads` workers (one ZSTD_DCtx each), while the rank's thread reads the file and cuts the
// stream into frames. Results come back in submission order, so the rank's thread combines the
// pieces' checksums into each chunk's as the writer did.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/zstd_handles.hpp"
#include "core/error_record.hpp"
#include "core/io_memory.hpp"
#include "core/ordered_pool.hpp"

namespace ioprobe::checkpoint {

class DecodePool {
 public:
  /// `threads` workers (0 = decode inside submit(), on the caller's thread), frames of at most
  /// `max_frame` bytes decoding to pieces of at most `max_piece` bytes. Throws std::bad_alloc
  /// when memory is short and std::system_error when a thread cannot start.
  DecodePool(int threads, size_t max_frame, size_t max_piece, bool grouped);
  DecodePool(const DecodePool&) = delete;
  DecodePool& operator=(const DecodePool&) = delete;

  /// Frames that may be submitted and not yet taken at once (2 per worker, 1 inline).
  size_t window() const { return pool_->window(); }
  size_t in_flight() const { return pool_->in_flight(); }
  /// The input buffer of the next frame to submit (capacity max_frame bytes); the caller fills
  /// it, then calls submit(). Valid while in_flight() < window().
  uint8_t* input() { return pool_->next().in.get(); }
  /// Queues the frame in input(): `frame_len` bytes that must decode to exactly `piece_len`
  /// bytes, grouped by `elem`-byte elements when the pool was made with `grouped`.
  void submit(size_t frame_len, size_t piece_len, uint32_t elem);

  /// The oldest untaken frame's outcome: XXH3-64 of the piece's logical (ungrouped) bytes and
  /// of the frame's stored bytes, or `error` when it could not be decoded (err 0 and `detail`, one
  /// line; no path or piece: the decoder that cut the frame adds them).
  struct Result {
    uint64_t xxh3_logical = 0, xxh3_stored = 0;
    ErrorRecord error;  // empty(): decoded
  };
  /// Waits for it (adding the time blocked to `waited_ns`) and frees its slot.
  Result take(int64_t& waited_ns);

  int threads() const { return pool_->threads(); }
  /// Wall nanoseconds the workers spent decoding, ungrouping and hashing, summed over workers.
  int64_t busy_ns() const;

 private:
  struct Slot {
    IoMemory in;
    size_t in_len = 0, piece_len = 0;
    uint32_t elem = 1;
    Result result;
    int64_t busy_ns = 0;  // wall time this frame took
  };
  struct Worker {
    ZstdDCtx dctx = make_zstd_dctx();
    std::vector<uint8_t> out, ungrouped;
    int64_t busy_ns = 0;  // under the pool's lock
  };
  void decode(Slot& s, Worker& w) const;

  const bool grouped_;
  std::vector<std::unique_ptr<Worker>> workers_;  // one per thread, or 1 for inline mode
  std::unique_ptr<OrderedPool<Slot>> pool_;       // last: its threads stop before the workers go
};

}  // namespace ioprobe::checkpoint
