#include "checkpoint/training_emulator.hpp"

#include <algorithm>

#include "core/clock.hpp"

namespace ioprobe::checkpoint {

namespace {
constexpr size_t kBlockDoubles = 32768;   // 256 KiB per block
constexpr size_t kBufDoubles = 4u << 20;  // 32 MiB working set, above typical L2/L3 share
}  // namespace

TrainingEmulator::TrainingEmulator(double step_s) : buf_(kBufDoubles, 1.0) {
  // Calibrate: how many blocks fit in 0.3 s.
  uint64_t blocks = 0;
  int64_t t0 = now_ns(), limit = t0 + 300'000'000;
  while (now_ns() < limit) {
    work(8);
    blocks += 8;
  }
  double per_block_s = (now_ns() - t0) / 1e9 / static_cast<double>(blocks);
  blocks_per_step_ = std::max<uint64_t>(1, static_cast<uint64_t>(step_s / per_block_s));
  double sum = 0;
  for (int i = 0; i < 3; ++i) sum += step();
  baseline_s_ = sum / 3;
}

void TrainingEmulator::work(uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b) {
    double* p = buf_.data() + pos_;
    double acc = sink_;
    for (size_t i = 0; i < kBlockDoubles; ++i) {
      acc = acc * 0.999999 + p[i];
      p[i] = acc * 1e-9 + 1.0;
    }
    sink_ = acc;
    pos_ = (pos_ + kBlockDoubles) % kBufDoubles;
  }
}

double TrainingEmulator::step() {
  int64_t t0 = now_ns();
  work(blocks_per_step_);
  return (now_ns() - t0) / 1e9;
}

}  // namespace ioprobe::checkpoint
