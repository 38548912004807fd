#include "loader/sharer_thread.hpp"

#include <chrono>
#include <utility>

#include "core/clock.hpp"
#include "loader/consumer.hpp"

namespace ioprobe {

SharerThread::SharerThread(std::function<bool()> stop, int64_t* cpu_ns, WorkerGil* gil)
    : stop_(std::move(stop)), cpu_ns_(cpu_ns), gil_(gil), thread_([this] { loop(); }) {}

SharerThread::~SharerThread() {
  {
    std::lock_guard<std::mutex> g(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SharerThread::serve(double us) {
  if (us <= 0) return;
  std::unique_lock<std::mutex> lk(mu_);
  // A request left by a stopped round trip is finished (the burn checks the stop too).
  while (busy_ && !(stop_ && stop_())) done_cv_.wait_for(lk, std::chrono::milliseconds(50));
  request_us_ = us;
  busy_ = true;
  cv_.notify_one();
  // The main process needs the descriptor before it can go on: the round trip blocks until the
  // sharer has served it (the stop is polled: a stopped run never waits for a request).
  while (busy_ && !(stop_ && stop_())) done_cv_.wait_for(lk, std::chrono::milliseconds(50));
}

void SharerThread::loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    // A request posted before the shutdown is still served (its CPU is the worker's).
    cv_.wait(lk, [this] { return shutdown_ || busy_; });
    if (!busy_) return;
    const double us = request_us_;
    lk.unlock();
    const int64_t c0 = thread_cpu_ns();
    burn_worker_cpu(gil_, us, [this] { return stop_ && stop_(); });
    *cpu_ns_ += thread_cpu_ns() - c0;
    lk.lock();
    busy_ = false;
    done_cv_.notify_all();
  }
}

}  // namespace ioprobe
