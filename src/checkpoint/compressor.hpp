// zstd compression of checkpoint chunks, one frame per chunk, with zstd's own multithreading
// (ZSTD_c_nbWorkers) engaged: --compress-pool zstd. The default pool is ioprobe's own threads
// (piece_pool.hpp, with the measurement that chose it). zstd cuts a frame into jobs of 2^max(20, windowLog+2) bytes
// (zstdmt_compress.c, ZSTDMT_computeTargetJobLog; windowLog from ZSTD_getCParams): about 2 MiB
// at level 1 and 8 MiB at level 3 (facebook/zstd#3751), so a chunk smaller than one job keeps a
// single worker busy no matter how many are configured.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace ioprobe {
class UringFileWriter;
}

namespace ioprobe::checkpoint {

/// Parsed --compress value.
struct CompressionSpec {
  bool enabled = false;
  int level = 1;
  std::string text() const;  // "none" or "zstd:1"
};

/// Parses "none" or "zstd:LEVEL" (LEVEL in zstd's range, negative levels allowed; "zstd" = level 1).
/// Throws UsageError naming --compress.
CompressionSpec parse_compression(const std::string& text);

/// zstd's multithreading job size for `level` on inputs of `chunk_bytes` (bytes); `job_bytes`
/// when that is set (ZSTD_c_jobSize), raised to zstd's minimum of 512 KiB as zstd does (zstd.h,
/// ZSTD_c_jobSize: "a minimum of overlap size, or ZSTDMT_JOBSIZE_MIN (= 512 KB)"), else zstd's
/// default.
uint64_t zstd_job_bytes(int level, uint64_t chunk_bytes, uint64_t job_bytes = 0);

/// Workers that can be busy on one chunk: min(workers, ceil(chunk / job size)), so 1 for a chunk
/// of 512 KiB or less.
int zstd_busy_workers(int level, uint64_t chunk_bytes, int workers, uint64_t job_bytes = 0);

/// zstd compression speed (logical bytes per wall second) and ratio of `len` bytes in memory at
/// `level` with `workers` threads of zstd's pool (0 = in the calling thread), measured now: the
/// "cores x zstd speed" goal uses workers = 0, and workers = cores shows what zstd's own
/// multithreading reaches on this machine. Never throws.
struct ZstdProbe {
  double bytes_per_s = 0;
  double ratio = 0;
};
ZstdProbe measure_zstd(const uint8_t* data, size_t len, int level, int workers = 0, uint64_t job_bytes = 0);

/// A streaming compressor writing each frame straight into a UringFileWriter's buffers.
class ChunkCompressor {
 public:
  /// `workers` >= 1 threads of zstd's own pool. Throws UsageError when zstd refuses a parameter as out of its
  /// bounds or unsupported (a libzstd without threads), Error (exit 1) for another refusal, std::bad_alloc
  /// when no context can be made.
  ChunkCompressor(int level, int workers, uint64_t job_bytes = 0);
  ~ChunkCompressor();
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;

  /// Feeds `len` bytes; `end` closes the frame. Output goes to `out`; `on_output(data, n)` is
  /// called for every produced span (for checksums). Returns 0, a negative errno from the
  /// writer, or -EPROTO for a zstd error (error_text() says which).
  template <class F>
  int feed(const uint8_t* data, size_t len, bool end, UringFileWriter& out, F&& on_output);

  const std::string& error_text() const { return err_; }
  int64_t busy_ns() const { return busy_ns_; }  // wall time spent inside zstd calls

 private:
  int feed_impl(const uint8_t* data, size_t len, bool end, UringFileWriter& out,
                void (*cb)(void*, const uint8_t*, size_t), void* ctx);
  void* cctx_ = nullptr;
  std::string err_;
  int64_t busy_ns_ = 0;
};

template <class F>
int ChunkCompressor::feed(const uint8_t* data, size_t len, bool end, UringFileWriter& out, F&& on_output) {
  using Fn = std::remove_reference_t<F>;
  return feed_impl(
      data, len, end, out, [](void* ctx, const uint8_t* d, size_t n) { (*static_cast<Fn*>(ctx))(d, n); },
      const_cast<void*>(static_cast<const void*>(&on_output)));
}

}  // namespace ioprobe::checkpoint
