// Compression in ioprobe's own threads (one zstd frame per piece), the shard format versions,
// zero-copy O_DIRECT writes from the caller's memory and the io_uring restore reader.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "checkpoint/chunker.hpp"
#include "checkpoint/raw_baseline.hpp"
#include "checkpoint/restorer.hpp"
#include "checkpoint/saver.hpp"
#include "checkpoint/shard_format.hpp"
#include "checkpoint/state_spec.hpp"
#include "core/error.hpp"
#include "core/xxh3.hpp"
#include "engine/uring_reader.hpp"
#include "engine/uring_writer.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;
using namespace ioprobe::checkpoint;

namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::vector<uint8_t> v(std::filesystem::file_size(path));
  int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  size_t got = 0;
  while (got < v.size()) {
    ssize_t n = ::pread(fd, v.data() + got, v.size() - got, static_cast<off_t>(got));
    REQUIRE(n > 0);
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return v;
}

// Replaces the test's own file at `path` with `bytes`.
void rewrite_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::filesystem::remove(path);
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_EXCL, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

// Number of complete zstd frames in [p, p + n); -1 when the bytes are not whole frames.
int count_frames(const uint8_t* p, size_t n) {
  int frames = 0;
  while (n > 0) {
    size_t f = ZSTD_findFrameCompressedSize(p, n);
    if (ZSTD_isError(f) || f > n) return -1;
    p += f;
    n -= f;
    ++frames;
  }
  return frames;
}

}  // namespace

TEST_CASE("ioprobe's compression pool: one zstd frame per piece, restored and verified", "[checkpoint][io]") {
  struct Case {
    CompressPool pool;
    int threads;
    bool group;
    uint64_t chunk;
    uint64_t bytes;
  };
  const Case cases[] = {{CompressPool::kIoprobe, 2, false, 9000001, 20000003},
                        {CompressPool::kIoprobe, 0, false, 5000011, 9000007},
                        {CompressPool::kIoprobe, 3, true, 1000003, 13000019},
                        {CompressPool::kIoprobe, 2, false, 4097, 300001},
                        {CompressPool::kZstd, 2, false, 9000001, 20000003}};
  for (const Case& c : cases) {
    INFO("pool " << (c.pool == CompressPool::kZstd ? "zstd" : "ioprobe") << " threads " << c.threads << " group "
                 << c.group << " chunk " << c.chunk);
    TempDir d;
    StateSpec s = state_from_size(c.bytes, 1);
    std::vector<ResidentState> states;
    states.emplace_back(s.ranks[0], UINT64_MAX, 5);
    SaveOptions o;
    o.chunk_bytes = c.chunk;
    o.compress = parse_compression("zstd:1");
    o.compress_pool = c.pool;
    o.compress_threads = c.threads;
    o.byte_group = c.group;
    o.io.io_size = 256 * 1024;
    SaveResult r = save_checkpoint(states, d.path, o, false, nullptr);
    REQUIRE(r.ok);
    const RankSaveResult& rr = r.ranks[0];
    CHECK(rr.logical_bytes == c.bytes);
    // The frame count the writer reports is what the file holds, chunk by chunk.
    uint64_t pieces = 0;
    for (const Chunk& ch : make_chunks(c.bytes, c.chunk))
      for_each_piece(s.ranks[0], ch.offset, ch.len, kPieceBytes, [&](uint64_t, size_t, uint32_t) { ++pieces; });
    const uint64_t chunks = make_chunks(c.bytes, c.chunk).size();
    CHECK(rr.frames == (c.pool == CompressPool::kIoprobe ? pieces : chunks));
    std::vector<uint8_t> file = read_all(r.final_paths[0]);
    Trailer t;
    std::string why;
    REQUIRE(decode_trailer(file.data() + file.size() - kTrailerBytes, t, why));
    CHECK(t.version == kShardVersion);
    CHECK(((t.flags & kFlagFramePerPiece) != 0) == (c.pool == CompressPool::kIoprobe));
    CHECK(count_frames(file.data(), t.meta_offset) == static_cast<int>(rr.frames));
    if (c.pool == CompressPool::kIoprobe) {
      CHECK(rr.compress_workers_used >= 1);
      CHECK(rr.compress_workers_used <= std::max(1, c.threads));
      CHECK(rr.compress_busy_ns > 0);
      CHECK(rr.compress_active_ns > 0);
    }
    RestoreResult rs = restore_checkpoint(r.final_paths, 1 << 20);
    INFO(error_line(rs.ranks[0].error));
    CHECK(rs.ok);
    CHECK(rs.ranks[0].logical_bytes == c.bytes);
  }
}

