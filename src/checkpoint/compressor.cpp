#include "checkpoint/compressor.hpp"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getCParams (exported by Debian's libzstd 1.5.4)
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "engine/uring_writer.hpp"

namespace ioprobe::checkpoint {

std::string CompressionSpec::text() const { return enabled ? fmt::format("zstd:{}", level) : "none"; }

CompressionSpec parse_compression(const std::string& text) {
  CompressionSpec c;
  if (text == "none") return c;
  if (text == "zstd") {
    c.enabled = true;
    return c;
  }
  if (text.rfind("zstd:", 0) == 0) {
    const std::string lv = text.substr(5);
    // Decimal digits with an optional '-' (zstd's fast levels are negative): no '+', spaces or base prefix.
    const size_t digits = lv.find_first_not_of("0123456789", lv.rfind('-', 0) == 0 ? 1 : 0);
    const bool decimal = digits == std::string::npos && lv.size() > (lv.rfind('-', 0) == 0 ? 1u : 0u) && lv.size() <= 7;
    const long v = decimal ? std::strtol(lv.c_str(), nullptr, 10) : 0;
    if (decimal && v >= ZSTD_minCLevel() && v <= ZSTD_maxCLevel() && v != 0) {
      c.enabled = true;
      c.level = static_cast<int>(v);
      return c;
    }
  }
  throw UsageError(fmt::format("--compress: '{}' is not 'none' or 'zstd:LEVEL' with LEVEL from {} to {} (not 0)", text,
                               ZSTD_minCLevel(), ZSTD_maxCLevel()));
}

uint64_t zstd_job_bytes(int level, uint64_t chunk_bytes, uint64_t job_bytes) {
  constexpr uint64_t kJobMin = 512u << 10;  // ZSTDMT_JOBSIZE_MIN (zstd.h, ZSTD_c_jobSize)
  if (job_bytes) return std::max(job_bytes, kJobMin);
  ZSTD_compressionParameters cp = ZSTD_getCParams(level, chunk_bytes, 0);
  unsigned job_log = std::max(20u, cp.windowLog + 2);
  return uint64_t{1} << std::min(job_log, 30u);
}

int zstd_busy_workers(int level, uint64_t chunk_bytes, int workers, uint64_t job_bytes) {
  uint64_t job = zstd_job_bytes(level, chunk_bytes, job_bytes);
  uint64_t jobs = (chunk_bytes + job - 1) / job;
  return static_cast<int>(std::min<uint64_t>(std::max<uint64_t>(jobs, 1), static_cast<uint64_t>(std::max(workers, 1))));
}

ZstdProbe measure_zstd(const uint8_t* data, size_t len, int level, int workers, uint64_t job_bytes) {
  ZstdProbe p;
  std::vector<uint8_t> out(ZSTD_compressBound(len));
  ZSTD_CCtx* c = ZSTD_createCCtx();
  if (!c) return p;
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  if (workers > 0) ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, workers);
  if (workers > 0 && job_bytes) ZSTD_CCtx_setParameter(c, ZSTD_c_jobSize, static_cast<int>(job_bytes));
  int64_t t0 = now_ns();
  size_t n = ZSTD_compress2(c, out.data(), out.size(), data, len);
  int64_t t = now_ns() - t0;
  ZSTD_freeCCtx(c);
  if (ZSTD_isError(n) || t <= 0 || n == 0) return p;
  p.bytes_per_s = static_cast<double>(len) * 1e9 / static_cast<double>(t);
  p.ratio = static_cast<double>(len) / static_cast<double>(n);
  return p;
}

ChunkCompressor::ChunkCompressor(int level, int workers, uint64_t job_bytes) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  if (!c) throw std::bad_alloc();  // zstd's only reason to return no context
  cctx_ = c;
  size_t r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, workers);
  if (!ZSTD_isError(r) && job_bytes) r = ZSTD_CCtx_setParameter(c, ZSTD_c_jobSize, static_cast<int>(job_bytes));
  if (ZSTD_isError(r)) {
    ZSTD_freeCCtx(c);
    cctx_ = nullptr;
    const std::string what = fmt::format("zstd refused compression level {} with {} worker threads: {}", level, workers,
                                         ZSTD_getErrorName(r));
    // A parameter outside zstd's bounds is the caller's choice to change; anything else is a library failure.
    if (ZSTD_getErrorCode(r) == ZSTD_error_parameter_outOfBound ||
        ZSTD_getErrorCode(r) == ZSTD_error_parameter_unsupported)
      throw UsageError(what + fmt::format(" (this libzstd takes levels {}..{}; worker threads need a libzstd built "
                                          "with multithreading): choose a level and thread count it accepts",
                                          ZSTD_minCLevel(), ZSTD_maxCLevel()));
    throw Error(what, kExitFailure);
  }
}

ChunkCompressor::~ChunkCompressor() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

int ChunkCompressor::feed_impl(const uint8_t* data, size_t len, bool end, UringFileWriter& out,
                               void (*cb)(void*, const uint8_t*, size_t), void* ctx) {
  ZSTD_CCtx* c = static_cast<ZSTD_CCtx*>(cctx_);
  ZSTD_inBuffer in{data, len, 0};
  const ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_continue;
  for (;;) {
    size_t avail = 0;
    int err = 0;
    uint8_t* dst = out.reserve(avail, err);
    if (!dst) return err ? err : -EIO;
    ZSTD_outBuffer ob{dst, avail, 0};
    int64_t t0 = now_ns();
    size_t rem = ZSTD_compressStream2(c, &ob, &in, mode);
    busy_ns_ += now_ns() - t0;
    if (ZSTD_isError(rem)) {
      err_ = ZSTD_getErrorName(rem);
      return -EPROTO;
    }
    if (ob.pos) {
      cb(ctx, dst, ob.pos);
      int r = out.commit(ob.pos);
      if (r) return r;
    }
    bool input_done = in.pos == in.size;
    if (end ? rem == 0 : input_done) return 0;
  }
}

}  // namespace ioprobe::checkpoint
