// The stream decoder: shard versions 1 and 2, and version 3 without piece checksums
// (shard_decoder.hpp). A chunk's stored bytes go through the rank's thread as one zstd stream
// (concatenated frames decode as one) or as raw bytes, hashed as they are read.
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/byte_group.hpp"
#include "checkpoint/chunker.hpp"
#include "checkpoint/piece_pool.hpp"
#include "checkpoint/shard_decoder.hpp"
#include "checkpoint/zstd_handles.hpp"
#include "core/clock.hpp"

namespace ioprobe::checkpoint {

namespace {

class StreamDecoder final : public ShardDecoder {
 public:
  explicit StreamDecoder(const Trailer& t)
      : zstd_(t.codec == 1), grouped_(t.flags & kFlagByteGrouped),
        piece_max_(t.piece_bytes ? t.piece_bytes : kPieceBytes), out_(piece_max_),
        ungrouped_(grouped_ ? piece_max_ : 0), dctx_(make_zstd_dctx()), stored_(make_xxh3_state()),
        logical_(make_xxh3_state()) {}

  ChunkOutcome decode_chunk(ShardReader& rd, const IndexEntry& e) override {
    ChunkOutcome o;
    XXH3_64bits_reset(stored_.get());
    XXH3_64bits_reset(logical_.get());
    ZSTD_DCtx_reset(dctx_.get(), ZSTD_reset_session_only);
    ZSTD_inBuffer in{nullptr, 0, 0};
    // More input when `in` is used up; false at the chunk's end or on a read error.
    auto refill = [&]() -> bool {
      if (in.pos < in.size) return true;
      const uint8_t* p = nullptr;
      size_t k = 0;
      if (!rd.next(p, k)) return false;
      XXH3_64bits_update(stored_.get(), p, k);
      in = ZSTD_inBuffer{p, k, 0};
      return true;
    };
    auto fail = [&](const std::string& why) {
      if (o.error.empty()) o.error = rd.read_failed() ? rd.read_failure() : ErrorRecord{.detail = why};
    };
    for_each_piece(rd.shape(), e.logical_offset, e.logical_len, piece_max_, [&](uint64_t, size_t len, uint32_t elem) {
      if (!o.error.empty()) return;
      size_t got = 0;
      const int64_t d0 = now_ns();
      while (got < len) {
        if (!refill()) return fail("stored data ends early");
        if (zstd_) {
          ZSTD_outBuffer ob{out_.data(), len, got};
          const size_t r = ZSTD_decompressStream(dctx_.get(), &ob, &in);
          if (ZSTD_isError(r))
            return fail(fmt::format("zstd cannot decode it ({}): the data is corrupt", ZSTD_getErrorName(r)));
          got = ob.pos;
        } else {
          const size_t k = std::min(len - got, in.size - in.pos);
          std::memcpy(out_.data() + got, static_cast<const uint8_t*>(in.src) + in.pos, k);
          in.pos += k;
          got += k;
        }
      }
      const uint8_t* logical = out_.data();
      if (grouped_) {
        ungroup_bytes(out_.data(), len, elem, ungrouped_.data());
        logical = ungrouped_.data();
      }
      XXH3_64bits_update(logical_.get(), logical, len);
      decode_ns_ += now_ns() - d0;
    });
    if (!o.error.empty()) return o;
    while (rd.chunk_left() > 0 || in.pos < in.size) {  // rest of the frame (epilogue) or stray bytes
      if (!refill()) {
        if (rd.read_failed()) o.error = rd.read_failure();
        break;
      }
      if (!zstd_) {
        o.error.detail = "more stored bytes than logical bytes";
        return o;
      }
      uint8_t dummy[64];
      ZSTD_outBuffer ob{dummy, sizeof(dummy), 0};
      const size_t r = ZSTD_decompressStream(dctx_.get(), &ob, &in);
      if (ZSTD_isError(r) || ob.pos) {
        o.error.detail = ZSTD_isError(r) ? fmt::format("zstd: {}", ZSTD_getErrorName(r))
                                         : "frame holds more than the chunk";
        return o;
      }
      if (r == 0 && in.pos < in.size) {
        o.error.detail = "stray bytes after the zstd frame";
        return o;
      }
    }
    if (!o.error.empty()) return o;
    o.error.detail = checksum_mismatch(XXH3_64bits_digest(stored_.get()), XXH3_64bits_digest(logical_.get()), e);
    o.verified = o.error.empty();
    return o;
  }

  int64_t decode_ns() const override { return decode_ns_; }

 private:
  const bool zstd_, grouped_;
  const size_t piece_max_;
  std::vector<uint8_t> out_, ungrouped_;
  ZstdDCtx dctx_;
  Xxh3State stored_, logical_;
  int64_t decode_ns_ = 0;
};

}  // namespace

std::unique_ptr<ShardDecoder> make_stream_decoder(const Trailer& t) { return std::make_unique<StreamDecoder>(t); }

}  // namespace ioprobe::checkpoint