TEST_CASE("shard versions: 1 to 4 are read, others refused naming the version", "[checkpoint]") {
  std::vector<Region> regions;
  std::vector<IndexEntry> index;
  auto trailer_of = [&](uint32_t version, uint32_t flags, uint32_t codec = 1) {
    Trailer t;
    t.version = version;
    t.flags = flags;
    t.codec = codec;
    std::vector<uint8_t> v = encode_metadata(regions, index, t);
    return std::vector<uint8_t>(v.end() - kTrailerBytes, v.end());
  };
  Trailer t;
  std::string why;
  CHECK(decode_trailer(trailer_of(1, 0).data(), t, why));
  CHECK(decode_trailer(trailer_of(2, kFlagFramePerPiece).data(), t, why));
  CHECK(decode_trailer(trailer_of(3, kFlagFramePerPiece | kFlagPieceHashes).data(), t, why));
  CHECK(decode_trailer(trailer_of(3, 0, 0).data(), t, why));
  CHECK(decode_trailer(trailer_of(4, kFlagFramePerPiece | kFlagPieceHashes).data(), t, why));
  // Piece sizes the restorer would allocate or walk: 4 KiB to 64 MiB (ioprobe writes 4 MiB).
  for (uint32_t piece : {1u, 4095u, (64u << 20) + 1, 0xffffffffu}) {
    std::vector<uint8_t> v = trailer_of(3, kFlagFramePerPiece | kFlagPieceHashes);
    for (int b = 0; b < 4; ++b) v[20 + b] = static_cast<uint8_t>(piece >> (8 * b));  // trailer.piece_bytes
    why.clear();
    CHECK_FALSE(decode_trailer(v.data(), t, why));
    CHECK(why.find("piece size") != std::string::npos);
  }
  CHECK_FALSE(decode_trailer(trailer_of(5, 0).data(), t, why));
  CHECK(why.find("version 5 is unknown") != std::string::npos);
  CHECK(why.find("versions 1 to 4") != std::string::npos);
  CHECK_FALSE(decode_trailer(trailer_of(0, 0).data(), t, why));
  CHECK_FALSE(decode_trailer(trailer_of(1, kFlagFramePerPiece).data(), t, why));
  CHECK(why.find("needs version 2") != std::string::npos);
  // Piece checksums: only in version 3, only with one zstd frame per piece.
  for (auto [version, flags, codec] :
       {std::tuple{2u, kFlagFramePerPiece | kFlagPieceHashes, 1u}, std::tuple{3u, kFlagPieceHashes, 1u},
        std::tuple{3u, kFlagFramePerPiece | kFlagPieceHashes, 0u}}) {
    INFO("version " << version << " flags " << flags << " codec " << codec);
    why.clear();
    CHECK_FALSE(decode_trailer(trailer_of(version, flags, codec).data(), t, why));
    CHECK(why.find("piece checksums need version 3") != std::string::npos);
  }
}

