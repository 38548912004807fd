// The piece decoder: shard version 3 with piece checksums (shard_decoder.hpp). The rank's thread
// cuts the stored stream into zstd frames (ZSTD_findFrameCompressedSize on what was read so far)
// and hands each to a decoder (decode_pool.hpp), then combines the pieces' checksums in order as
// the results come back, as the writer did.
#include <zstd.h>
#include <zstd_errors.h>

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/chunker.hpp"
#include "checkpoint/decode_pool.hpp"
#include "checkpoint/piece_pool.hpp"
#include "checkpoint/shard_decoder.hpp"
#include "core/interrupt.hpp"

namespace ioprobe::checkpoint {

namespace {

class PieceDecoder final : public ShardDecoder {
 public:
  PieceDecoder(const Trailer& t, int threads)
      : piece_max_(t.piece_bytes ? t.piece_bytes : kPieceBytes), frame_max_(ZSTD_compressBound(piece_max_)),
        pool_(threads, frame_max_, piece_max_, t.flags & kFlagByteGrouped), threads_(threads < 0 ? 0 : threads),
        carry_(frame_max_) {}

  ChunkOutcome decode_chunk(ShardReader& rd, const IndexEntry& e) override {
    ChunkOutcome o;
    std::vector<PieceJob> pieces;
    for_each_piece(rd.shape(), e.logical_offset, e.logical_len, piece_max_,
                   [&](uint64_t off, size_t len, uint32_t elem) {
                     pieces.push_back({off, len, elem});
                   });
    std::vector<uint64_t> pl, ps;  // the pieces' logical and stored checksums, in order
    size_t submitted = 0;
    while (pl.size() < pieces.size()) {
      while (submitted < pieces.size() && pool_.in_flight() < pool_.window() && !interrupted()) {
        o.error = cut_frame(rd, submitted);
        if (!o.error.empty()) return o;
        pool_.submit(frame_, pieces[submitted].len, pieces[submitted].elem);
        ++submitted;
      }
      if (interrupted()) {
        o.interrupted = true;
        return o;
      }
      DecodePool::Result r = pool_.take(wait_ns_);
      if (!r.error.empty()) {
        o.error = std::move(r.error);
        o.error.detail = fmt::format("piece {} of the chunk: {}", pl.size(), o.error.detail);
        return o;
      }
      pl.push_back(r.xxh3_logical);
      ps.push_back(r.xxh3_stored);
    }
    if (carry_len_ > 0 || rd.chunk_left() > 0) {
      o.error.detail = "stray bytes after the chunk's last zstd frame";
      return o;
    }
    o.error.detail = checksum_mismatch(combine_piece_hashes(ps), combine_piece_hashes(pl), e);
    o.verified = o.error.empty();
    return o;
  }

  int64_t decode_ns() const override { return pool_.busy_ns(); }
  int threads() const override { return threads_; }
  int64_t wait_ns() const override { return wait_ns_; }

 private:
  // Fills the pool's next input with piece `n`'s whole frame (frame_ bytes); bytes read past it
  // are carried to the next frame. Returns an empty record, the failed read, or why the data is
  // not a frame (`detail`).
  ErrorRecord cut_frame(ShardReader& rd, size_t n) {
    uint8_t* buf = pool_.input();
    size_t have = carry_len_;
    std::memcpy(buf, carry_.data(), carry_len_);
    carry_len_ = 0;
    for (;;) {
      if (have > 0) {
        frame_ = ZSTD_findFrameCompressedSize(buf, have);
        if (!ZSTD_isError(frame_)) break;
        if (ZSTD_getErrorCode(frame_) != ZSTD_error_srcSize_wrong)
          return {.detail = fmt::format("piece {} of the chunk: not a zstd frame ({}): the data is corrupt", n,
                                        ZSTD_getErrorName(frame_))};
        if (have == frame_max_)
          return {.detail = fmt::format("piece {} of the chunk: no complete zstd frame within {} B, the most a "
                                        "piece's frame takes: the data is corrupt",
                                        n, frame_max_)};
      }
      const uint8_t* p = nullptr;
      size_t k = 0;
      if (!rd.next(p, k, frame_max_ - have))
        return rd.read_failed()
                   ? rd.read_failure()
                   : ErrorRecord{.detail = fmt::format("stored data ends inside piece {}'s zstd frame", n)};
      std::memcpy(buf + have, p, k);
      have += k;
    }
    carry_len_ = have - frame_;  // read past the frame: the next frame's first bytes
    std::memcpy(carry_.data(), buf + frame_, carry_len_);
    return {};
  }

  const size_t piece_max_, frame_max_;
  DecodePool pool_;
  const int threads_;
  std::vector<uint8_t> carry_;  // bytes read past a frame: the next frame's start
  size_t carry_len_ = 0, frame_ = 0;
  int64_t wait_ns_ = 0;
};

}  // namespace

std::unique_ptr<ShardDecoder> make_piece_decoder(const Trailer& t, int decode_threads) {
  return std::make_unique<PieceDecoder>(t, decode_threads);
}

}  // namespace ioprobe::checkpoint
