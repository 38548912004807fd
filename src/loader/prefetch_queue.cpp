#include "loader/prefetch_queue.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace ioprobe {

PrefetchQueue::PrefetchQueue(uint32_t num_workers, uint32_t prefetch_factor, InitFn init, FetchFn fetch, PutFn put)
    : init_(std::move(init)), fetch_(std::move(fetch)), put_(std::move(put)), num_workers_(std::max(1u, num_workers)),
      prefetch_factor_(std::max(1u, prefetch_factor)) {
  for (uint32_t i = 0; i < num_workers_; ++i) queues_.push_back(std::make_unique<WorkerQueue>());
  if (put_)
    for (uint32_t i = 0; i < num_workers_; ++i) feeds_.push_back(std::make_unique<FeederQueue>());
  try {
    // Feeders first: a worker hands its batches to its feeder from its first task on.
    if (put_)
      for (uint32_t i = 0; i < num_workers_; ++i)
        feeders_.emplace_back([this, i] { feeder_loop(static_cast<int>(i)); });
    for (uint32_t i = 0; i < num_workers_; ++i) threads_.emplace_back([this, i] { worker_loop(static_cast<int>(i)); });
  } catch (...) {
    // A worker's thread could not start (EAGAIN at a thread or pids limit): the destructor does
    // not run for a constructor that throws, so the started workers are stopped and joined here.
    stop_workers();
    throw;
  }
}

PrefetchQueue::~PrefetchQueue() { stop_workers(); }

void PrefetchQueue::stop_workers() {
  cancel_ = true;
  shutdown_ = true;
  for (auto& q : queues_) {
    std::lock_guard<std::mutex> g(q->mu);
    q->cv.notify_all();
  }
  for (auto& t : threads_) t.join();
  // The workers are gone, so no batch reaches a feeder any more: each ends once its queue is empty
  // (cancel_ is set, so the batches left skip the put).
  feeders_shutdown_ = true;
  for (auto& f : feeds_) {
    std::lock_guard<std::mutex> g(f->mu);
    f->cv.notify_all();
  }
  for (auto& t : feeders_) t.join();
}

void PrefetchQueue::deliver(Batch r) {
  {
    std::lock_guard<std::mutex> g(result_mu_);
    const uint64_t seq = r.seq;
    results_[seq] = std::move(r);
  }
  result_cv_.notify_all();
}

void PrefetchQueue::feeder_loop(int id) {
  FeederQueue& f = *feeds_[static_cast<size_t>(id)];
  for (;;) {
    Batch r;
    {
      std::unique_lock<std::mutex> lk(f.mu);
      f.cv.wait(lk, [&] { return feeders_shutdown_.load() || !f.batches.empty(); });
      if (f.batches.empty()) return;  // shut down
      r = std::move(f.batches.front());
      f.batches.pop_front();
    }
    if (!r.cancelled && !cancel_) put_(id, r, cancel_);
    deliver(std::move(r));
  }
}

void PrefetchQueue::worker_loop(int id) {
  if (init_) init_(id);
  WorkerQueue& q = *queues_[static_cast<size_t>(id)];
  for (;;) {
    BatchTask task;
    {
      std::unique_lock<std::mutex> lk(q.mu);
      q.cv.wait(lk, [&] { return shutdown_.load() || !q.tasks.empty(); });
      if (shutdown_ && q.tasks.empty()) return;
      task = q.tasks.front();
      q.tasks.pop_front();
    }
    Batch r;
    if (cancel_) {
      r.cancelled = true;
    } else {
      r = fetch_(id, task, cancel_);
    }
    r.seq = task.seq;
    r.worker = id;
    if (put_) {  // the feeder thread puts it; this worker goes on to its next task
      FeederQueue& f = *feeds_[static_cast<size_t>(id)];
      {
        std::lock_guard<std::mutex> g(f.mu);
        f.batches.push_back(std::move(r));
      }
      f.cv.notify_one();
    } else {
      deliver(std::move(r));
    }
  }
}

void PrefetchQueue::try_put_task() {
  if (cancel_ || send_idx_ >= epoch_tasks_.size()) return;
  if (outstanding_ >= static_cast<uint64_t>(num_workers_) * prefetch_factor_) return;
  const BatchTask& t = epoch_tasks_[send_idx_++];
  int w = static_cast<int>(next_worker_);
  if (t.worker >= 0) w = t.worker % static_cast<int>(num_workers_);  // pinned: the order already encodes the cycle
  else next_worker_ = (next_worker_ + 1) % num_workers_;
  dispatch_log_.push_back(w);
  ++outstanding_;
  max_outstanding_ = std::max(max_outstanding_, outstanding_);
  WorkerQueue& q = *queues_[static_cast<size_t>(w)];
  {
    std::lock_guard<std::mutex> g(q.mu);
    q.tasks.push_back(t);
  }
  q.cv.notify_one();
}

void PrefetchQueue::start_epoch(std::vector<BatchTask> tasks) {
  epoch_tasks_ = std::move(tasks);
  for (uint64_t i = 0; i < epoch_tasks_.size(); ++i) epoch_tasks_[i].seq = i;
  send_idx_ = rcvd_idx_ = outstanding_ = 0;
  next_worker_ = 0;
  {
    std::lock_guard<std::mutex> g(result_mu_);
    results_.clear();
  }
  for (uint64_t i = 0; i < static_cast<uint64_t>(num_workers_) * prefetch_factor_; ++i) try_put_task();
}

std::optional<Batch> PrefetchQueue::next(const std::function<bool()>& should_stop) {
  if (cancel_ || rcvd_idx_ >= epoch_tasks_.size()) return std::nullopt;
  Batch r;
  {
    std::unique_lock<std::mutex> lk(result_mu_);
    auto ready = [&] { return cancel_.load() || results_.count(rcvd_idx_) > 0; };
    if (should_stop) {
      // Poll: a signal handler cannot notify a condition variable.
      while (!result_cv_.wait_for(lk, std::chrono::milliseconds(50), ready))
        if (should_stop()) return std::nullopt;
    } else {
      result_cv_.wait(lk, ready);
    }
    if (cancel_) return std::nullopt;
    auto it = results_.find(rcvd_idx_);
    r = std::move(it->second);
    results_.erase(it);
  }
  ++rcvd_idx_;
  --outstanding_;
  try_put_task();  // one batch out, one task in
  return r;
}

void PrefetchQueue::cancel() {
  cancel_ = true;
  result_cv_.notify_all();
  // Drop tasks not yet started, then wait for the batches in flight to come back (they return
  // early because cancel_ is set), so no I/O is in flight when the caller reports.
  uint64_t dropped = 0;
  for (auto& q : queues_) {
    std::lock_guard<std::mutex> g(q->mu);
    dropped += q->tasks.size();
    q->tasks.clear();
  }
  uint64_t expect = outstanding_ - dropped;
  std::unique_lock<std::mutex> lk(result_mu_);
  result_cv_.wait(lk, [&] {
    uint64_t back = 0;
    for (const auto& [seq, r] : results_)
      if (seq >= rcvd_idx_) ++back;
    return back >= expect;
  });
}

}  // namespace ioprobe