TEST_CASE("shard metadata: tables that do not describe a shard ioprobe writes are refused", "[checkpoint]") {
  // A valid shape: 2 regions (1000 + 3000 B), 2 chunks stored in 900 + 2500 B, data up to 3400.
  const std::vector<Region> regions = {{TensorKind::kWeightsBf16, 0, 1000}, {TensorKind::kMasterFp32, 1000, 3000}};
  const std::vector<IndexEntry> index = {{0, 2000, 0, 900, 1, 2}, {2000, 2000, 900, 2500, 3, 4}};
  Trailer base;
  base.codec = 1;
  base.logical_bytes = 4000;
  base.meta_offset = 3400;
  auto decode = [&](std::vector<Region> rg, std::vector<IndexEntry> ix, Trailer t, std::string& why) {
    std::vector<uint8_t> v = encode_metadata(rg, ix, t);
    Trailer back;
    REQUIRE(decode_trailer(v.data() + v.size() - kTrailerBytes, back, why));
    std::vector<uint8_t> meta(v.begin(), v.end() - kTrailerBytes);
    std::vector<Region> r2;
    std::vector<IndexEntry> i2;
    return decode_metadata(meta, back, r2, i2, why);
  };
  std::string why;
  REQUIRE(decode(regions, index, base, why));
  struct Bad {
    const char* what;
    std::vector<Region> rg;
    std::vector<IndexEntry> ix;
    uint64_t logical;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {"a gap between regions",
       {{TensorKind::kWeightsBf16, 0, 1000}, {TensorKind::kMasterFp32, 1001, 2999}},
       index,
       4000,
       "region table"},
      {"an empty region",
       {{TensorKind::kWeightsBf16, 0, 0}, {TensorKind::kMasterFp32, 0, 4000}},
       index,
       4000,
       "region table"},
      {"an unknown tensor kind",
       {{TensorKind::kWeightsBf16, 0, 1000}, {static_cast<TensorKind>(9), 1000, 3000}},
       index,
       4000,
       "kind 9"},
      {"regions beyond the logical bytes",
       {{TensorKind::kWeightsBf16, 0, 1000}, {TensorKind::kMasterFp32, 1000, ~uint64_t{0} - 500}},
       index,
       4000,
       "region table"},
      {"chunks overlapping", regions, {{0, 2000, 0, 900, 1, 2}, {1999, 2001, 900, 2500, 3, 4}}, 4000, "chunk index"},
      {"stored bytes past the data",
       regions,
       {{0, 2000, 0, 900, 1, 2}, {2000, 2000, 900, 2501, 3, 4}},
       4000,
       "chunk index"},
      {"a chunk zstd could not have packed",
       regions,
       {{0, 2000, 0, 900, 1, 2}, {2000, 2000, 900, 0, 3, 4}},
       4000,
       "chunk index"},
      {"chunks short of the state", regions, {{0, 2000, 0, 900, 1, 2}}, 4000, "covers 2000 B of 4000 B"},
  };
  for (const Bad& b : bad) {
    INFO(b.what);
    Trailer t = base;
    t.logical_bytes = b.logical;
    why.clear();
    CHECK_FALSE(decode(b.rg, b.ix, t, why));
    CHECK(why.find(b.says) != std::string::npos);
  }
  // More logical bytes than zstd can pack into the stored bytes (at most 128 KiB per 4-byte block).
  {
    Trailer big = base;
    big.logical_bytes = 10000000;
    big.meta_offset = 400;
    why.clear();
    CHECK_FALSE(decode({{TensorKind::kAdamM, 0, 10000000}}, {{0, 10000000, 0, 100, 1, 2}}, big, why));
    CHECK(why.find("chunk index") != std::string::npos);
    CHECK(decode({{TensorKind::kAdamM, 0, 10000000}}, {{0, 10000000, 0, 400, 1, 2}}, Trailer{big}, why) ==
          (10000000 / 32768 <= 400 + 4));
  }
  // Counts whose byte size wraps around 64 bits to the real table's size.
  std::vector<uint8_t> v = encode_metadata(regions, index, base);
  Trailer t;
  REQUIRE(decode_trailer(v.data() + v.size() - kTrailerBytes, t, why));
  std::vector<uint8_t> meta(v.begin(), v.end() - kTrailerBytes);
  t.region_count += (uint64_t{1} << 61);  // x 24 B = 3 x 2^64: wraps to the same byte count
  std::vector<Region> r2;
  std::vector<IndexEntry> i2;
  CHECK_FALSE(decode_metadata(meta, t, r2, i2, why));
  CHECK(why.find("regions") != std::string::npos);
}

