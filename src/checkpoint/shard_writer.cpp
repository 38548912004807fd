#include "checkpoint/shard_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <deque>
#include <memory>
#include <new>
#include <system_error>
#include <vector>

#include "checkpoint/byte_group.hpp"
#include "checkpoint/chunker.hpp"
#include "checkpoint/piece_pool.hpp"
#include "checkpoint/shard_format.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/error_record.hpp"
#include "core/interrupt.hpp"
#include "core/xxh3.hpp"

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

// What the chunk loops share: the state, the writer, the index being built and the result.
struct ShardJob {
  const ResidentState& state;
  const SaveOptions& opts;
  UringFileWriter& w;
  const std::vector<Chunk>& chunks;
  std::vector<IndexEntry>& index;
  RankSaveResult& res;
  const std::atomic<bool>* abort;
  ErrorRecord zstd_failure;  // op "zstd", detail zstd's error text; empty(): none
  bool stop() const { return interrupted() || (abort && abort->load(std::memory_order_relaxed)); }
};

std::vector<Piece> pieces_of(const ResidentState& state, const Chunk& c) {
  std::vector<Piece> pieces;
  for_each_piece(state.rank(), c.offset, c.len, kPieceBytes, [&](uint64_t o, size_t n, uint32_t el) {
    pieces.push_back({o, n, el});
  });
  return pieces;
}

// Uncompressed (zero-copy where the writer can), byte-grouped and/or zstd's own pool with one
// frame per chunk: the chunks in order on this thread.
int write_streamed(ShardJob& j) {
  const SaveOptions& opts = j.opts;
  RankSaveResult& res = j.res;
  UringFileWriter& w = j.w;
  std::unique_ptr<ChunkCompressor> zc;
  if (opts.compress.enabled)
    zc = std::make_unique<ChunkCompressor>(opts.compress.level, opts.compress_threads, opts.zstd_job_bytes);
  Hashers h;
  std::vector<uint8_t> scratch, grouped;
  if (opts.byte_group) {
    scratch.resize(kPieceBytes);
    grouped.resize(kPieceBytes);
  }
  const bool passthrough = !opts.compress.enabled && !opts.byte_group;
  int rc = 0;
  for (const Chunk& c : j.chunks) {
    if (j.stop()) {
      res.interrupted = true;
      break;
    }
    IndexEntry e;
    e.logical_offset = c.offset;
    e.logical_len = c.len;
    e.stored_offset = w.bytes_queued();
    XXH3_64bits_reset(h.logical);
    XXH3_64bits_reset(h.stored);
    if (passthrough) {
      // Uncompressed, ungrouped: the chunk's bytes as they lie, in spans as long as memory allows
      // (up to a region end or a cyclic window's wrap), so that the writer can send io_size
      // requests straight from the state (zero-copy, O_DIRECT) -- pieces play no part here.
      // The state stays unchanged until the save returns, as append_stable requires.
      for (uint64_t o = c.offset; o < c.offset + c.len && rc == 0 && !res.interrupted;) {
        if (j.stop()) {
          res.interrupted = true;
          break;
        }
        // One write request's worth at a time, hashed while that request and the one before
        // are in flight.
        Span s = j.state.span(o, static_cast<size_t>(std::min<uint64_t>(c.offset + c.len - o, opts.io.io_size)));
        o += s.len;
        int64_t w0 = w.stats().write_wait_ns, t1 = now_ns();
        rc = w.append_stable(s.data, s.len);
        XXH3_64bits_update(h.logical, s.data, s.len);
        res.stage_ns += (now_ns() - t1) - (w.stats().write_wait_ns - w0);
      }
    }
    const std::vector<Piece> pieces = passthrough ? std::vector<Piece>{} : pieces_of(j.state, c);
    auto on_stored = [&](const uint8_t* d, size_t n) { XXH3_64bits_update(h.stored, d, n); };
    for (size_t pi = 0; pi < pieces.size() && rc == 0; ++pi) {
      const Piece& p = pieces[pi];
      const bool last = pi + 1 == pieces.size();
      if (j.stop()) {
        res.interrupted = true;
        break;
      }
      if (opts.byte_group) {
        int64_t t0 = now_ns();
        j.state.copy_out(p.off, p.len, scratch.data());
        XXH3_64bits_update(h.logical, scratch.data(), p.len);
        group_bytes(scratch.data(), p.len, p.elem, grouped.data());
        res.stage_ns += now_ns() - t0;
        if (zc) {
          rc = zc->feed(grouped.data(), p.len, last, w, on_stored);
        } else {
          int64_t w0 = w.stats().write_wait_ns, t1 = now_ns();
          XXH3_64bits_update(h.stored, grouped.data(), p.len);
          rc = w.append(grouped.data(), p.len);
          res.stage_ns += (now_ns() - t1) - (w.stats().write_wait_ns - w0);
        }
        continue;
      }
      for (uint64_t o = p.off; o < p.off + p.len && rc == 0;) {
        Span s = j.state.span(o, static_cast<size_t>(p.off + p.len - o));
        o += s.len;
        const bool end = last && o == p.off + p.len;
        int64_t t1 = now_ns();
        XXH3_64bits_update(h.logical, s.data, s.len);
        res.stage_ns += now_ns() - t1;
        rc = zc->feed(s.data, s.len, end, w, on_stored);
      }
    }
    if (rc != 0 || res.interrupted) break;
    e.stored_len = w.bytes_queued() - e.stored_offset;
    e.xxh3_logical = XXH3_64bits_digest(h.logical);
    e.xxh3_stored = passthrough ? e.xxh3_logical : XXH3_64bits_digest(h.stored);
    j.index.push_back(e);
    res.logical_bytes += c.len;
    ++res.chunks_done;
    if (zc) ++res.frames;
  }
  if (zc) {
    res.compress_ns = zc->busy_ns();
    if (rc == -EPROTO) j.zstd_failure = ErrorRecord{.op = "zstd", .detail = zc->error_text()};
  }
  return rc;
}

