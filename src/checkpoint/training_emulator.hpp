// Emulated training steps for --async: the host-side work of a training loop, as a fixed
// amount of CPU and memory work calibrated to take `step_s` on the idle machine. Run while a
// checkpoint persists in the background, the steps take longer exactly as much as the
// persistence competes for CPU cores and memory bandwidth, which is what the report shows.
#pragma once

#include <cstdint>
#include <vector>

namespace ioprobe::checkpoint {

class TrainingEmulator {
 public:
  /// Calibrates (about 0.3 s) and measures the idle step time over 3 steps.
  explicit TrainingEmulator(double step_s);
  /// Runs one step; returns its wall duration in seconds.
  double step();
  double baseline_step_s() const { return baseline_s_; }

 private:
  void work(uint64_t blocks);
  double baseline_s_ = 0;
  uint64_t blocks_per_step_ = 1;
  std::vector<double> buf_;
  uint64_t pos_ = 0;
  double sink_ = 0;
};

}  // namespace ioprobe::checkpoint
