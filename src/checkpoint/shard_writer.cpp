#include "checkpoint/shard_writer.hpp"

#include <xxhash.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "checkpoint/byte_group.hpp"
#include "checkpoint/chunker.hpp"
#include "checkpoint/shard_format.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace ioprobe::checkpoint {

namespace {

struct Piece {
  uint64_t off;
  size_t len;
  uint32_t elem;
};

struct Hashers {
  XXH3_state_t* logical = XXH3_createState();
  XXH3_state_t* stored = XXH3_createState();
  ~Hashers() {
    XXH3_freeState(logical);
    XXH3_freeState(stored);
  }
};

}  // namespace

RankSaveResult save_shard(const ResidentState& state, const std::string& tmp_path, const SaveOptions& opts,
                          const std::atomic<bool>* abort) {
  RankSaveResult res;
  res.rank = state.rank().rank;
  res.path = tmp_path;
  const int64_t t_start = now_ns();
  std::unique_ptr<UringFileWriter> w;
  try {
    w = std::make_unique<UringFileWriter>(tmp_path, opts.io);
  } catch (const IoError& e) {
    res.err = e.err();
    res.err_op = "create";
    res.err_detail = e.what();
    return res;
  }
  res.direct = w->direct();
  std::unique_ptr<ChunkCompressor> zc;
  if (opts.compress.enabled) zc = std::make_unique<ChunkCompressor>(opts.compress.level, opts.compress_threads, opts.zstd_job_bytes);

  const std::vector<Chunk> chunks = make_chunks(state.bytes(), opts.chunk_bytes);
  res.chunks_total = chunks.size();
  std::vector<IndexEntry> index;
  Hashers h;
  std::vector<uint8_t> scratch, grouped;
  if (opts.byte_group) {
    scratch.resize(kPieceBytes);
    grouped.resize(kPieceBytes);
  }
  const bool passthrough = !opts.compress.enabled && !opts.byte_group;
  int rc = 0;
  auto stop = [&] { return interrupted() || (abort && abort->load(std::memory_order_relaxed)); };

  for (const Chunk& c : chunks) {
    if (stop()) {
      res.interrupted = true;
      break;
    }
    IndexEntry e;
    e.logical_offset = c.offset;
    e.logical_len = c.len;
    e.stored_offset = w->bytes_queued();
    XXH3_64bits_reset(h.logical);
    XXH3_64bits_reset(h.stored);
    std::vector<Piece> pieces;
    for_each_piece(state.rank(), c.offset, c.len, kPieceBytes,
                   [&](uint64_t o, size_t n, uint32_t el) { pieces.push_back({o, n, el}); });
    auto on_stored = [&](const uint8_t* d, size_t n) { XXH3_64bits_update(h.stored, d, n); };
    for (size_t pi = 0; pi < pieces.size() && rc == 0; ++pi) {
      const Piece& p = pieces[pi];
      const bool last = pi + 1 == pieces.size();
      if (stop()) {
        res.interrupted = true;
        break;
      }
      if (opts.byte_group) {
        int64_t t0 = now_ns();
        state.copy_out(p.off, p.len, scratch.data());
        XXH3_64bits_update(h.logical, scratch.data(), p.len);
        group_bytes(scratch.data(), p.len, p.elem, grouped.data());
        res.stage_ns += now_ns() - t0;
        if (zc) {
          rc = zc->feed(grouped.data(), p.len, last, *w, on_stored);
        } else {
          int64_t w0 = w->stats().write_wait_ns, t1 = now_ns();
          XXH3_64bits_update(h.stored, grouped.data(), p.len);
          rc = w->append(grouped.data(), p.len);
          res.stage_ns += (now_ns() - t1) - (w->stats().write_wait_ns - w0);
        }
        continue;
      }
      for (uint64_t o = p.off; o < p.off + p.len && rc == 0;) {
        Span s = state.span(o, static_cast<size_t>(p.off + p.len - o));
        o += s.len;
        const bool end = last && o == p.off + p.len;
        if (passthrough) {
          int64_t w0 = w->stats().write_wait_ns, t1 = now_ns();
          XXH3_64bits_update(h.logical, s.data, s.len);
          rc = w->append(s.data, s.len);
          res.stage_ns += (now_ns() - t1) - (w->stats().write_wait_ns - w0);
        } else {
          int64_t t1 = now_ns();
          XXH3_64bits_update(h.logical, s.data, s.len);
          res.stage_ns += now_ns() - t1;
          rc = zc->feed(s.data, s.len, end, *w, on_stored);
        }
      }
    }
    if (rc != 0 || res.interrupted) break;
    e.stored_len = w->bytes_queued() - e.stored_offset;
    e.xxh3_logical = XXH3_64bits_digest(h.logical);
    e.xxh3_stored = passthrough ? e.xxh3_logical : XXH3_64bits_digest(h.stored);
    index.push_back(e);
    res.logical_bytes += c.len;
    ++res.chunks_done;
  }

  if (rc == 0 && !res.interrupted) {
    Trailer t;
    t.codec = opts.compress.enabled ? 1 : 0;
    t.flags = opts.byte_group ? kFlagByteGrouped : 0;
    t.piece_bytes = static_cast<uint32_t>(kPieceBytes);
    t.logical_bytes = state.bytes();
    t.meta_offset = w->bytes_queued();
    std::vector<uint8_t> meta = encode_metadata(state.rank().regions, index, t);
    rc = w->append(meta.data(), meta.size());
    if (rc == 0) rc = w->finish();
    if (rc == 0 && opts.fsync) rc = w->fsync();
  } else {
    w->drain();
  }
  if (zc) res.compress_ns = zc->busy_ns();
  res.stored_bytes = w->bytes_queued();
  res.written_bytes = w->stats().bytes_written;
  res.write_wait_ns = w->stats().write_wait_ns;
  res.fsync_ns = w->stats().fsync_ns;
  if (rc != 0) {
    res.err = -rc;
    res.err_op = rc == -EPROTO && zc && !zc->error_text().empty() ? "zstd" : w->last_error_op();
    if (res.err_op == "zstd") res.err_detail = zc->error_text();
    if (res.err_op.empty()) res.err_op = "write";
  }
  res.total_ns = now_ns() - t_start;
  return res;
}

}  // namespace ioprobe::checkpoint
