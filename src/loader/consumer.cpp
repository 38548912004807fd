#include "loader/consumer.hpp"

#include <algorithm>
#include <atomic>

#include "core/clock.hpp"

namespace ioprobe {

void spend_cpu_us(double us, const std::function<bool()>& stop) {
  const int64_t until = thread_cpu_ns() + static_cast<int64_t>(us * 1000.0);
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  static std::atomic<uint64_t> sink{0};
  int64_t next_check = 0;
  for (int64_t now = thread_cpu_ns(); now < until; now = thread_cpu_ns()) {
    for (int i = 0; i < 256; ++i) x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ULL + i;
    // A stop (deadline, signal) ends a long burn within about a millisecond of CPU.
    if (stop && now >= next_check) {
      if (stop()) break;
      next_check = now + 1000000;
    }
  }
  sink.fetch_add(x, std::memory_order_relaxed);
}

namespace {

class StepConsumer final : public Consumer {
 public:
  explicit StepConsumer(const LoaderConfig& cfg) : cfg_(cfg) {}

  void step(Batch& batch, RankStats& stats, const std::function<bool()>& stop) override {
    const uint64_t samples = batch.samples;
    // A partial batch (the last of an epoch, or a dataset smaller than one batch) takes its share
    // of a full batch's step: the demand is samples/s, so 10 samples of a 256-sample batch do not
    // keep the GPU busy for the whole step.
    const double share = cfg_.batch_size > 0
                             ? std::min(1.0, static_cast<double>(samples) / static_cast<double>(cfg_.batch_size))
                             : 1.0;
    const int64_t c0 = now_ns(), until = c0 + static_cast<int64_t>(cfg_.step_time_s * share * 1e9);
    if (cfg_.main_cpu_per_batch_us > 0) {
      // The main process's work runs while the GPU computes; the step lasts the longer of the two.
      const int64_t m0 = thread_cpu_ns();
      spend_cpu_us(cfg_.main_cpu_per_batch_us * share, stop);
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
};

}  // namespace

std::unique_ptr<Consumer> make_consumer(const LoaderConfig& cfg) {
  if (cfg.step_time_s <= 0 && cfg.main_cpu_per_batch_us <= 0) return nullptr;
  return std::make_unique<StepConsumer>(cfg);
}

}  // namespace ioprobe
