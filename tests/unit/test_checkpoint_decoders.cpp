// The restore's shard reader and its decoders, one per layout of the shard format versions
// (checkpoint/shard_decoder.hpp). The shards are built here by hand from shard_format.hpp's
// description alone (not with ioprobe's writer), one per version and layout; each must restore
// with every chunk verified through the decoder its version picks, and a damaged copy of each
// must be refused naming the file, the chunk and the reason.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "checkpoint/chunker.hpp"
#include "checkpoint/restorer.hpp"
#include "checkpoint/shard_decoder.hpp"
#include "checkpoint/shard_format.hpp"
#include "checkpoint/shard_reader.hpp"
#include "checkpoint/state_spec.hpp"
#include "core/error.hpp"
#include "core/error_record.hpp"
#include "core/xxh3.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;
using namespace ioprobe::checkpoint;

namespace {

enum class Layout { kRaw, kFramePerChunk, kFramePerPiece, kPieceHashes };

struct Built {
  std::vector<uint8_t> file;
  uint64_t meta_offset = 0;
  size_t chunks = 0;
};

// A shard of `version` holding `logical` (the layout of `rank`), chunks of `chunk` bytes, pieces
// of `piece` bytes, as shard_format.hpp describes it.
Built build_shard(uint32_t version, Layout layout, const RankState& rank, const std::vector<uint8_t>& logical,
                  uint64_t chunk, uint32_t piece) {
  Built b;
  std::vector<IndexEntry> index;
  auto frame_of = [](const uint8_t* p, size_t n) {
    std::vector<uint8_t> f(ZSTD_compressBound(n));
    const size_t k = ZSTD_compress(f.data(), f.size(), p, n, 1);
    REQUIRE_FALSE(ZSTD_isError(k));
    f.resize(k);
    return f;
  };
  for (const Chunk& c : make_chunks(logical.size(), chunk)) {
    IndexEntry e;
    e.logical_offset = c.offset;
    e.logical_len = c.len;
    e.stored_offset = b.file.size();
    const uint8_t* src = logical.data() + c.offset;
    std::vector<uint8_t> stored;
    std::vector<uint64_t> piece_logical, piece_stored;
    if (layout == Layout::kRaw) {
      stored.assign(src, src + c.len);
    } else if (layout == Layout::kFramePerChunk) {
      stored = frame_of(src, c.len);
    } else {
      for_each_piece(rank, c.offset, c.len, piece, [&](uint64_t off, size_t len, uint32_t) {
        std::vector<uint8_t> f = frame_of(logical.data() + off, len);
        piece_logical.push_back(XXH3_64bits(logical.data() + off, len));
        piece_stored.push_back(XXH3_64bits(f.data(), f.size()));
        stored.insert(stored.end(), f.begin(), f.end());
      });
    }
    e.stored_len = stored.size();
    if (layout == Layout::kPieceHashes) {
      e.xxh3_logical = combine_piece_hashes(piece_logical);
      e.xxh3_stored = combine_piece_hashes(piece_stored);
    } else {
      e.xxh3_logical = XXH3_64bits(src, c.len);
      e.xxh3_stored = XXH3_64bits(stored.data(), stored.size());
    }
    b.file.insert(b.file.end(), stored.begin(), stored.end());
    index.push_back(e);
  }
  Trailer t;
  t.version = version;
  t.codec = layout == Layout::kRaw ? 0 : 1;
  t.flags = layout == Layout::kFramePerPiece ? kFlagFramePerPiece
            : layout == Layout::kPieceHashes ? kFlagFramePerPiece | kFlagPieceHashes
                                             : 0;
  t.piece_bytes = piece;
  t.logical_bytes = logical.size();
  t.meta_offset = b.file.size();
  b.meta_offset = t.meta_offset;
  b.chunks = index.size();
  std::vector<uint8_t> meta = encode_metadata(rank.regions, index, t);
  b.file.insert(b.file.end(), meta.begin(), meta.end());
  return b;
}

void write_file(const std::string& path, const std::vector<uint8_t>& v) {
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, v.data(), v.size()) == static_cast<ssize_t>(v.size()));
  ::close(fd);
}

struct Case {
  const char* name;
  uint32_t version;
  Layout layout;
  int decoder_threads;  // what the decoder picked for it reports (0 = the stream decoder)
};

}  // namespace

