#include "checkpoint/restorer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <cstring>
#include <zstd.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "checkpoint/byte_group.hpp"
#include "checkpoint/chunker.hpp"
#include "checkpoint/shard_format.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"

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
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) {
    res.error = IoError(errno, "open", escape_bytes(path)).what();
    return;
  }
  // Cold cache: make pages clean, then drop them (untimed).
  ::fdatasync(f.fd);
  ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED);
  ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  const int64_t t0 = now_ns();
  struct stat st {};
  fstat(f.fd, &st);
  std::string why;
  uint8_t tb[kTrailerBytes];
  Trailer t;
  std::vector<Region> regions;
  std::vector<IndexEntry> index;
  if (static_cast<uint64_t>(st.st_size) < kTrailerBytes ||
      !pread_full(f.fd, tb, kTrailerBytes, st.st_size - kTrailerBytes, why) || !decode_trailer(tb, t, why)) {
    res.corrupt = true;
    res.error = fmt::format("{}: {}", escape_bytes(path), why.empty() ? "file too short for a trailer" : why);
    return;
  }
  std::vector<uint8_t> meta(st.st_size - kTrailerBytes - std::min<uint64_t>(t.meta_offset, st.st_size - kTrailerBytes));
  if (!pread_full(f.fd, meta.data(), meta.size(), t.meta_offset, why) || !decode_metadata(meta, t, regions, index, why)) {
    res.corrupt = true;
    res.error = fmt::format("{}: {}", escape_bytes(path), why);
    return;
  }
  RankState shape;
  shape.regions = regions;
  shape.bytes = t.logical_bytes;
  res.chunks_total = index.size();
  const bool zstd = t.codec == 1, grouped = t.flags & kFlagByteGrouped;
  const size_t piece_max = t.piece_bytes ? t.piece_bytes : kPieceBytes;
  std::vector<uint8_t> in_buf(block), out(piece_max), ug(grouped ? piece_max : 0);
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  XXH3_state_t* hs = XXH3_createState();
  XXH3_state_t* hl = XXH3_createState();

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
    XXH3_64bits_reset(hs);
    XXH3_64bits_reset(hl);
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    uint64_t off = e.stored_offset, left = e.stored_len;
    ZSTD_inBuffer in{in_buf.data(), 0, 0};
    auto refill = [&]() -> bool {
      if (in.pos < in.size) return true;
      if (left == 0) return false;
      size_t k = static_cast<size_t>(std::min<uint64_t>(block, left));
      int64_t r0 = now_ns();
      std::string w;
      bool ok = pread_full(f.fd, in_buf.data(), k, off, w);
      res.read_ns += now_ns() - r0;
      if (!ok) {
        chunk_err(w);
        return false;
      }
      XXH3_64bits_update(hs, in_buf.data(), k);
      res.stored_bytes += k;
      off += k;
      left -= k;
      in = ZSTD_inBuffer{in_buf.data(), k, 0};
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
  ZSTD_freeDCtx(dctx);
  XXH3_freeState(hs);
  XXH3_freeState(hl);
  res.total_ns = now_ns() - t0;
  ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED);
}

}  // namespace

RestoreResult restore_checkpoint(const std::vector<std::string>& paths, uint64_t read_block_bytes) {
  RestoreResult res;
  res.ranks.resize(paths.size());
  int64_t t0 = now_ns();
  std::vector<std::thread> th;
  for (size_t i = 0; i < paths.size(); ++i)
    th.emplace_back([&, i] { restore_one(paths[i], std::max<uint64_t>(read_block_bytes, 4096), res.ranks[i]); });
  for (auto& t : th) t.join();
  res.wall_ns = now_ns() - t0;
  res.ok = true;
  for (const auto& r : res.ranks) {
    if (r.interrupted) res.interrupted = true;
    if (!r.error.empty() || r.interrupted || r.chunks_verified != r.chunks_total) res.ok = false;
  }
  return res;
}

}  // namespace ioprobe::checkpoint