TEST_CASE("version 3: a chunk's checksums are XXH3 of its pieces' and frames' XXH3, as documented",
          "[checkpoint][io]") {
  // Recomputed here from the file and the state alone, without the writer's or restorer's code:
  // each frame found with ZSTD_findFrameCompressedSize, each piece cut by for_each_piece.
  TempDir d;
  const uint64_t bytes = 21000017;  // several regions, pieces, chunks, a short last piece
  StateSpec s = state_from_size(bytes, 1);
  std::vector<ResidentState> states;
  states.emplace_back(s.ranks[0], UINT64_MAX, 9);
  SaveOptions o;
  o.chunk_bytes = 9000001;
  o.compress = parse_compression("zstd:1");
  o.compress_threads = 2;
  o.io.io_size = 256 * 1024;
  SaveResult r = save_checkpoint(states, d.path, o, false, nullptr);
  REQUIRE(r.ok);
  CHECK(r.ranks[0].checksum_cpu_ns > 0);
  std::vector<uint8_t> file = read_all(r.final_paths[0]);
  Trailer t;
  std::string why;
  REQUIRE(decode_trailer(file.data() + file.size() - kTrailerBytes, t, why));
  CHECK(t.version == kShardVersion);
  CHECK((t.flags & kFlagPieceHashes) != 0);
  std::vector<uint8_t> meta(file.begin() + static_cast<std::ptrdiff_t>(t.meta_offset), file.end() - kTrailerBytes);
  std::vector<Region> regions;
  std::vector<IndexEntry> index;
  REQUIRE(decode_metadata(meta, t, regions, index, why));
  REQUIRE(index.size() == make_chunks(bytes, o.chunk_bytes).size());
  std::vector<uint8_t> logical(kPieceBytes);
  for (const IndexEntry& e : index) {
    std::vector<uint64_t> lh, sh;
    for_each_piece(s.ranks[0], e.logical_offset, e.logical_len, kPieceBytes, [&](uint64_t off, size_t len, uint32_t) {
      states[0].copy_out(off, len, logical.data());
      lh.push_back(XXH3_64bits(logical.data(), len));
    });
    for (uint64_t at = e.stored_offset; at < e.stored_offset + e.stored_len;) {
      size_t f = ZSTD_findFrameCompressedSize(file.data() + at, e.stored_offset + e.stored_len - at);
      REQUIRE_FALSE(ZSTD_isError(f));
      sh.push_back(XXH3_64bits(file.data() + at, f));
      at += f;
    }
    CHECK(sh.size() == lh.size());  // one frame per piece
    std::vector<uint8_t> le;
    for (uint64_t h : lh)
      for (int b = 0; b < 8; ++b) le.push_back(static_cast<uint8_t>(h >> (8 * b)));
    CHECK(e.xxh3_logical == XXH3_64bits(le.data(), le.size()));
    CHECK(e.xxh3_logical == combine_piece_hashes(lh));
    CHECK(e.xxh3_stored == combine_piece_hashes(sh));
  }
}

TEST_CASE("version 3: a byte flipped anywhere in the stored frames is caught at restore", "[checkpoint][io]") {
  TempDir d;
  StateSpec s = state_from_size(9000007, 1);
  std::vector<ResidentState> states;
  states.emplace_back(s.ranks[0], UINT64_MAX, 4);
  SaveOptions o;
  o.compress = parse_compression("zstd:1");
  o.compress_threads = 2;
  o.io.io_size = 256 * 1024;
  SaveResult r = save_checkpoint(states, d.path, o, false, nullptr);
  REQUIRE(r.ok);
  const std::string path = r.final_paths[0];
  std::vector<uint8_t> good = read_all(path);
  Trailer t;
  std::string why;
  REQUIRE(decode_trailer(good.data() + good.size() - kTrailerBytes, t, why));
  // Frame headers, block headers, the middle, each frame's last bytes, the very last stored byte.
  std::vector<uint64_t> at = {0, 1, 4, 5, 6, 9, 100, t.meta_offset / 2, t.meta_offset - 1};
  for (uint64_t p = 0; p < t.meta_offset;) {
    size_t f = ZSTD_findFrameCompressedSize(good.data() + p, t.meta_offset - p);
    REQUIRE_FALSE(ZSTD_isError(f));
    p += f;
    at.push_back(p - 1);
    at.push_back(p - 3);
    if (p < t.meta_offset) at.push_back(p);
  }
  for (uint64_t off : at) {
    const int decoders = static_cast<int>(off % 3);  // 0 (the rank's thread), 1 or 2 decoders
    INFO("byte " << off << " flipped, " << decoders << " decoders");
    std::vector<uint8_t> bad = good;
    bad[off] ^= 0x40;
    rewrite_file(path, bad);
    RestoreResult rs = restore_checkpoint({path}, 1 << 20, decoders);
    CHECK_FALSE(rs.ok);
    CHECK(rs.ranks[0].corrupt);
    CHECK(rs.ranks[0].error.detail.find("chunk") != std::string::npos);
  }
}