TEST_CASE("restore decoders: each shard format version is decoded and verified by its decoder", "[checkpoint][io]") {
  TempDir d("decoders");
  const uint64_t bytes = 1000003;  // several regions, pieces and chunks; short last ones
  const RankState rank = state_from_size(bytes, 1).ranks[0];
  std::vector<uint8_t> logical(bytes);
  for (size_t i = 0; i < bytes; ++i) logical[i] = static_cast<uint8_t>((i * 2654435761u >> 13) % 7 + (i % 251 == 0));
  const uint64_t chunk = 300007;
  const uint32_t piece = 65536;
  const std::vector<Case> cases = {
      {"version 1, uncompressed", 1, Layout::kRaw, 0},
      {"version 1, one zstd frame per chunk", 1, Layout::kFramePerChunk, 0},
      {"version 2, one zstd frame per piece", 2, Layout::kFramePerPiece, 0},
      {"version 3, one zstd frame per chunk (zstd's own pool)", 3, Layout::kFramePerChunk, 0},
      {"version 3, piece checksums, 2 decoder threads", 3, Layout::kPieceHashes, 2},
      {"version 3, piece checksums, on the rank's thread", 3, Layout::kPieceHashes, 0},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const Built b = build_shard(c.version, c.layout, rank, logical, chunk, piece);
    const std::string path = d.path + "/__0_0.distcp";
    write_file(path, b.file);
    {
      REQUIRE(ShardReader::make_cold(path).empty());
      ShardReader rd(path, 1 << 20);
      INFO(rd.error());
      REQUIRE_FALSE(rd.failed());
      CHECK(rd.trailer().version == c.version);
      CHECK(rd.index().size() == b.chunks);
      auto dec = make_shard_decoder(rd, 2);
      CHECK(dec->threads() == (c.layout == Layout::kPieceHashes ? 2 : 0));
      uint64_t verified = 0;
      for (const IndexEntry& e : rd.index()) {
        REQUIRE(rd.begin_chunk(e).empty());
        ChunkOutcome o = dec->decode_chunk(rd, e);
        INFO(error_line(o.error));
        CHECK(o.verified);
        verified += o.verified ? e.logical_len : 0;
      }
      CHECK(verified == bytes);
      CHECK(rd.stored_bytes() == b.meta_offset);  // every stored byte read once
    }
    RestoreResult rs = restore_checkpoint({path}, 64 * 1024, c.decoder_threads);
    INFO(error_line(rs.ranks[0].error));
    CHECK(rs.ok);
    CHECK(rs.ranks[0].logical_bytes == bytes);
    CHECK(rs.ranks[0].chunks_verified == b.chunks);
    CHECK(rs.ranks[0].decode_threads == (c.layout == Layout::kPieceHashes ? c.decoder_threads : 0));

    // Damaged copies: a byte of the second chunk's stored data, and the index's checksum of it.
    // Each is refused with the path, the chunk and the reason; nothing after it counts.
    const uint64_t second = chunk;  // logical offset of chunk 1
    for (int damage = 0; damage < 2; ++damage) {
      std::vector<uint8_t> bad = b.file;
      std::string says;
      if (damage == 0) {
        // The middle of chunk 1's stored bytes: read from the index built above.
        Trailer t;
        std::string why;
        REQUIRE(decode_trailer(b.file.data() + b.file.size() - kTrailerBytes, t, why));
        std::vector<uint8_t> meta(b.file.begin() + static_cast<ptrdiff_t>(t.meta_offset), b.file.end() - kTrailerBytes);
        std::vector<Region> rg;
        std::vector<IndexEntry> ix;
        REQUIRE(decode_metadata(meta, t, rg, ix, why));
        bad[ix[1].stored_offset + ix[1].stored_len / 2] ^= 0x5a;
        says = "";  // zstd or a checksum refuses it: either names the chunk
      } else {
        // Flip the stored checksum of chunk 1 in the index and re-seal the metadata, so only the
        // checksum comparison can catch it.
        Trailer t;
        std::string why;
        REQUIRE(decode_trailer(bad.data() + bad.size() - kTrailerBytes, t, why));
        std::vector<uint8_t> meta(bad.begin() + static_cast<ptrdiff_t>(t.meta_offset), bad.end() - kTrailerBytes);
        std::vector<Region> rg;
        std::vector<IndexEntry> ix;
        REQUIRE(decode_metadata(meta, t, rg, ix, why));
        ix[1].xxh3_stored ^= 1;
        std::vector<uint8_t> resealed = encode_metadata(rg, ix, t);
        bad.resize(t.meta_offset);
        bad.insert(bad.end(), resealed.begin(), resealed.end());
        says = "stored-bytes checksum mismatch";
      }
      write_file(path, bad);
      RestoreResult r = restore_checkpoint({path}, 64 * 1024, c.decoder_threads);
      const RankRestoreResult& rr = r.ranks[0];
      INFO("damage " << damage << ": " << error_line(rr.error));
      CHECK_FALSE(r.ok);
      CHECK(rr.corrupt);
      CHECK(rr.error.path == path);
      CHECK(error_line(rr.error).rfind(path + ": chunk 1 of " + std::to_string(b.chunks), 0) == 0);
      CHECK(rr.error.detail.find(fmt::format("logical bytes {}..", second)) != std::string::npos);
      if (!says.empty()) CHECK(rr.error.detail.find(says) != std::string::npos);
      CHECK(rr.chunks_verified == 1);
      CHECK(rr.logical_bytes == chunk);
    }
  }
}

