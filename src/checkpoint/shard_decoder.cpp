#include "checkpoint/shard_decoder.hpp"

#include <fmt/format.h>

namespace ioprobe::checkpoint {

std::unique_ptr<ShardDecoder> make_shard_decoder(const ShardReader& rd, int decode_threads) {
  const Trailer& t = rd.trailer();
  // decode_trailer accepts versions 1 to 4 only, and piece checksums only from version 3 with one
  // zstd frame per piece (version 4 adds the save block only: its chunks are laid out as in 3).
  switch (t.version) {
    case 1:
    case 2:
      return make_stream_decoder(t);
    default:
      if (t.codec == 1 && (t.flags & kFlagPieceHashes)) return make_piece_decoder(t, decode_threads);
      return make_stream_decoder(t);
  }
}

std::string checksum_mismatch(uint64_t stored, uint64_t logical, const IndexEntry& e) {
  if (stored != e.xxh3_stored)
    return fmt::format("stored-bytes checksum mismatch: expected xxh3 {:016x} (the shard's index), read {:016x}",
                       e.xxh3_stored, stored);
  if (logical != e.xxh3_logical)
    return fmt::format("logical checksum mismatch: expected xxh3 {:016x} (the shard's index), decoded {:016x}",
                       e.xxh3_logical, logical);
  return {};
}

}  // namespace ioprobe::checkpoint