TEST_CASE("version 3: a byte flipped anywhere in the trailer is caught at restore", "[checkpoint][io]") {
  TempDir d;
  for (const char* comp : {"none", "zstd:1"}) {
    StateSpec s = state_from_size(300007, 1);
    std::vector<ResidentState> states;
    states.emplace_back(s.ranks[0], UINT64_MAX, 3);
    SaveOptions o;
    o.chunk_bytes = 100003;
    o.compress = parse_compression(comp);
    o.io.io_size = 64 * 1024;
    const std::string dir = d.path + "/" + (o.compress.enabled ? "z" : "n");
    std::filesystem::create_directory(dir);
    SaveResult r = save_checkpoint(states, dir, o, false, nullptr);
    REQUIRE(r.ok);
    const std::string path = r.final_paths[0];
    const std::vector<uint8_t> good = read_all(path);
    for (size_t i = good.size() - kTrailerBytes; i < good.size(); ++i) {
      INFO(comp << ": trailer byte " << i - (good.size() - kTrailerBytes) << " flipped");
      std::vector<uint8_t> bad = good;
      bad[i] ^= 0x01;
      rewrite_file(path, bad);
      RestoreResult rs = restore_checkpoint({path}, 1 << 20, 1);
      CHECK_FALSE(rs.ok);
      CHECK(rs.ranks[0].corrupt);
    }
  }
}

TEST_CASE("version 3 restores decode frames in parallel, whatever the read size, with the same verdict",
          "[checkpoint][io]") {
  TempDir d;
  struct Case {
    bool group;
    uint64_t chunk;
  };
  for (const Case c : {Case{false, 9000001}, Case{true, 3000017}, Case{false, 4096}}) {
    StateSpec s = state_from_size(17000023, 1);
    std::vector<ResidentState> states;
    states.emplace_back(s.ranks[0], UINT64_MAX, 12);
    SaveOptions o;
    o.chunk_bytes = c.chunk;
    o.compress = parse_compression("zstd:1");
    o.compress_threads = 2;
    o.byte_group = c.group;
    o.io.io_size = 256 * 1024;
    const std::string dir = d.path + "/c" + std::to_string(c.chunk);
    std::filesystem::create_directory(dir);
    SaveResult r = save_checkpoint(states, dir, o, false, nullptr);
    REQUIRE(r.ok);
    std::vector<uint8_t> file = read_all(r.final_paths[0]);
    Trailer t;
    std::string why;
    REQUIRE(decode_trailer(file.data() + file.size() - kTrailerBytes, t, why));
    const uint64_t meta_offset = t.meta_offset;
    // Reads of one block (frames span many reads: bytes carried from one frame to the next) and
    // of 16 MiB (many frames per read); no decoders, one, several.
    for (uint64_t block : {uint64_t{4096}, uint64_t{16} << 20}) {
      for (int decoders : {0, 1, 3}) {
        INFO("group " << c.group << " chunk " << c.chunk << " read block " << block << " decoders " << decoders);
        RestoreResult rs = restore_checkpoint(r.final_paths, block, decoders);
        INFO(error_line(rs.ranks[0].error));
        CHECK(rs.ok);
        CHECK(rs.ranks[0].logical_bytes == s.ranks[0].bytes);
        CHECK(rs.ranks[0].chunks_verified == make_chunks(s.ranks[0].bytes, c.chunk).size());
        CHECK(rs.ranks[0].decode_threads == decoders);
        CHECK(rs.ranks[0].stored_bytes == meta_offset);  // every chunk byte read, none twice
      }
    }
  }
}