TEST_CASE("restore reader: a file that is not a shard is refused with its path and why", "[checkpoint][io]") {
  TempDir d("decoders");
  const std::string path = d.path + "/__0_0.distcp";
  write_file(path, std::vector<uint8_t>(100, 7));
  REQUIRE(ShardReader::make_cold(path).empty());
  ShardReader rd(path, 1 << 20);
  CHECK(rd.failed());
  CHECK(rd.corrupt());
  CHECK(rd.error().rfind(path + ": ", 0) == 0);
  CHECK(rd.error().find("no ioprobe checkpoint trailer") != std::string::npos);
  const std::string missing = d.path + "/__1_0.distcp";
  // A failed open is a record with its errno, operation and path; its line is IoError's.
  const ErrorRecord cold = ShardReader::make_cold(missing);
  CHECK(cold.err == ENOENT);
  CHECK(cold.op == "open");
  CHECK(cold.path == missing);
  CHECK(error_line(cold) == IoError(ENOENT, "open", missing).what());
  RestoreResult r = restore_checkpoint({missing}, 1 << 20, 1);
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.ranks[0].corrupt);
  CHECK(r.ranks[0].error.err == ENOENT);
  CHECK(error_line(r.ranks[0].error).find(missing) != std::string::npos);
  // Not a shard: no errno, the path and why.
  CHECK(rd.failure().err == 0);
  CHECK(rd.failure().path == path);
}

TEST_CASE("verify-only decoder: stored checksums of every layout checked without decoding", "[checkpoint][io]") {
  TempDir d("decoders");
  const uint64_t bytes = 1000003;
  const RankState rank = state_from_size(bytes, 1).ranks[0];
  std::vector<uint8_t> logical(bytes);
  for (size_t i = 0; i < bytes; ++i) logical[i] = static_cast<uint8_t>((i * 2654435761u >> 13) % 7 + (i % 251 == 0));
  const uint64_t chunk = 300007;
  const std::vector<std::pair<uint32_t, Layout>> layouts = {{1, Layout::kRaw},
                                                            {1, Layout::kFramePerChunk},
                                                            {2, Layout::kFramePerPiece},
                                                            {3, Layout::kPieceHashes}};
  for (const auto& [version, layout] : layouts) {
    INFO("version " << version << ", layout " << static_cast<int>(layout));
    const Built b = build_shard(version, layout, rank, logical, chunk, 65536);
    const std::string path = d.path + "/__0_0.distcp";
    write_file(path, b.file);
    Trailer t;
    std::vector<IndexEntry> index;
    REQUIRE(check_shard_metadata(path, t, index).empty());
    CHECK(index.size() == b.chunks);
    RestoreResult ok = restore_checkpoint({path}, 64 * 1024, 0, true, RestoreMode::kVerifyStored);
    INFO(error_line(ok.ranks[0].error));
    CHECK(ok.ok);
    CHECK(ok.ranks[0].chunks_verified == b.chunks);
    CHECK(ok.ranks[0].stored_bytes == b.meta_offset);  // every stored byte read and hashed once
    CHECK(ok.ranks[0].logical_bytes == bytes);

    // A byte of chunk 1's stored data flipped: refused at chunk 1, with both checksums named.
    std::vector<uint8_t> bad = b.file;
    bad[index[1].stored_offset + index[1].stored_len / 2] ^= 0x5a;
    write_file(path, bad);
    RestoreResult r = restore_checkpoint({path}, 64 * 1024, 0, true, RestoreMode::kVerifyStored);
    const RankRestoreResult& rr = r.ranks[0];
    INFO(error_line(rr.error));
    CHECK_FALSE(r.ok);
    CHECK(rr.corrupt);
    CHECK(rr.chunks_verified == 1);
    CHECK(rr.error.path == path);
    CHECK(error_line(rr.error).rfind(path + ": chunk 1 of " + std::to_string(b.chunks), 0) == 0);
    CHECK(rr.error.detail.find(fmt::format("expected xxh3 {:016x} (the shard's index), read ", index[1].xxh3_stored)) !=
          std::string::npos);
  }
}

TEST_CASE("shard metadata check: a truncated or foreign file is refused with why", "[checkpoint][io]") {
  TempDir d("decoders");
  const RankState rank = state_from_size(200000, 1).ranks[0];
  const Built b = build_shard(3, Layout::kRaw, rank, std::vector<uint8_t>(200000, 3), 65536, 65536);
  const std::string path = d.path + "/__0_0.distcp";
  Trailer t;
  std::vector<IndexEntry> index;
  std::vector<uint8_t> cut(b.file.begin(), b.file.end() - 100);
  write_file(path, cut);
  CHECK(check_shard_metadata(path, t, index).find("no ioprobe checkpoint trailer") != std::string::npos);
  write_file(path, std::vector<uint8_t>(10, 1));
  CHECK(check_shard_metadata(path, t, index).find("too short for the 64 B trailer") != std::string::npos);
  std::vector<uint8_t> damaged = b.file;
  damaged[b.meta_offset + 3] ^= 1;  // inside the region table: the metadata checksum refuses it
  write_file(path, damaged);
  CHECK(check_shard_metadata(path, t, index).find("checksum (xxh3) mismatch") != std::string::npos);
  CHECK(check_shard_metadata(d.path + "/none", t, index).find(d.path + "/none") != std::string::npos);
}
