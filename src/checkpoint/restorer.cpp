#include "checkpoint/restorer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstring>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "checkpoint/byte_group.hpp"
#include "checkpoint/chunker.hpp"
#include "checkpoint/decode_pool.hpp"
#include "checkpoint/piece_pool.hpp"
#include "checkpoint/shard_format.hpp"
#include "core/clock.hpp"
#include "core/threads.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "core/xxh3.hpp"
#include "engine/uring_reader.hpp"

namespace ioprobe::checkpoint {

namespace {

bool pread_full(int fd, uint8_t* p, size_t n, uint64_t off, std::string& why) {
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0) {
      if (errno == EINTR) continue;
      why = fmt::format("read at offset {}: {}", off, errno_text(errno));
      return false;
    }
    if (r == 0) {
      why = fmt::format("file ends before offset {}", off + n);
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return true;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void restore_one(const std::string& path, uint64_t block, int decode_threads, RankRestoreResult& res) {
  res.path = path;
  {
    // Cold cache: make pages clean, then drop them (untimed). O_DIRECT reads bypass the cache
    // anyway; this keeps the buffered fallback and the metadata reads cold too.
    Fd f;
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) {
      res.error = IoError(errno, "open", escape_bytes(path)).what();
      return;
    }
    ::fdatasync(f.fd);
    ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED);
  }
  const int64_t t0 = now_ns();
  std::unique_ptr<UringFileReader> rd;
  try {
    rd = std::make_unique<UringFileReader>(path, UringReaderOptions{static_cast<size_t>(block), 4, true});
  } catch (const IoError& e) {
    res.error = fmt::format("{}", e.what());
    return;
  }
  res.direct = rd->direct();
  const int fd = rd->plain_fd();
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  struct stat st {};
  fstat(fd, &st);
  std::string why;
  uint8_t tb[kTrailerBytes];
  Trailer t;
  std::vector<Region> regions;
  std::vector<IndexEntry> index;
  if (static_cast<uint64_t>(st.st_size) < kTrailerBytes ||
      !pread_full(fd, tb, kTrailerBytes, st.st_size - kTrailerBytes, why) || !decode_trailer(tb, t, why)) {
    res.corrupt = true;
    res.error = fmt::format("{}: {}", escape_bytes(path), why.empty() ? "file too short for a trailer" : why);
    return;
  }
  std::vector<uint8_t> meta(st.st_size - kTrailerBytes - std::min<uint64_t>(t.meta_offset, st.st_size - kTrailerBytes));
  if (!pread_full(fd, meta.data(), meta.size(), t.meta_offset, why) || !decode_metadata(meta, t, regions, index, why)) {
    res.corrupt = true;
    res.error = fmt::format("{}: {}", escape_bytes(path), why);
    return;
  }
  RankState shape;
  shape.regions = regions;
  shape.bytes = t.logical_bytes;
  res.chunks_total = index.size();
  const bool zstd = t.codec == 1, grouped = t.flags & kFlagByteGrouped;
  // Version 3: one frame per piece and a chunk's checksums of its pieces' checksums
  // (shard_format.hpp): the frames are decoded and checksummed in parallel (decode_pool.hpp).
  const bool piece_hashes = zstd && (t.flags & kFlagPieceHashes);
  const size_t piece_max = t.piece_bytes ? t.piece_bytes : kPieceBytes;
  std::vector<uint8_t> out(piece_hashes ? 0 : piece_max), ug(grouped && !piece_hashes ? piece_max : 0);
  std::unique_ptr<DecodePool> pool;
  const size_t frame_max = ZSTD_compressBound(piece_max);
  if (piece_hashes) {
    pool = std::make_unique<DecodePool>(decode_threads, frame_max, piece_max, grouped);
    res.decode_threads = decode_threads;
  }
  std::vector<uint8_t> carry(piece_hashes ? frame_max : 0);  // bytes read past a frame: the next frame's start
  size_t carry_len = 0;
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  XXH3_state_t* hs = XXH3_createState();
  XXH3_state_t* hl = XXH3_createState();
  // The chunks' stored bytes lie back to back from offset 0 to the metadata: one stream, read
  // ahead by the reader; a chunk the index places elsewhere is corrupt.
  const uint64_t data_end = index.empty() ? 0 : index.back().stored_offset + index.back().stored_len;
  if (int r = rd->start(0, std::min<uint64_t>(data_end, t.meta_offset)); r < 0)
    res.error = fmt::format("{}: {}", escape_bytes(path), rd->last_error());
  uint64_t pos = 0;                // stream offset of the next byte of `blk`
  const uint8_t* blk = nullptr;    // the reader's current block
  size_t blk_len = 0, blk_pos = 0;

