// The checksum-only decoder (shard_decoder.hpp, make_verify_decoder): checks each chunk's
// stored-bytes XXH3-64 against the index without decompressing. Version 3 shards with piece
// checksums hash each piece's zstd frame (found with ZSTD_findFrameCompressedSize, which reads
// frame and block headers only) and combine the frames' checksums in piece order, as the writer
// did; every other layout hashes the chunk's stored bytes as one stream.
#include <zstd.h>
#include <zstd_errors.h>

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/chunker.hpp"
#include "checkpoint/shard_decoder.hpp"
#include "checkpoint/zstd_handles.hpp"
#include "core/clock.hpp"
#include "core/interrupt.hpp"

namespace ioprobe::checkpoint {

namespace {

class VerifyDecoder final : public ShardDecoder {
 public:
  explicit VerifyDecoder(const Trailer& t)
      : pieces_((t.flags & kFlagPieceHashes) != 0), piece_max_(t.piece_bytes ? t.piece_bytes : kPieceBytes),
        frame_max_(pieces_ ? ZSTD_compressBound(piece_max_) : 0), buf_(frame_max_), state_(make_xxh3_state()) {}

  ChunkOutcome decode_chunk(ShardReader& rd, const IndexEntry& e) override {
    ChunkOutcome o;
    const int64_t t0 = now_ns();
    uint64_t stored = 0;
    o.error = pieces_ ? hash_frames(rd, e, stored) : hash_stream(rd, stored);
    if (o.error.empty() && interrupted()) o.interrupted = true;
    hash_ns_ += now_ns() - t0;
    if (!o.error.empty() || o.interrupted) return o;
    o.error.detail = checksum_mismatch(stored, e.xxh3_logical, e);  // the logical checksum is not computed here
    o.verified = o.error.empty();
    return o;
  }

  int64_t decode_ns() const override { return hash_ns_; }

 private:
  // An empty record, or the failed read.
  ErrorRecord hash_stream(ShardReader& rd, uint64_t& out) {
    XXH3_64bits_reset(state_.get());
    const uint8_t* p = nullptr;
    size_t k = 0;
    while (rd.next(p, k)) XXH3_64bits_update(state_.get(), p, k);
    if (rd.read_failed()) return rd.read_failure();
    out = XXH3_64bits_digest(state_.get());
    return {};
  }

  // One frame per piece, back to back; a frame may end inside a block the reader handed out, so
  // the bytes past it are kept for the next frame. An empty record, the failed read, or why the
  // data is not a frame (`detail`).
  ErrorRecord hash_frames(ShardReader& rd, const IndexEntry& e, uint64_t& out) {
    size_t n_pieces = 0;
    for_each_piece(rd.shape(), e.logical_offset, e.logical_len, piece_max_,
                   [&](uint64_t, size_t, uint32_t) { ++n_pieces; });
    std::vector<uint64_t> hashes;
    size_t have = 0;
    for (size_t n = 0; n < n_pieces && !interrupted(); ++n) {
      size_t frame = 0;
      for (;;) {
        if (have > 0) {
          frame = ZSTD_findFrameCompressedSize(buf_.data(), have);
          if (!ZSTD_isError(frame)) break;
          if (ZSTD_getErrorCode(frame) != ZSTD_error_srcSize_wrong)
            return {.detail = fmt::format("piece {} of the chunk: not a zstd frame ({}): the data is corrupt", n,
                                          ZSTD_getErrorName(frame))};
          if (have == frame_max_)
            return {
                .detail = fmt::format("piece {} of the chunk: no complete zstd frame within {} B: the data is corrupt",
                                      n, frame_max_)};
        }
        const uint8_t* p = nullptr;
        size_t k = 0;
        if (!rd.next(p, k, frame_max_ - have))
          return rd.read_failed()
                     ? rd.read_failure()
                     : ErrorRecord{.detail = fmt::format("stored data ends inside piece {}'s zstd frame", n)};
        std::memcpy(buf_.data() + have, p, k);
        have += k;
      }
      hashes.push_back(XXH3_64bits(buf_.data(), frame));
      std::memmove(buf_.data(), buf_.data() + frame, have - frame);
      have -= frame;
    }
    if (interrupted()) return {};
    if (have > 0 || rd.chunk_left() > 0) return {.detail = "stray bytes after the chunk's last zstd frame"};
    out = combine_piece_hashes(hashes);
    return {};
  }

  const bool pieces_;
  const size_t piece_max_, frame_max_;
  std::vector<uint8_t> buf_;
  Xxh3State state_;
  int64_t hash_ns_ = 0;
};

}  // namespace

std::unique_ptr<ShardDecoder> make_verify_decoder(const Trailer& t) { return std::make_unique<VerifyDecoder>(t); }

}  // namespace ioprobe::checkpoint
