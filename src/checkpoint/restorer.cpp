#include "checkpoint/restorer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstring>
#include <zstd.h>

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "checkpoint/byte_group.hpp"
#include "checkpoint/chunker.hpp"
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

void restore_one(const std::string& path, uint64_t block, RankRestoreResult& res) {
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
  // Version 3: a chunk's checksums are of its pieces' checksums, each piece one frame
  // (shard_format.hpp); the stored bytes are hashed frame by frame as zstd consumes them.
  const bool piece_hashes = zstd && (t.flags & kFlagPieceHashes);
  std::vector<uint64_t> pieces_logical, pieces_stored;
  const size_t piece_max = t.piece_bytes ? t.piece_bytes : kPieceBytes;
  std::vector<uint8_t> out(piece_max), ug(grouped ? piece_max : 0);
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  XXH3_state_t* hs = XXH3_createState();
  XXH3_state_t* hl = XXH3_createState();
  XXH3_state_t* hf = XXH3_createState();  // the current frame's stored bytes (piece_hashes)
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
    if (e.stored_offset != pos) {
      chunk_err(fmt::format("the index places it at offset {}, the previous chunk ended at {}", e.stored_offset, pos));
      break;
    }
    XXH3_64bits_reset(hs);
    XXH3_64bits_reset(hl);
    XXH3_64bits_reset(hf);
    pieces_logical.clear();
    pieces_stored.clear();
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    uint64_t left = e.stored_len;
    ZSTD_inBuffer in{nullptr, 0, 0};
    auto refill = [&]() -> bool {
      if (in.pos < in.size) return true;
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
      size_t k = static_cast<size_t>(std::min<uint64_t>(blk_len - blk_pos, left));
      if (!piece_hashes) XXH3_64bits_update(hs, blk + blk_pos, k);
      in = ZSTD_inBuffer{blk + blk_pos, k, 0};
      blk_pos += k;
      res.stored_bytes += k;
      pos += k;
      left -= k;
      return true;
    };
    for_each_piece(shape, e.logical_offset, e.logical_len, piece_max, [&](uint64_t, size_t len, uint32_t elem) {
      if (!res.error.empty()) return;
      size_t got = 0;
      int64_t d0 = now_ns();
      size_t zr = 1;  // ZSTD_decompressStream's last return; 0 = its frame is complete
      // One decompression step into `ob`; the input it consumed joins the frame's checksum.
      auto step = [&](ZSTD_outBuffer& ob) {
        const size_t before = in.pos;
        zr = ZSTD_decompressStream(dctx, &ob, &in);
        if (ZSTD_isError(zr)) {
          chunk_err(fmt::format("zstd cannot decode it ({}): the data is corrupt", ZSTD_getErrorName(zr)));
          return false;
        }
        if (piece_hashes) XXH3_64bits_update(hf, static_cast<const uint8_t*>(in.src) + before, in.pos - before);
        return true;
      };
      while (got < len) {
        if (!refill()) {
          if (res.error.empty()) chunk_err("stored data ends early");
          return;
        }
        if (zstd) {
          ZSTD_outBuffer ob{out.data(), len, got};
          if (!step(ob)) return;
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
      if (piece_hashes) {
        while (zr != 0) {  // the frame's end after its last output byte (last block, epilogue)
          if (!refill()) {
            if (res.error.empty()) chunk_err("stored data ends early");
            return;
          }
          uint8_t dummy[64];
          ZSTD_outBuffer ob{dummy, sizeof(dummy), 0};
          if (!step(ob)) return;
          if (ob.pos) {
            chunk_err("a zstd frame holds more than its piece");
            return;
          }
        }
        pieces_logical.push_back(XXH3_64bits(logical, len));
        pieces_stored.push_back(XXH3_64bits_digest(hf));
        XXH3_64bits_reset(hf);
      } else {
        XXH3_64bits_update(hl, logical, len);
      }
      res.decompress_ns += now_ns() - d0;
    });
    if (!res.error.empty()) break;
    if (piece_hashes && (left > 0 || in.pos < in.size)) chunk_err("stray bytes after the chunk's last zstd frame");
    while (res.error.empty() && (left > 0 || in.pos < in.size)) {  // rest of the frame (epilogue) or stray bytes
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
    const uint64_t gs = piece_hashes ? combine_piece_hashes(pieces_stored) : XXH3_64bits_digest(hs);
    const uint64_t gl = piece_hashes ? combine_piece_hashes(pieces_logical) : XXH3_64bits_digest(hl);
    if (gs != e.xxh3_stored) chunk_err(fmt::format("stored-bytes checksum mismatch (xxh3 {:016x}, index says {:016x})", gs, e.xxh3_stored));
    else if (gl != e.xxh3_logical) chunk_err(fmt::format("logical checksum mismatch (xxh3 {:016x}, index says {:016x})", gl, e.xxh3_logical));
    else {
      ++res.chunks_verified;
      res.logical_bytes += e.logical_len;
    }
  }
  ZSTD_freeDCtx(dctx);
  XXH3_freeState(hs);
  XXH3_freeState(hl);
  XXH3_freeState(hf);
  res.total_ns = now_ns() - t0;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

}  // namespace

RestoreResult restore_checkpoint(const std::vector<std::string>& paths, uint64_t read_block_bytes) {
  RestoreResult res;
  res.ranks.resize(paths.size());
  int64_t t0 = now_ns();
  run_threads(paths.size(), [&](size_t i) {  // std::bad_alloc and the like are rethrown here
    restore_one(paths[i], std::max<uint64_t>(read_block_bytes, 4096), res.ranks[i]);
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