TEST_CASE("append_stable writes aligned memory without copying and any other bytes correctly", "[io]") {
  TempDir d;
  // Memory congruent with the file offsets (skew 0) and not (skew 100): the file is right in both.
  for (size_t skew : {size_t{0}, size_t{100}}) {
    INFO("skew " << skew);
    const size_t n = (3u << 20) + 12345;
    void* raw = nullptr;
    REQUIRE(posix_memalign(&raw, 4096, n + 8192) == 0);
    uint8_t* mem = static_cast<uint8_t*>(raw) + skew;
    std::mt19937_64 g(7);
    for (size_t i = 0; i < n; ++i) mem[i] = static_cast<uint8_t>(g());
    const std::string path = d.path + "/f" + std::to_string(skew);
    UringWriterOptions wo;
    wo.io_size = 256 * 1024;
    uint64_t zero_copy = 0;
    bool direct = false;
    {
      UringFileWriter w(path, wo);
      direct = w.direct();
      // Uneven pieces, the first ending off a 4 KiB boundary, as region ends do.
      const size_t cuts[] = {5000, 1u << 20, (1u << 20) + 777, (2u << 20) + 4096, n};
      size_t at = 0;
      for (size_t c : cuts) {
        INFO("append_stable at " << at << " len " << c - at);
        REQUIRE(w.append_stable(mem + at, c - at) == 0);
        at = c;
      }
      REQUIRE(w.finish() == 0);
      REQUIRE(w.fsync() == 0);
      zero_copy = w.stats().zero_copy_bytes;
      // Whatever the pieces, requests are io_size long (one write or a writev gathering copied
      // and zero-copy segments), but the last; with O_DIRECT the unaligned tail goes by pwrite.
      const size_t queued = w.direct() ? n - n % 4096 : n;
      CHECK(w.stats().write_requests == (queued + wo.io_size - 1) / wo.io_size);
    }
    std::vector<uint8_t> file = read_all(path);
    REQUIRE(file.size() == n);
    CHECK(std::memcmp(file.data(), mem, n) == 0);
    if (!direct) WARN("O_DIRECT refused in " << d.path << ": zero-copy not exercised");
    if (direct && skew == 0) CHECK(zero_copy > n / 2);
    if (skew != 0) CHECK(zero_copy == 0);
    free(raw);
  }
}

TEST_CASE("UringFileWriter's background flush runs every flush_bytes while writing, and the file is right", "[io]") {
  TempDir d;
  const size_t n = 8u << 20;
  std::vector<uint8_t> data(n);
  std::mt19937_64 g(11);
  for (auto& b : data) b = static_cast<uint8_t>(g());
  for (uint64_t flush : {uint64_t{0}, uint64_t{1} << 20}) {
    INFO("flush_bytes " << flush);
    const std::string path = d.path + "/flush" + std::to_string(flush);
    UringWriterOptions wo;
    wo.io_size = 256 * 1024;
    wo.flush_bytes = flush;
    uint64_t flushes = 0;
    {
      UringFileWriter w(path, wo);
      // The first 1 MiB completed queues a flush (none is in flight then), and finish() waits
      // for it: at least one has run by the end; at most one per 1 MiB.
      for (size_t at = 0; at < n; at += wo.io_size) REQUIRE(w.append(data.data() + at, wo.io_size) == 0);
      REQUIRE(w.finish() == 0);
      REQUIRE(w.fsync() == 0);
      flushes = w.stats().background_flushes;
    }
    CHECK(read_all(path) == data);
    if (flush == 0) CHECK(flushes == 0);
    else CHECK(flushes >= 1);
    CHECK(flushes <= n / std::max<uint64_t>(flush, 1));
  }
}

