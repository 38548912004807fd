// Compression of checkpoint pieces in ioprobe's own threads (the default, --compress-pool
// ioprobe): one ZSTD_CCtx per thread, each piece (<= kPieceBytes = 4 MiB, never crossing a
// region: chunker.hpp) compressed as its own zstd frame. Concatenated zstd frames are one valid
// zstd stream (RFC 8878 §3.1: "a content compressed by Zstandard is transformed into a
// Zstandard frame. Multiple frames can be appended into a single file or stream"), so a chunk is
// stored as its pieces' frames back to back and the index still has one entry per chunk.
//
// Pieces are taken in order across chunk boundaries, so small chunks keep every worker busy
// (zstd's own pool works inside one frame and idles on chunks below its job size: facebook/zstd#3751).
// Why ioprobe's threads replace zstd's pool by default, measured on the 2-vCPU VM of this project
// (zstd 1.5.4, level 1, the same 64 MiB sample of generated state, in memory, 2 threads; every
// `ioprobe checkpoint --compress zstd:N` run prints both figures again): zstd's pool reached
// 214-349 MB/s, below one thread alone (650-935 MB/s), ioprobe's threads 565-1,443 MB/s.
// zstd's own pool stays selectable (--compress-pool zstd, compressor.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/compressor.hpp"
#include "checkpoint/resident_state.hpp"
#include "core/error_record.hpp"
#include "core/io_memory.hpp"
#include "core/ordered_pool.hpp"

namespace ioprobe::checkpoint {

/// One piece: logical bytes [offset, offset + len) of a state; elem = element size (byte grouping).
struct PieceJob {
  uint64_t offset = 0;
  size_t len = 0;
  uint32_t elem = 1;
};

/// A fixed window of pieces in flight. submit() and take()/release() are called by one thread
/// (the rank's), in order: piece k is taken only after pieces 0..k-1 were released.
class PiecePool {
 public:
  /// `threads` workers (0 = compress inside submit(), on the caller's thread). Throws
  /// UsageError when zstd refuses the level as out of its bounds, Error (exit 1) for another refusal,
  /// std::bad_alloc when no zstd context can be made. `state` must outlive the pool.
  PiecePool(const ResidentState& state, int level, int threads, bool byte_group, size_t max_piece);
  PiecePool(const PiecePool&) = delete;
  PiecePool& operator=(const PiecePool&) = delete;

  /// Pieces that may be submitted and not yet released at once (2 per worker, 1 inline).
  size_t window() const { return pool_->window(); }
  /// Queues the next piece. The caller keeps submitted - released <= window().
  void submit(const PieceJob& job);

  /// The oldest submitted, unreleased piece's zstd frame, once compressed, with the XXH3-64 of
  /// the piece's logical bytes (before byte grouping) and of the frame, computed by the worker
  /// that compressed it (shard_format.hpp, kFlagPieceHashes). `error` says when compressing
  /// failed (op "zstd", detail zstd's error name; data/len then empty). `data` stays valid until
  /// release().
  struct Frame {
    const uint8_t* data = nullptr;
    size_t len = 0;
    uint64_t xxh3_logical = 0, xxh3_stored = 0;
    ErrorRecord error;  // empty(): compressed
  };
  /// Waits for it; adds the time blocked to `waited_ns`.
  Frame take(int64_t& waited_ns);
  /// Frees the slot of the piece last returned by take().
  void release();

  int threads() const { return pool_->threads(); }
  /// CPU nanoseconds the workers spent compressing (and grouping), summed over workers
  /// (CLOCK_THREAD_CPUTIME_ID: time a worker waited for a CPU does not count as busy).
  int64_t busy_ns() const;
  /// CPU nanoseconds the workers spent computing the pieces' checksums, summed over workers.
  int64_t hash_ns() const;
  /// Workers that compressed at least one piece.
  int workers_used() const;

 private:
  struct Slot {
    PieceJob job;
    // The frame. On huge pages: with 4 KiB-page vectors a 2-worker pool over a 1 GiB state ran
    // 1,400-1,455 MB/s (hashing and copying the frames as the save does), on huge pages 1,561-1,568
    // (ad hoc program driving PiecePool, 3 runs each, this project's 2-vCPU VM).
    IoMemory out;
    size_t out_cap = 0, out_len = 0;
    uint64_t xxh3_logical = 0, xxh3_stored = 0;
    ErrorRecord error;
    int64_t busy_ns = 0, hash_ns = 0;  // CPU time this piece took: compressing, checksums
  };
  struct Worker {
    Worker() = default;
    ~Worker();  // frees the context
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;
    void* cctx = nullptr;
    std::vector<uint8_t> scratch, grouped;
    int64_t busy_ns = 0, hash_ns = 0;  // under the pool's lock
    uint64_t pieces = 0;
  };
  void compress(Slot& s, Worker& w);  // compresses and checksums the slot's piece

  const ResidentState& state_;
  const bool byte_group_;
  std::vector<std::unique_ptr<Worker>> workers_;  // one per thread, or 1 for inline mode
  std::unique_ptr<OrderedPool<Slot>> pool_;       // last: its threads stop before the workers go
};

/// What this pool's scheme reaches in memory, no I/O: `len` bytes cut into pieces of `piece`
/// bytes, each compressed as its own frame at `level` by `threads` threads (one ZSTD_CCtx each),
/// logical bytes per wall second and the ratio. Measured now, next to measure_zstd's figures
/// for zstd's own pool, so that every run shows which pool is faster on this host. Never throws.
ZstdProbe measure_piece_pool(const uint8_t* data, size_t len, int level, int threads, size_t piece);

}  // namespace ioprobe::checkpoint
