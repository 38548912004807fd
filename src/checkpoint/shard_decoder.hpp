// Decoding and verifying a shard's chunks, one decoder per layout the shard format versions
// define (shard_format.hpp):
//
//   version 1             one zstd frame per chunk (or raw bytes), chunk checksums over its bytes
//   version 2             as 1, or one zstd frame per piece (kFlagFramePerPiece): still one zstd
//                         stream per chunk, checksums over its bytes
//   version 3             with kFlagPieceHashes: one frame per piece, checksums of the pieces'
//                         checksums, decoded by parallel workers (decode_pool.hpp); without it
//                         (zstd's own pool, or uncompressed) as version 2
//
// The first two and version 3 without piece checksums go through the stream decoder
// (decode_stream.cpp: the rank's thread decodes and hashes as it reads); version 3 with piece
// checksums through the piece decoder (decode_pieces.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "checkpoint/shard_format.hpp"
#include "checkpoint/shard_reader.hpp"
#include "core/error_record.hpp"

namespace ioprobe::checkpoint {

/// What decoding one chunk found.
struct ChunkOutcome {
  bool verified = false;     // both checksums match the index
  bool interrupted = false;  // Ctrl-C or SIGTERM stopped it (not an error)
  // Why the chunk is refused; empty() when it is not. A failed read keeps the device's errno and
  // the operation with its offset (ShardReader::read_failure); data that does not decode or check
  // has err 0 and `detail`, one line. No path or chunk: the caller adds them.
  ErrorRecord error;
};

class ShardDecoder {
 public:
  virtual ~ShardDecoder() = default;
  /// Reads chunk `e` from `rd` (begun with begin_chunk), decodes it and checks its two XXH3-64
  /// checksums against the index. Never throws for data or I/O errors (see ChunkOutcome).
  virtual ChunkOutcome decode_chunk(ShardReader& rd, const IndexEntry& e) = 0;
  /// Nanoseconds spent decoding, ungrouping (and, for version 3, hashing), summed over decoders.
  virtual int64_t decode_ns() const = 0;
  /// Decoder threads used (version 3 with piece checksums), 0 = the rank's own thread.
  virtual int threads() const { return 0; }
  /// Nanoseconds the rank's thread waited for decoder threads.
  virtual int64_t wait_ns() const { return 0; }
};

/// The decoder for `rd`'s shard: its trailer's version and flags pick it (see the table above).
/// `decode_threads` sets the piece decoder's workers (0 = on the rank's thread). Throws
/// std::bad_alloc, and std::system_error when a worker thread cannot start.
std::unique_ptr<ShardDecoder> make_shard_decoder(const ShardReader& rd, int decode_threads);

/// The stream decoder (versions 1, 2, and 3 without piece checksums).
std::unique_ptr<ShardDecoder> make_stream_decoder(const Trailer& t);
/// The piece decoder (version 3 with piece checksums) with `decode_threads` workers.
std::unique_ptr<ShardDecoder> make_piece_decoder(const Trailer& t, int decode_threads);

/// The checksum-only decoder (any version): checks each chunk's stored-bytes XXH3-64 against the
/// index without decompressing (version 3 with piece checksums: frames found from their headers,
/// each hashed, combined in piece order); the logical checksum, which needs the decompressed
/// bytes, is not checked. decode_ns() is the time spent finding frames and hashing. Throws
/// std::bad_alloc.
std::unique_ptr<ShardDecoder> make_verify_decoder(const Trailer& t);

/// "" when the checksums computed (`stored`, `logical`) are the index's, else which one differs.
std::string checksum_mismatch(uint64_t stored, uint64_t logical, const IndexEntry& e);

}  // namespace ioprobe::checkpoint
