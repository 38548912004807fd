// A fixed ring of work items handed to worker threads in order and taken back in the same order:
// the skeleton shared by the checkpoint's compression pool (checkpoint/piece_pool.hpp) and the
// restore's decoding pool (checkpoint/decode_pool.hpp). One thread (the owner) fills, submits,
// takes and releases items; workers run `work` on them outside the lock.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/clock.hpp"

namespace ioprobe {

template <class Slot>
class OrderedPool {
 public:
  /// Runs on a worker thread (index 0..threads-1), outside the lock.
  using Work = std::function<void(Slot&, size_t worker)>;
  /// Runs under the pool's lock right after `work` (counters that with_lock() reads).
  using Done = std::function<void(Slot&, size_t worker)>;

  /// `threads` workers (0 = `work` runs inside submit(), on the owner's thread, as worker 0) and
  /// `slots` items in flight at most. Throws std::system_error when a thread cannot start (the
  /// started ones are stopped and joined first).
  OrderedPool(int threads, size_t slots, Work work, Done done = {})
      : threads_(threads < 0 ? 0 : threads), slots_(slots), done_flag_(slots, 0), work_(std::move(work)),
        done_(std::move(done)) {
    try {
      for (int i = 0; i < threads_; ++i) threads_v_.emplace_back([this, i] { run(static_cast<size_t>(i)); });
    } catch (...) {
      stop_and_join();
      throw;
    }
  }
  ~OrderedPool() { stop_and_join(); }  // items being worked on finish; queued ones are dropped
  OrderedPool(const OrderedPool&) = delete;
  OrderedPool& operator=(const OrderedPool&) = delete;

  int threads() const { return threads_; }
  /// Items submitted and not yet released, at most.
  size_t window() const { return slots_.size(); }
  /// Submitted, not yet taken.
  size_t in_flight() const { return static_cast<size_t>(submitted_ - taken_); }
  /// Taken, not yet released.
  size_t held() const { return static_cast<size_t>(taken_ - released_); }
  /// Slot i, for setting up its buffers before the first submit().
  Slot& slot(size_t i) { return slots_[i]; }
  /// The slot the next submit() hands out: fill it first. Needs submitted - released < window().
  Slot& next() { return slots_[submitted_ % slots_.size()]; }

  void submit() {
    const size_t i = submitted_ % slots_.size();
    if (threads_ == 0) {
      work_(slots_[i], 0);
      if (done_) done_(slots_[i], 0);
      done_flag_[i] = 1;
      ++submitted_;
      return;
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      done_flag_[i] = 0;
      ++submitted_;
    }
    work_cv_.notify_one();
  }

  /// The oldest submitted, untaken item once worked on; adds the time blocked to `waited_ns`. It
  /// stays the owner's until release().
  Slot& take(int64_t& waited_ns) {
    const size_t i = taken_ % slots_.size();
    if (threads_ > 0) {
      std::unique_lock<std::mutex> lk(mu_);
      if (!done_flag_[i]) {
        const int64_t t0 = now_ns();
        done_cv_.wait(lk, [&] { return done_flag_[i] != 0; });
        waited_ns += now_ns() - t0;
      }
    }
    ++taken_;
    return slots_[i];
  }
  /// Gives the oldest taken item's slot back for reuse.
  void release() { ++released_; }

  /// Runs f() under the pool's lock (reading what `done` counted).
  template <class F>
  auto with_lock(F&& f) const {
    std::lock_guard<std::mutex> lk(mu_);
    return f();
  }

 private:
  void run(size_t w) {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      work_cv_.wait(lk, [&] { return stop_ || next_work_ < submitted_; });
      if (stop_) return;
      const size_t i = next_work_++ % slots_.size();
      lk.unlock();
      work_(slots_[i], w);
      lk.lock();
      if (done_) done_(slots_[i], w);
      done_flag_[i] = 1;
      done_cv_.notify_all();
    }
  }
  void stop_and_join() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : threads_v_) t.join();
    threads_v_.clear();
  }

  const int threads_;
  std::vector<Slot> slots_;
  std::vector<char> done_flag_;  // per slot, under mu_ with worker threads
  Work work_;
  Done done_;
  std::vector<std::thread> threads_v_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  uint64_t submitted_ = 0, next_work_ = 0, taken_ = 0, released_ = 0;
  bool stop_ = false;
};

}  // namespace ioprobe