// Compressed with ioprobe's own threads (piece_pool.hpp): pieces of all chunks go through the
// pool's window in order; the workers take each piece's checksums, this thread appends the frames
// and closes chunk index entries.
int write_pooled(ShardJob& j) {
  const SaveOptions& opts = j.opts;
  RankSaveResult& res = j.res;
  UringFileWriter& w = j.w;
  PiecePool pool(j.state, opts.compress.level, opts.compress_threads, opts.byte_group, kPieceBytes);
  struct Ref {
    Piece p;
    size_t chunk;
    bool first, last;
  };
  std::deque<Ref> inflight;
  size_t next_chunk = 0, next_piece = 0;
  std::vector<Piece> cur;  // pieces of chunk next_chunk
  auto next = [&](Ref& r) {
    while (next_chunk < j.chunks.size()) {
      if (next_piece == 0 && cur.empty()) cur = pieces_of(j.state, j.chunks[next_chunk]);
      if (next_piece < cur.size()) {
        r = Ref{cur[next_piece], next_chunk, next_piece == 0, next_piece + 1 == cur.size()};
        ++next_piece;
        return true;
      }
      cur.clear();
      next_piece = 0;
      ++next_chunk;
    }
    return false;
  };
  // Checksums of the chunk's pieces, taken by the workers (shard_format.hpp, kFlagPieceHashes).
  std::vector<uint64_t> piece_logical, piece_stored;
  IndexEntry e;
  int rc = 0;
  const int64_t t0 = now_ns();
  for (;;) {
    Ref r;
    while (!j.stop() && inflight.size() < pool.window() && next(r)) {
      int64_t c0 = now_ns();
      pool.submit(PieceJob{r.p.off, r.p.len, r.p.elem});
      if (pool.threads() == 0) res.compress_ns += now_ns() - c0;  // compressed inline
      inflight.push_back(r);
    }
    if (j.stop()) {
      res.interrupted = true;
      break;
    }
    if (inflight.empty()) break;
    r = inflight.front();
    inflight.pop_front();
    PiecePool::Frame f = pool.take(res.compress_ns);
    if (!f.error.empty()) {
      j.zstd_failure = f.error;
      rc = -EPROTO;
      break;
    }
    const Chunk& c = j.chunks[r.chunk];
    if (r.first) {
      e = IndexEntry{};
      e.logical_offset = c.offset;
      e.logical_len = c.len;
      e.stored_offset = w.bytes_queued();
      piece_logical.clear();
      piece_stored.clear();
    }
    piece_logical.push_back(f.xxh3_logical);
    piece_stored.push_back(f.xxh3_stored);
    rc = w.append(f.data, f.len);
    pool.release();
    ++res.frames;
    if (rc != 0) break;
    if (r.last) {
      e.stored_len = w.bytes_queued() - e.stored_offset;
      e.xxh3_logical = combine_piece_hashes(piece_logical);
      e.xxh3_stored = combine_piece_hashes(piece_stored);
      j.index.push_back(e);
      res.logical_bytes += c.len;
      ++res.chunks_done;
    }
  }
  res.compress_active_ns = now_ns() - t0;
  res.compress_busy_ns = pool.busy_ns();
  res.checksum_cpu_ns = pool.hash_ns();
  res.compress_workers_used = pool.workers_used();
  return rc;
}

}  // namespace

