// On-disk layout of one rank's shard file (ioprobe's own, DCP-like: one file per rank):
//
//   [chunk 0 stored bytes][chunk 1]...[chunk n-1]   zstd frame(s), or raw bytes when uncompressed
//   [region table: count x 24 B]                    kind u32, elem u32, offset u64, bytes u64
//   [chunk index: count x 48 B]                     logical off/len, stored off/len, xxh3 logical, xxh3 stored
//   [save block: 8 B, version >= 4]                 rank u32, world_size u32
//   [trailer: 64 B]                                 see Trailer
//
// All integers little-endian. Checksums are XXH3-64 (Debian libxxhash 0.8.1) of the logical
// (uncompressed, ungrouped) bytes and of the stored bytes of each chunk.
//
// Version 2 (ioprobe's own compression threads) adds kFlagFramePerPiece: a compressed chunk is
// then one zstd frame per piece (chunker.hpp's for_each_piece with trailer.piece_bytes), frames
// back to back; without the flag it is one frame per chunk (zstd's own pool; all of version 1).
// A reader decodes both the same way (concatenated frames are one zstd stream); the flag records
// the layout so that frames can be found and decoded independently.
//
// Version 3 adds kFlagPieceHashes (with kFlagFramePerPiece): a chunk's two checksums are then
// XXH3-64 of its pieces' XXH3-64 values (8 bytes each, little-endian, in piece order) -- of each
// piece's logical bytes, and of each piece's stored frame -- so the compression workers hash the
// piece they just compressed while it is still in their cache, in parallel, instead of one thread
// hashing the whole chunk from memory afterwards (combine_piece_hashes). Without the flag a
// chunk's checksums cover its bytes directly. From version 3 the trailer's meta_xxh3 also covers
// the trailer's other fields (codec, flags, sizes), so damage there is caught before the data is
// read.
//
// Version 4 adds the save block after the chunk index: the shard's own rank and the save's world
// size (how many shards the save wrote, one per rank, ranks 0..world_size-1), so a read-back sees
// a missing highest rank. It is part of the metadata that meta_xxh3 covers; the trailer keeps its
// 64 B and fields. Shards of versions 1 to 3 have no save block (world_size reads as 0: not
// recorded). Versions 1 to 4 are read; any other is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/state_spec.hpp"

namespace ioprobe::checkpoint {

constexpr char kShardMagic[8] = {'I', 'O', 'P', 'C', 'K', 'P', 'T', '1'};
constexpr uint32_t kShardVersion = 4;        // written
constexpr uint32_t kShardOldestVersion = 1;  // oldest read
constexpr uint32_t kFlagByteGrouped = 1;
constexpr uint32_t kFlagFramePerPiece = 2;  // version >= 2: one zstd frame per piece, not per chunk
constexpr uint32_t kFlagPieceHashes = 4;    // version >= 3, with kFlagFramePerPiece: checksums of piece checksums

struct IndexEntry {
  uint64_t logical_offset = 0, logical_len = 0;
  uint64_t stored_offset = 0, stored_len = 0;
  uint64_t xxh3_logical = 0, xxh3_stored = 0;
};

struct Trailer {
  uint32_t version = kShardVersion;
  uint32_t codec = 0;        // 0 none, 1 zstd
  uint32_t flags = 0;        // kFlagByteGrouped
  uint32_t piece_bytes = 0;  // byte-grouping piece size (chunker.hpp)
  uint64_t logical_bytes = 0;
  uint64_t chunk_count = 0;
  uint64_t region_count = 0;
  uint64_t meta_offset = 0;  // where the region table starts
  uint64_t meta_xxh3 = 0;    // XXH3-64 of region table + index (version 4: + save block; 3 and 4: + the trailer's
                             // other 56 bytes)
  // The save block (version >= 4), stored before the trailer, not in its 64 B:
  uint32_t rank = 0;        // the shard's global rank
  uint32_t world_size = 0;  // shards the save wrote (ranks 0..world_size-1); 0 = not recorded (versions 1-3)
};

constexpr uint64_t kTrailerBytes = 64;

/// A chunk's checksum under kFlagPieceHashes: XXH3-64 of `piece_hashes` (each XXH3-64 of one
/// piece's logical bytes or of its stored frame) as 8-byte little-endian values in piece order.
uint64_t combine_piece_hashes(const std::vector<uint64_t>& piece_hashes);

/// Serialises regions + index (+ the save block from version 4) + trailer (trailer.meta_xxh3 is
/// computed here).
std::vector<uint8_t> encode_metadata(const std::vector<Region>& regions, const std::vector<IndexEntry>& index,
                                     Trailer trailer);

/// Parses the 64-byte trailer. Returns false (with `why`) when magic or version differ.
bool decode_trailer(const uint8_t* p, Trailer& t, std::string& why);

/// Parses region table + index (+ the save block from version 4, into t.rank and t.world_size;
/// `meta` = bytes from meta_offset to the trailer) and checks meta_xxh3. Returns false with `why`
/// on a mismatch, or a save block whose rank is not below its world size.
bool decode_metadata(const std::vector<uint8_t>& meta, Trailer& t, std::vector<Region>& regions,
                     std::vector<IndexEntry>& index, std::string& why);

/// Bytes an uncompressed shard of `logical_bytes` (in `region_count` regions, cut into chunks of
/// `chunk_bytes`) occupies: the data + region table (24 B each) + index (48 B per chunk) + 8 B
/// save block + 64 B trailer, rounded up to 4 KiB (O_DIRECT writes and filesystem allocation are whole 4 KiB
/// blocks). Used to check free space before a save; a compressed shard has no such bound in
/// advance (its ratio is only known once written).
uint64_t uncompressed_shard_bytes(uint64_t logical_bytes, uint64_t region_count, uint64_t chunk_bytes);

/// Shard file name of a global rank, as PyTorch DCP names them: "__<rank>_0.distcp".
std::string shard_file_name(int rank);

}  // namespace ioprobe::checkpoint
