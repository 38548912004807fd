#include "checkpoint/decode_pool.hpp"

#include <zstd.h>

#include <cstring>
#include <new>

#include <fmt/format.h>

#include "checkpoint/byte_group.hpp"
#include "core/clock.hpp"
#include "core/xxh3.hpp"

namespace ioprobe::checkpoint {

DecodePool::DecodePool(int threads, size_t max_frame, size_t max_piece, bool grouped) : grouped_(grouped) {
  threads = threads < 0 ? 0 : threads;
  const size_t nworkers = threads > 0 ? static_cast<size_t>(threads) : 1;
  for (size_t i = 0; i < nworkers; ++i) {
    auto w = std::make_unique<Worker>();
    w->out.resize(max_piece);
    if (grouped_) w->ungrouped.resize(max_piece);
    workers_.push_back(std::move(w));
  }
  pool_ = std::make_unique<OrderedPool<Slot>>(
      threads, threads > 0 ? 2 * nworkers : 1, [this](Slot& s, size_t w) { decode(s, *workers_[w]); },
      [this](Slot& s, size_t w) { workers_[w]->busy_ns += s.busy_ns; });
  for (size_t i = 0; i < pool_->window(); ++i) pool_->slot(i).in = alloc_io_memory(max_frame, true);
}

void DecodePool::decode(Slot& s, Worker& w) const {
  const int64_t t0 = now_ns();
  Result& r = s.result;
  r = Result{};
  const size_t n = ZSTD_decompressDCtx(w.dctx.get(), w.out.data(), s.piece_len, s.in.get(), s.in_len);
  if (ZSTD_isError(n)) {
    r.error.detail = fmt::format("zstd cannot decode it ({}): the data is corrupt", ZSTD_getErrorName(n));
  } else if (n != s.piece_len) {
    r.error.detail = fmt::format("a zstd frame decodes to {} B where its piece is {} B: the data is corrupt", n,
                                 s.piece_len);
  } else {
    const uint8_t* logical = w.out.data();
    if (grouped_) {
      ungroup_bytes(w.out.data(), s.piece_len, s.elem, w.ungrouped.data());
      logical = w.ungrouped.data();
    }
    r.xxh3_logical = XXH3_64bits(logical, s.piece_len);
    r.xxh3_stored = XXH3_64bits(s.in.get(), s.in_len);
  }
  s.busy_ns = now_ns() - t0;  // counted into the worker under the pool's lock (busy_ns())
}

void DecodePool::submit(size_t frame_len, size_t piece_len, uint32_t elem) {
  Slot& s = pool_->next();
  s.in_len = frame_len;
  s.piece_len = piece_len;
  s.elem = elem;
  pool_->submit();
}

DecodePool::Result DecodePool::take(int64_t& waited_ns) {
  Result r = std::move(pool_->take(waited_ns).result);
  pool_->release();
  return r;
}

int64_t DecodePool::busy_ns() const {
  return pool_->with_lock([&] {
    int64_t t = 0;
    for (const auto& w : workers_) t += w->busy_ns;
    return t;
  });
}

}  // namespace ioprobe::checkpoint
