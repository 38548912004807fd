#include "loader/worker_gil.hpp"

#include <algorithm>

#include "core/clock.hpp"
#include "loader/consumer.hpp"

namespace ioprobe {

void WorkerGil::acquire() {
  std::unique_lock<std::mutex> lk(mu_);
  const uint64_t ticket = next_ticket_++;
  cv_.wait(lk, [&] { return serving_ == ticket; });
}

void WorkerGil::release() {
  {
    std::lock_guard<std::mutex> g(mu_);
    ++serving_;
  }
  cv_.notify_all();
}

uint64_t WorkerGil::turns() const {
  std::lock_guard<std::mutex> g(mu_);
  return serving_;
}

void WorkerGil::burn(double us, const std::function<bool()>& stop, double share) {
  // Turns of CPU time, not wall time: a thread descheduled while it holds the lock keeps it, as
  // a descheduled CPython thread keeps the GIL.
  share = std::clamp(share, 0.0, 1.0);
  const auto total = static_cast<int64_t>(us * 1000.0);
  int64_t held_left = static_cast<int64_t>(static_cast<double>(total) * share), free_left = total - held_left;
  const auto turn = static_cast<int64_t>(slice_us_ * 1000.0);
  // The CPU burned without the lock after each turn: the turn's part of the free CPU.
  const auto free_turn = share > 0 ? static_cast<int64_t>(static_cast<double>(turn) * (1 - share) / share) : free_left;
  while ((held_left > 0 || free_left > 0) && !(stop && stop())) {
    if (held_left > 0) {
      const int64_t c0 = thread_cpu_ns();
      acquire();
      // Taking the lock costs this thread CPU too (its futex calls): part of the turn.
      if (const int64_t piece = std::min(turn, held_left - (thread_cpu_ns() - c0)); piece > 0)
        spend_cpu_us(static_cast<double>(piece) / 1000.0, stop);
      release();
      held_left -= thread_cpu_ns() - c0;
    }
    if (free_left > 0) {
      const int64_t c0 = thread_cpu_ns();
      spend_cpu_us(static_cast<double>(held_left > 0 ? std::min(free_turn, free_left) : free_left) / 1000.0, stop);
      free_left -= thread_cpu_ns() - c0;
    }
  }
}

WorkerGils::WorkerGils(uint32_t workers, bool shared) : workers_(workers), shared_(shared) {
  const uint32_t locks = shared ? std::min(workers, 1U) : workers;
  for (uint32_t w = 0; w < locks; ++w) gils_.push_back(std::make_unique<WorkerGil>());
}

WorkerGil* WorkerGils::at(uint32_t w) const {
  if (w >= workers_ || gils_.empty()) return nullptr;
  return gils_[shared_ ? 0 : w].get();
}

void burn_worker_cpu(WorkerGil* gil, double us, const std::function<bool()>& stop, double share) {
  if (us <= 0) return;
  if (gil) gil->burn(us, stop, share);
  else spend_cpu_us(us, stop);
}

}  // namespace ioprobe