RankSaveResult save_shard(const ResidentState& state, const std::string& tmp_path, const SaveOptions& opts,
                          const std::atomic<bool>* abort) {
  RankSaveResult res;
  res.rank = state.rank().rank;
  res.path = tmp_path;
  const int64_t t_start = now_ns();
  // Before the file exists: std::bad_alloc here (a huge chunk count) leaves nothing behind.
  const std::vector<Chunk> chunks = make_chunks(state.bytes(), opts.chunk_bytes);
  res.chunks_total = chunks.size();
  std::unique_ptr<UringFileWriter> w;
  try {
    w = std::make_unique<UringFileWriter>(tmp_path, opts.io);
  } catch (const IoError& e) {
    res.err = e.err();
    // "create" marks a file that may not be ours (never removed); after a later step fails
    // ("io_uring_queue_init", "open") the writer has removed the file it created.
    res.err_op = e.op() == "create" ? "create" : e.op();
    res.err_detail = e.what();
    return res;
  } catch (const std::bad_alloc&) {  // the writer's buffers; they are allocated before the file is created
    res.err = ENOMEM;
    res.err_op = "create";
    res.err_detail = "out of memory for the I/O buffers; lower --io-size or --io-depth, or free memory";
    return res;
  }
  res.direct = w->direct();
  std::vector<IndexEntry> index;
  ShardJob job{state, opts, *w, chunks, index, res, abort, {}};
  const bool pooled = opts.compress.enabled && opts.compress_pool == CompressPool::kIoprobe;
  int rc = 0;
  try {
    rc = pooled ? write_pooled(job) : write_streamed(job);
  } catch (const std::bad_alloc&) {  // compression contexts and buffers
    rc = -ENOMEM;
    job.zstd_failure = ErrorRecord{};
    w->drain();
    res.err_detail = "out of memory for the compression buffers; lower --compress-threads or free memory";
  } catch (const std::system_error& e) {  // no compression thread (EAGAIN at a thread or memory limit)
    rc = -(e.code().value() ? e.code().value() : EAGAIN);
    job.zstd_failure = ErrorRecord{};
    w->drain();
    res.err_detail = std::string("cannot start the compression threads (") + e.what() + "); lower --compress-threads";
  }

  if (rc == 0 && !res.interrupted) {
    Trailer t;
    t.codec = opts.compress.enabled ? 1 : 0;
    t.flags = (opts.byte_group ? kFlagByteGrouped : 0) | (pooled ? kFlagFramePerPiece | kFlagPieceHashes : 0);
    t.piece_bytes = static_cast<uint32_t>(kPieceBytes);
    t.logical_bytes = state.bytes();
    t.meta_offset = w->bytes_queued();
    t.rank = static_cast<uint32_t>(state.rank().rank);
    t.world_size = static_cast<uint32_t>(std::max(0, opts.world_size));
    std::vector<uint8_t> meta = encode_metadata(state.rank().regions, index, t);
    rc = w->append(meta.data(), meta.size());
    if (rc == 0) rc = w->finish();
    if (rc == 0 && opts.fsync) rc = w->fsync();
  } else {
    w->drain();
  }
  res.stored_bytes = w->bytes_queued();
  res.written_bytes = w->stats().bytes_written;
  res.zero_copy_bytes = w->stats().zero_copy_bytes;
  res.write_wait_ns = w->stats().write_wait_ns;
  res.fsync_ns = w->stats().fsync_ns;
  if (rc != 0) {
    res.err = -rc;
    const bool zstd = rc == -EPROTO && !job.zstd_failure.empty();
    res.err_op = zstd ? job.zstd_failure.op : w->last_error_op();
    if (zstd) res.err_detail = job.zstd_failure.detail;
    if (!res.err_detail.empty() && res.err_op != "zstd") res.err_op = "allocate";
    if (res.err_op.empty()) res.err_op = "write";
  }
  res.total_ns = now_ns() - t_start;
  return res;
}

}  // namespace ioprobe::checkpoint
