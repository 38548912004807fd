#include "checkpoint/shard_format.hpp"

#include <cstring>

#include <fmt/format.h>

#include "core/xxh3.hpp"

namespace ioprobe::checkpoint {

namespace {
void put32(std::vector<uint8_t>& v, uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
}
void put64(std::vector<uint8_t>& v, uint64_t x) {
  for (int i = 0; i < 8; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
}
uint32_t get32(const uint8_t* p) {
  uint32_t x = 0;
  for (int i = 3; i >= 0; --i) x = x << 8 | p[i];
  return x;
}
uint64_t get64(const uint8_t* p) {
  uint64_t x = 0;
  for (int i = 7; i >= 0; --i) x = x << 8 | p[i];
  return x;
}
constexpr size_t kRegionBytes = 24, kEntryBytes = 48, kSaveBlockBytes = 8;

// The trailer's first 56 bytes: everything but meta_xxh3.
void put_trailer_head(std::vector<uint8_t>& v, const Trailer& t) {
  v.insert(v.end(), kShardMagic, kShardMagic + 8);
  put32(v, t.version);
  put32(v, t.codec);
  put32(v, t.flags);
  put32(v, t.piece_bytes);
  for (uint64_t x : {t.logical_bytes, t.chunk_count, t.region_count, t.meta_offset}) put64(v, x);
}

// meta_xxh3: of the region table and index; from version 3 of the trailer's head too, so that
// a damaged codec, flag or size in the trailer is caught as well.
uint64_t meta_checksum(const uint8_t* meta, size_t len, const Trailer& t) {
  if (t.version < 3) return XXH3_64bits(meta, len);
  std::vector<uint8_t> v(meta, meta + len);
  put_trailer_head(v, t);
  return XXH3_64bits(v.data(), v.size());
}
}  // namespace

std::vector<uint8_t> encode_metadata(const std::vector<Region>& regions, const std::vector<IndexEntry>& index,
                                     Trailer t) {
  std::vector<uint8_t> v;
  for (const auto& r : regions) {
    put32(v, static_cast<uint32_t>(r.kind));
    put32(v, element_bytes(r.kind));
    put64(v, r.offset);
    put64(v, r.bytes);
  }
  for (const auto& e : index) {
    for (uint64_t x : {e.logical_offset, e.logical_len, e.stored_offset, e.stored_len, e.xxh3_logical, e.xxh3_stored})
      put64(v, x);
  }
  if (t.version >= 4) {
    put32(v, t.rank);
    put32(v, t.world_size);
  }
  t.region_count = regions.size();
  t.chunk_count = index.size();
  t.meta_xxh3 = meta_checksum(v.data(), v.size(), t);
  put_trailer_head(v, t);
  put64(v, t.meta_xxh3);
  return v;
}

uint64_t combine_piece_hashes(const std::vector<uint64_t>& piece_hashes) {
  std::vector<uint8_t> v;
  v.reserve(piece_hashes.size() * 8);
  for (uint64_t h : piece_hashes) put64(v, h);
  return XXH3_64bits(v.data(), v.size());
}

bool decode_trailer(const uint8_t* p, Trailer& t, std::string& why) {
  if (std::memcmp(p, kShardMagic, 8) != 0) {
    why = "no ioprobe checkpoint trailer (magic IOPCKPT1) at the end of the file";
    return false;
  }
  t.version = get32(p + 8);
  t.codec = get32(p + 12);
  t.flags = get32(p + 16);
  t.piece_bytes = get32(p + 20);
  t.logical_bytes = get64(p + 24);
  t.chunk_count = get64(p + 32);
  t.region_count = get64(p + 40);
  t.meta_offset = get64(p + 48);
  t.meta_xxh3 = get64(p + 56);
  if (t.version < kShardOldestVersion || t.version > kShardVersion) {
    why = fmt::format("shard format version {} is unknown (this ioprobe reads versions {} to {}): "
                      "restore it with the ioprobe that wrote it",
                      t.version, kShardOldestVersion, kShardVersion);
    return false;
  }
  if (t.codec > 1 || (t.flags & ~(kFlagByteGrouped | kFlagFramePerPiece | kFlagPieceHashes)) != 0) {
    why = fmt::format("codec {} or flags {:#x} in the trailer are unknown: the file is corrupt or from a newer ioprobe",
                      t.codec, t.flags);
    return false;
  }
  // ioprobe writes 4 MiB pieces (chunker.hpp); the restorer allocates buffers of this size and
  // walks a chunk piece by piece.
  if (t.piece_bytes != 0 && (t.piece_bytes < 4096 || t.piece_bytes > (64u << 20))) {
    why = fmt::format("piece size {} B in the trailer is not 4 KiB to 64 MiB: the file is corrupt or not from ioprobe",
                      t.piece_bytes);
    return false;
  }
  if (t.version < 2 && (t.flags & kFlagFramePerPiece)) {
    why = fmt::format("shard format version {} with flags {:#x}: one zstd frame per piece needs version 2", t.version,
                      t.flags);
    return false;
  }
  if ((t.flags & kFlagPieceHashes) && (t.version < 3 || !(t.flags & kFlagFramePerPiece) || t.codec != 1)) {
    why = fmt::format("shard format version {}, codec {}, flags {:#x}: piece checksums need version 3 and one zstd "
                      "frame per piece",
                      t.version, t.codec, t.flags);
    return false;
  }
  return true;
}

bool decode_metadata(const std::vector<uint8_t>& meta, Trailer& t, std::vector<Region>& regions,
                     std::vector<IndexEntry>& index, std::string& why) {
  const size_t save_block = t.version >= 4 ? kSaveBlockBytes : 0;
  if (t.region_count > meta.size() / kRegionBytes || t.chunk_count > meta.size() / kEntryBytes ||
      t.region_count * kRegionBytes + t.chunk_count * kEntryBytes + save_block != meta.size()) {
    why = fmt::format("index is {} B, the trailer says {} regions and {} chunks{}", meta.size(), t.region_count,
                      t.chunk_count, save_block ? " and a save block" : "");
    return false;
  }
  if (meta_checksum(meta.data(), meta.size(), t) != t.meta_xxh3) {
    why = t.version >= 3 ? "index and trailer checksum (xxh3) mismatch" : "index checksum (xxh3) mismatch";
    return false;
  }
  const uint8_t* p = meta.data();
  regions.clear();
  index.clear();
  for (uint64_t i = 0; i < t.region_count; ++i, p += kRegionBytes)
    regions.push_back(Region{static_cast<TensorKind>(get32(p)), get64(p + 8), get64(p + 16)});
  for (uint64_t i = 0; i < t.chunk_count; ++i, p += kEntryBytes)
    index.push_back(IndexEntry{get64(p), get64(p + 8), get64(p + 16), get64(p + 24), get64(p + 32), get64(p + 40)});
  t.rank = save_block ? get32(p) : 0;
  t.world_size = save_block ? get32(p + 4) : 0;
  if (t.world_size != 0 && t.rank >= t.world_size) {
    why = fmt::format("save block: rank {} of a save of {} ranks", t.rank, t.world_size);
    return false;
  }
  // The shapes the writer produces, checked so that a corrupt (or forged) table can neither send
  // the restorer past the file nor make it decode more than zstd can pack into the stored bytes.
  uint64_t at = 0;
  for (const Region& r : regions) {
    if (r.offset != at || r.bytes == 0 || r.bytes > t.logical_bytes - at || static_cast<uint32_t>(r.kind) > 3) {
      why = fmt::format("region table: a region at {} of {} B (kind {}) where the previous one ended at {} of {} B",
                        r.offset, r.bytes, static_cast<uint32_t>(r.kind), at, t.logical_bytes);
      return false;
    }
    at += r.bytes;
  }
  if (at != t.logical_bytes) {
    why = fmt::format("region table covers {} B of {} B", at, t.logical_bytes);
    return false;
  }
  uint64_t logical = 0, stored = 0;
  for (const IndexEntry& e : index) {
    // zstd packs at most 128 KiB into a 4-byte RLE block (RFC 8878 §3.1.1.2): a bound on any chunk.
    const bool fits = e.logical_offset == logical && e.logical_len > 0 && e.logical_len <= t.logical_bytes - logical &&
                      e.stored_offset == stored && e.stored_len > 0 && e.stored_len <= t.meta_offset - stored &&
                      e.logical_len / 32768 <= e.stored_len + 4;
    if (!fits) {
      why = fmt::format("chunk index: a chunk of {} B at {} stored in {} B at {}, where the previous chunk ended at "
                        "{} (logical) and {} (stored) and the data at {}",
                        e.logical_len, e.logical_offset, e.stored_len, e.stored_offset, logical, stored, t.meta_offset);
      return false;
    }
    logical += e.logical_len;
    stored += e.stored_len;
  }
  if (logical != t.logical_bytes) {
    why = fmt::format("chunk index covers {} B of {} B", logical, t.logical_bytes);
    return false;
  }
  return true;
}

std::string shard_file_name(int rank) { return fmt::format("__{}_0.distcp", rank); }

uint64_t uncompressed_shard_bytes(uint64_t logical_bytes, uint64_t region_count, uint64_t chunk_bytes) {
  const uint64_t chunks = chunk_bytes ? (logical_bytes + chunk_bytes - 1) / chunk_bytes : 1;
  const uint64_t total = logical_bytes + region_count * kRegionBytes + chunks * kEntryBytes + kSaveBlockBytes +
                         kTrailerBytes;
  return (total + 4095) / 4096 * 4096;
}

}  // namespace ioprobe::checkpoint