TEST_CASE("UringFileReader streams any byte range of a file in order", "[io]") {
  TempDir d;
  const size_t n = (2u << 20) + 999;
  std::vector<uint8_t> data(n);
  std::mt19937_64 g(3);
  for (auto& b : data) b = static_cast<uint8_t>(g());
  const std::string path = d.path + "/r";
  {
    int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, data.data(), n) == static_cast<ssize_t>(n));
    ::close(fd);
  }
  UringFileReader rd(path, UringReaderOptions{64 * 1024, 3, true});
  const std::pair<uint64_t, uint64_t> ranges[] = {{0, n}, {1, n - 1}, {4095, 4097}, {70000, 70000}, {123457, 1500001}};
  for (auto [lo, hi] : ranges) {
    INFO(lo << ".." << hi);
    REQUIRE(rd.start(lo, hi) == 0);
    std::vector<uint8_t> got;
    const uint8_t* p = nullptr;
    size_t len = 0;
    int r;
    while ((r = rd.next(p, len)) == 0) got.insert(got.end(), p, p + len);
    CHECK(r == 1);
    REQUIRE(got.size() == hi - lo);
    CHECK(std::equal(got.begin(), got.end(), data.begin() + static_cast<long>(lo)));
  }
  // A range past the end of the file: the reader says where the file ended.
  REQUIRE(rd.start(n - 10, n + 5000) == 0);
  const uint8_t* p = nullptr;
  size_t len = 0;
  int r = 0;
  while ((r = rd.next(p, len)) == 0) {
  }
  CHECK(r == -EIO);
  CHECK(rd.last_error().find("ends at offset") != std::string::npos);
  CHECK(rd.last_failure().err == 0);  // not a failed system call: the detail says what happened
  CHECK(rd.last_failure().detail.find("ends at offset") != std::string::npos);
}

TEST_CASE("the raw write baseline never opens or removes a file it did not create", "[io]") {
  TempDir d;
  // A file of someone else's under the name the baseline tries first (rank 0, this process).
  const std::string theirs = d.path + "/.ioprobe-raw.0." + std::to_string(getpid());
  {
    int fd = ::open(theirs.c_str(), O_CREAT | O_WRONLY | O_EXCL, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "keep me", 7) == 7);
    ::close(fd);
  }
  UringWriterOptions io;
  io.io_size = 256 * 1024;
  RawWriteResult r = measure_raw_write(d.path, {1u << 20}, io);
  CHECK(r.bytes == (1u << 20));
  CHECK(r.max_ns > 0);
  std::vector<uint8_t> kept = read_all(theirs);
  CHECK(std::string(kept.begin(), kept.end()) == "keep me");
  // Its own file is gone: only the foreign one is left.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(d.path)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 1);
}

TEST_CASE("shard save block: version 4 records the rank and the save's world size; older versions read without it",
          "[checkpoint]") {
  const RankState rank = state_from_size(1 << 20, 1).ranks[0];
  std::vector<IndexEntry> index = {IndexEntry{0, rank.bytes, 0, rank.bytes, 1, 2}};
  auto round_trip = [&](uint32_t version, uint32_t r, uint32_t world, Trailer& back, std::string& why) {
    Trailer t;
    t.version = version;
    t.logical_bytes = rank.bytes;
    t.meta_offset = rank.bytes;
    t.rank = r;
    t.world_size = world;
    const std::vector<uint8_t> v = encode_metadata(rank.regions, index, t);
    REQUIRE(decode_trailer(v.data() + v.size() - kTrailerBytes, back, why));
    const std::vector<uint8_t> meta(v.begin(), v.end() - kTrailerBytes);
    std::vector<Region> rg;
    std::vector<IndexEntry> ix;
    return decode_metadata(meta, back, rg, ix, why);
  };
  Trailer back;
  std::string why;
  REQUIRE(round_trip(4, 2, 3, back, why));
  CHECK(back.rank == 2);
  CHECK(back.world_size == 3);
  // Version 3 has no save block: the same fields are not written, and read as "not recorded".
  back.world_size = 7;
  REQUIRE(round_trip(3, 2, 3, back, why));
  CHECK(back.world_size == 0);
  CHECK(back.rank == 0);
  // A rank at or above the world size is not a shard ioprobe wrote.
  CHECK_FALSE(round_trip(4, 3, 3, back, why));
  CHECK(why.find("rank 3 of a save of 3 ranks") != std::string::npos);
}
