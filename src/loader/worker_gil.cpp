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

void WorkerGil::burn(double us, const std::function<bool()>& stop) {
  // Turns of CPU time, not wall time: a thread descheduled while it holds the lock keeps it, as
  // a descheduled CPython thread keeps the GIL.
  const int64_t until = thread_cpu_ns() + static_cast<int64_t>(us * 1000.0);
  for (int64_t left = until - thread_cpu_ns(); left > 0; left = until - thread_cpu_ns()) {
    if (stop && stop()) return;
    acquire();
    spend_cpu_us(std::min(slice_us_, static_cast<double>(left) / 1000.0), stop);
    release();
  }
}

WorkerGils::WorkerGils(uint32_t workers) {
  for (uint32_t w = 0; w < workers; ++w) gils_.push_back(std::make_unique<WorkerGil>());
}

WorkerGil* WorkerGils::at(uint32_t w) const { return w < gils_.size() ? gils_[w].get() : nullptr; }

void burn_worker_cpu(WorkerGil* gil, double us, const std::function<bool()>& stop) {
  if (us <= 0) return;
  if (gil) gil->burn(us, stop);
  else spend_cpu_us(us, stop);
}

}  // namespace ioprobe
