#include "checkpoint/decode_pool.hpp"

#include <zstd.h>

#include <cstring>
#include <new>

#include <fmt/format.h>

#include "checkpoint/byte_group.hpp"
#include "core/clock.hpp"
#include "core/xxh3.hpp"

namespace ioprobe::checkpoint {

DecodePool::DecodePool(int threads, size_t max_frame, size_t max_piece, bool grouped)
    : threads_(threads < 0 ? 0 : threads), grouped_(grouped) {
  const size_t nworkers = threads_ > 0 ? static_cast<size_t>(threads_) : 1;
  slots_.resize(threads_ > 0 ? 2 * nworkers : 1);
  for (auto& s : slots_) s.in = alloc_io_memory(max_frame, true);
  for (size_t i = 0; i < nworkers; ++i) {
    auto w = std::make_unique<Worker>();
    w->dctx = ZSTD_createDCtx();
    if (!w->dctx) throw std::bad_alloc();
    w->out.resize(max_piece);
    if (grouped_) w->ungrouped.resize(max_piece);
    workers_.push_back(std::move(w));
  }
  try {
    for (int i = 0; i < threads_; ++i) threads_v_.emplace_back([this, i] { run(*workers_[i]); });
  } catch (...) {  // no thread (a limit reached): stop and join the started workers, free the contexts
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : threads_v_) t.join();
    for (auto& w : workers_) ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(w->dctx));
    throw;
  }
}

DecodePool::~DecodePool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_v_) t.join();
  for (auto& w : workers_) ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(w->dctx));
}

int64_t DecodePool::decode(Slot& s, Worker& w) {
  const int64_t t0 = now_ns();
  Result& r = s.result;
  r = Result{};
  const size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(w.dctx), w.out.data(), s.piece_len, s.in.get(), s.in_len);
  if (ZSTD_isError(n)) {
    r.error = fmt::format("zstd cannot decode it ({}): the data is corrupt", ZSTD_getErrorName(n));
  } else if (n != s.piece_len) {
    r.error = fmt::format("a zstd frame decodes to {} B where its piece is {} B: the data is corrupt", n, s.piece_len);
  } else {
    const uint8_t* logical = w.out.data();
    if (grouped_) {
      ungroup_bytes(w.out.data(), s.piece_len, s.elem, w.ungrouped.data());
      logical = w.ungrouped.data();
    }
    r.xxh3_logical = XXH3_64bits(logical, s.piece_len);
    r.xxh3_stored = XXH3_64bits(s.in.get(), s.in_len);
  }
  return now_ns() - t0;  // counted by the caller: under the lock with worker threads (busy_ns())
}

void DecodePool::run(Worker& w) {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    work_cv_.wait(lk, [&] { return stop_ || next_work_ < submitted_; });
    if (stop_) return;
    Slot& s = slots_[next_work_ % slots_.size()];
    ++next_work_;
    lk.unlock();
    const int64_t used = decode(s, w);
    lk.lock();
    w.busy_ns += used;
    s.done = true;
    done_cv_.notify_all();
  }
}

uint8_t* DecodePool::input() { return slots_[submitted_ % slots_.size()].in.get(); }

void DecodePool::submit(size_t frame_len, size_t piece_len, uint32_t elem) {
  Slot& s = slots_[submitted_ % slots_.size()];
  s.in_len = frame_len;
  s.piece_len = piece_len;
  s.elem = elem;
  s.done = false;
  if (threads_ == 0) {  // inline: decode now, on the caller's thread
    workers_[0]->busy_ns += decode(s, *workers_[0]);
    s.done = true;
    ++submitted_;
    return;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    ++submitted_;
  }
  work_cv_.notify_one();
}

DecodePool::Result DecodePool::take(int64_t& waited_ns) {
  Slot& s = slots_[taken_ % slots_.size()];
  if (threads_ > 0) {
    std::unique_lock<std::mutex> lk(mu_);
    if (!s.done) {
      const int64_t t0 = now_ns();
      done_cv_.wait(lk, [&] { return s.done; });
      waited_ns += now_ns() - t0;
    }
  }
  Result r = std::move(s.result);
  s.done = false;
  ++taken_;
  return r;
}

int64_t DecodePool::busy_ns() const {
  std::lock_guard<std::mutex> lk(mu_);
  int64_t t = 0;
  for (const auto& w : workers_) t += w->busy_ns;
  return t;
}

}  // namespace ioprobe::checkpoint