  for (size_t ci = 0; ci < index.size() && res.error.empty(); ++ci) {
    if (interrupted()) {
      res.interrupted = true;
      break;
    }
    const IndexEntry& e = index[ci];
    auto chunk_err = [&](const std::string& w) {
      res.corrupt = true;
      res.error = fmt::format("{}: chunk {} of {} (stored bytes {}..{}, logical bytes {}..{}): {}", escape_bytes(path),
                              ci, index.size(), e.stored_offset, e.stored_offset + e.stored_len, e.logical_offset,
                              e.logical_offset + e.logical_len, w);
    };
    if (e.stored_offset != pos) {  // (no bytes are carried over a chunk's end: see below)
      chunk_err(fmt::format("the index places it at offset {}, the previous chunk ended at {}", e.stored_offset, pos));
      break;
    }
    uint64_t left = e.stored_len;  // this chunk's stored bytes not yet taken from the reader
    // The next stored bytes of this chunk from the reader: a pointer into its current block and
    // up to `max` bytes; false at the chunk's end or on a read error (then res.error is set).
    auto next_bytes = [&](const uint8_t*& p, size_t& k, size_t max) -> bool {
      if (left == 0) return false;
      if (blk_pos == blk_len) {
        int64_t r0 = now_ns();
        int r = rd->next(blk, blk_len);
        res.read_ns += now_ns() - r0;
        if (r != 0) {
          chunk_err(r == 1 ? std::string("stored data ends early") : rd->last_error());
          return false;
        }
        blk_pos = 0;
      }
      k = static_cast<size_t>(std::min<uint64_t>({blk_len - blk_pos, left, max}));
      p = blk + blk_pos;
      blk_pos += k;
      res.stored_bytes += k;
      pos += k;
      left -= k;
      return true;
    };

    if (piece_hashes) {
      // Cut the stream into frames (ZSTD_findFrameCompressedSize on what was read so far), hand
      // each to a decoder, and combine the pieces' checksums in order as results come back.
      std::vector<PieceJob> pieces;
      for_each_piece(shape, e.logical_offset, e.logical_len, piece_max,
                     [&](uint64_t off, size_t len, uint32_t elem) { pieces.push_back({off, len, elem}); });
      std::vector<uint64_t> pl, ps;
      size_t submitted = 0;
      while (pl.size() < pieces.size() && res.error.empty()) {
        while (submitted < pieces.size() && pool->in_flight() < pool->window() && !interrupted()) {
          uint8_t* buf = pool->input();
          size_t have = carry_len, frame = 0;
          std::memcpy(buf, carry.data(), carry_len);
          carry_len = 0;
          for (;;) {
            if (have > 0) {
              frame = ZSTD_findFrameCompressedSize(buf, have);
              if (!ZSTD_isError(frame)) break;
              if (ZSTD_getErrorCode(frame) != ZSTD_error_srcSize_wrong) {
                chunk_err(fmt::format("piece {} of the chunk: not a zstd frame ({}): the data is corrupt", submitted,
                                      ZSTD_getErrorName(frame)));
                break;
              }
              if (have == frame_max) {
                chunk_err(fmt::format("piece {} of the chunk: no complete zstd frame within {} B, the most a piece's "
                                      "frame takes: the data is corrupt", submitted, frame_max));
                break;
              }
            }
            const uint8_t* p = nullptr;
            size_t k = 0;
            if (!next_bytes(p, k, frame_max - have)) {
              if (res.error.empty()) chunk_err(fmt::format("stored data ends inside piece {}'s zstd frame", submitted));
              break;
            }
            std::memcpy(buf + have, p, k);
            have += k;
          }
          if (!res.error.empty()) break;
          carry_len = have - frame;  // read past the frame: the next frame's first bytes
          std::memcpy(carry.data(), buf + frame, carry_len);
          pool->submit(frame, pieces[submitted].len, pieces[submitted].elem);
          ++submitted;
        }
        if (!res.error.empty()) break;
        if (interrupted()) {
          res.interrupted = true;
          break;
        }
        DecodePool::Result r = pool->take(res.decode_wait_ns);
        if (!r.error.empty()) {
          chunk_err(fmt::format("piece {} of the chunk: {}", pl.size(), r.error));
          break;
        }
        pl.push_back(r.xxh3_logical);
        ps.push_back(r.xxh3_stored);
      }
      if (!res.error.empty() || res.interrupted) break;
      if (carry_len > 0 || left > 0) {
        chunk_err("stray bytes after the chunk's last zstd frame");
        break;
      }
      const uint64_t gs = combine_piece_hashes(ps), gl = combine_piece_hashes(pl);
      if (gs != e.xxh3_stored) chunk_err(fmt::format("stored-bytes checksum mismatch (xxh3 {:016x}, index says {:016x})", gs, e.xxh3_stored));
      else if (gl != e.xxh3_logical) chunk_err(fmt::format("logical checksum mismatch (xxh3 {:016x}, index says {:016x})", gl, e.xxh3_logical));
      else {
        ++res.chunks_verified;
        res.logical_bytes += e.logical_len;
      }
      continue;
    }

    // Versions 1-2 and uncompressed shards: one stream through this thread, hashed as read.
    XXH3_64bits_reset(hs);
    XXH3_64bits_reset(hl);
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    ZSTD_inBuffer in{nullptr, 0, 0};
    auto refill = [&]() -> bool {
      if (in.pos < in.size) return true;
      const uint8_t* p = nullptr;
      size_t k = 0;
      if (!next_bytes(p, k, SIZE_MAX)) return false;
      XXH3_64bits_update(hs, p, k);
      in = ZSTD_inBuffer{p, k, 0};
      return true;
    };
    for_each_piece(shape, e.logical_offset, e.logical_len, piece_max, [&](uint64_t, size_t len, uint32_t elem) {
      if (!res.error.empty()) return;
      size_t got = 0;
      int64_t d0 = now_ns();
      while (got < len) {
        if (!refill()) {
          if (res.error.empty()) chunk_err("stored data ends early");
          return;
        }
        if (zstd) {
          ZSTD_outBuffer ob{out.data(), len, got};
          size_t r = ZSTD_decompressStream(dctx, &ob, &in);
          if (ZSTD_isError(r)) {
            chunk_err(fmt::format("zstd cannot decode it ({}): the data is corrupt", ZSTD_getErrorName(r)));
            return;
          }
          got = ob.pos;
        } else {
          size_t k = std::min(len - got, in.size - in.pos);
          std::memcpy(out.data() + got, static_cast<const uint8_t*>(in.src) + in.pos, k);
          in.pos += k;
          got += k;
        }
      }
      const uint8_t* logical = out.data();
      if (grouped) {
        ungroup_bytes(out.data(), len, elem, ug.data());
        logical = ug.data();
      }
      XXH3_64bits_update(hl, logical, len);
      res.decompress_ns += now_ns() - d0;
    });
    if (!res.error.empty()) break;
    while (left > 0 || in.pos < in.size) {  // rest of the frame (epilogue) or stray bytes
      if (!refill()) break;
      if (!zstd) {
        chunk_err("more stored bytes than logical bytes");
        break;
      }
      uint8_t dummy[64];
      ZSTD_outBuffer ob{dummy, sizeof(dummy), 0};
      size_t r = ZSTD_decompressStream(dctx, &ob, &in);
      if (ZSTD_isError(r) || ob.pos) {
        chunk_err(ZSTD_isError(r) ? fmt::format("zstd: {}", ZSTD_getErrorName(r)) : "frame holds more than the chunk");
        break;
      }
      if (r == 0 && in.pos < in.size) {
        chunk_err("stray bytes after the zstd frame");
        break;
      }
    }
    if (!res.error.empty()) break;
    uint64_t gs = XXH3_64bits_digest(hs), gl = XXH3_64bits_digest(hl);
    if (gs != e.xxh3_stored) chunk_err(fmt::format("stored-bytes checksum mismatch (xxh3 {:016x}, index says {:016x})", gs, e.xxh3_stored));
    else if (gl != e.xxh3_logical) chunk_err(fmt::format("logical checksum mismatch (xxh3 {:016x}, index says {:016x})", gl, e.xxh3_logical));
    else {
      ++res.chunks_verified;
      res.logical_bytes += e.logical_len;
    }
  }
  if (pool) res.decompress_ns = pool->busy_ns();
  ZSTD_freeDCtx(dctx);
  XXH3_freeState(hs);
  XXH3_freeState(hl);
  res.total_ns = now_ns() - t0;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

}  // namespace

RestoreResult restore_checkpoint(const std::vector<std::string>& paths, uint64_t read_block_bytes, int decode_threads) {
  RestoreResult res;
  res.ranks.resize(paths.size());
  int64_t t0 = now_ns();
  run_threads(paths.size(), [&](size_t i) {  // std::bad_alloc and the like are rethrown here
    restore_one(paths[i], std::max<uint64_t>(read_block_bytes, 4096), decode_threads, res.ranks[i]);
  });
  res.wall_ns = now_ns() - t0;
  res.ok = true;
  for (const auto& r : res.ranks) {
    if (r.interrupted) res.interrupted = true;
    if (!r.error.empty() || r.interrupted || r.chunks_verified != r.chunks_total) res.ok = false;
  }
  return res;
}

}  // namespace ioprobe::checkpoint
