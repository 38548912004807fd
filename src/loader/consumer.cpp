#include "loader/consumer.hpp"

#include <algorithm>
#include <atomic>
#include <utility>

#include "core/clock.hpp"

namespace ioprobe {

void spend_cpu_us(double us, const std::function<bool()>& stop) {
  // The thread's CPU clock is a system call (no vDSO path), so it is read about every 20 µs of CPU,
  // not after every few hundred iterations: the mixing loop runs a number of iterations sized from
  // its rate on this thread, measured at each read, and never past what is left, so the burn ends
  // within a slice's error of `us`.
  constexpr int64_t kCheckNs = 20000;         // CPU between two reads of the clock
  constexpr int64_t kStopCheckNs = 1000000;   // CPU between two calls of `stop`
  constexpr uint64_t kFirstSlice = 256;       // iterations before the rate is known (well under 20 µs)
  thread_local double iterations_per_ns = 0;  // the loop's rate on this thread, from its last slice
  const int64_t start = thread_cpu_ns();
  const int64_t until = start + static_cast<int64_t>(us * 1000.0);
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  static std::atomic<uint64_t> sink{0};
  int64_t next_stop_check = start;
  for (int64_t now = start; now < until;) {
    const int64_t slice_ns = std::min(kCheckNs, until - now);
    const uint64_t n = iterations_per_ns > 0
                           ? std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(slice_ns) *
                                                                         iterations_per_ns))
                           : kFirstSlice;
    for (uint64_t i = 0; i < n; ++i) x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ULL + i;
    const int64_t t = thread_cpu_ns();
    if (t > now) iterations_per_ns = static_cast<double>(n) / static_cast<double>(t - now);
    now = t;
    // A stop (deadline, signal) ends a long burn within about a millisecond of CPU.
    if (stop && now >= next_stop_check) {
      if (stop()) break;
      next_stop_check = now + kStopCheckNs;
    }
  }
  sink.fetch_add(x, std::memory_order_relaxed);
}

namespace {

class StepConsumer final : public Consumer {
 public:
  StepConsumer(const LoaderConfig& cfg, ServeFn serve) : cfg_(cfg), serve_(std::move(serve)) {}

  void step(Batch& batch, RankStats& stats, const std::function<bool()>& stop) override {
    const uint64_t samples = batch.samples;
    // A partial batch (the last of an epoch, or a dataset smaller than one batch) takes its share
    // of a full batch's step: the demand is samples/s, so 10 samples of a 256-sample batch do not
    // keep the GPU busy for the whole step.
    const double share = cfg_.batch_size > 0
                             ? std::min(1.0, static_cast<double>(samples) / static_cast<double>(cfg_.batch_size))
                             : 1.0;
    const int64_t c0 = now_ns(), until = c0 + static_cast<int64_t>(cfg_.step_time_s * share * 1e9);
    const bool round_trips = serve_ && cfg_.costs.worker.other_us > 0 && batch.worker >= 0;
    if (cfg_.costs.main_cpu_per_batch_us > 0 || round_trips) {
      // The main process's work runs while the GPU computes; the step lasts the longer of the two.
      // Receiving a batch is one piece per tensor, each waiting for the worker's sharer to hand
      // over the tensor's file descriptor.
      const int64_t m0 = thread_cpu_ns();
      const uint32_t pieces = round_trips ? std::max<uint32_t>(1, cfg_.costs.tensors_per_batch) : 1;
      const double main_us = cfg_.costs.main_cpu_per_batch_us * share / pieces;
      const double other_us = round_trips ? cfg_.costs.worker.other_us * static_cast<double>(samples) / pieces : 0;
      for (uint32_t k = 0; k < pieces && !stop(); ++k) {
        spend_cpu_us(main_us, stop);
        if (round_trips) serve_(batch, other_us);
      }
      stats.main_cpu_ns += thread_cpu_ns() - m0;
      stats.main_busy_ns += now_ns() - c0;
    }
    // The GPU step, in slices of at most 50 ms so a signal or the deadline ends it promptly.
    for (int64_t t = now_ns(); t < until && !stop(); t = now_ns()) sleep_until_ns(std::min(until, t + 50000000));
    const int64_t spent = now_ns() - c0;
    stats.compute_ns += spent;
    // An interrupted step counts only what ran; an overslept one only the nominal time.
    stats.nominal_compute_ns += std::min<int64_t>(spent, until - c0);
  }

 private:
  const LoaderConfig& cfg_;
  ServeFn serve_;
};

}  // namespace

std::unique_ptr<Consumer> make_consumer(const LoaderConfig& cfg, ServeFn serve) {
  const bool round_trips = serve && cfg.costs.worker.other_us > 0;
  if (cfg.step_time_s <= 0 && cfg.costs.main_cpu_per_batch_us <= 0 && !round_trips) return nullptr;
  return std::make_unique<StepConsumer>(cfg, round_trips ? std::move(serve) : ServeFn{});
}

}  // namespace ioprobe
