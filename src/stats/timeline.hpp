// Throughput over time in fixed intervals, so warm-up and stalls are visible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ioprobe {

/// One interval of the run as the consumer (the training loop) saw it.
struct TimelinePoint {
  double t_s = 0;        // interval start, seconds since the run started
  uint64_t samples = 0;  // samples delivered in the interval
  uint64_t bytes = 0;    // bytes delivered in the interval
  double wait_s = 0;     // seconds the consumer waited for data within the interval (<= its length)
};

/// Accumulates deliveries into intervals of `interval_s` seconds. Not thread-safe: one consumer.
class Timeline {
 public:
  explicit Timeline(double interval_s = 1.0);
  /// A timeline rebuilt from saved points (a result document): interval length in ns (> 0),
  /// points in order, point i covering [i, i+1) x interval. t_s is recomputed from the index.
  /// Throws std::invalid_argument when interval_ns <= 0.
  static Timeline from_points(int64_t interval_ns, std::vector<TimelinePoint> points);
  /// A delivery at `t_ns` (nanoseconds since the run started) of `samples` and `bytes`, after the
  /// consumer waited `wait_ns` for it. Samples and bytes count in the interval holding `t_ns`; the
  /// wait, which spans [t_ns - wait_ns, t_ns], is split over the intervals it overlaps.
  void add(int64_t t_ns, uint64_t samples, uint64_t bytes, int64_t wait_ns);
  /// Adds another timeline's counts interval by interval. A timeline without points takes the
  /// other's interval length; otherwise the lengths must be equal (throws std::invalid_argument naming both).
  void merge(const Timeline& other);
  const std::vector<TimelinePoint>& points() const { return points_; }
  /// Seconds that interval `i` covers of a run that ended `elapsed_s` seconds after it started:
  /// interval_s() for every interval but the last, which the run's end cuts short (elapsed_s - its
  /// start, when that falls inside it), so its rate is its samples / this length. interval_s() where
  /// the end is not inside the last interval: elapsed unknown (<= 0), or ending before the last
  /// interval starts (time the elapsed leaves out, such as the cache preparation before an epoch).
  double interval_length_s(size_t i, double elapsed_s) const;
  double interval_s() const { return static_cast<double>(interval_ns_) / 1e9; }
  int64_t interval_ns() const { return interval_ns_; }

 private:
  TimelinePoint& at(int64_t t_ns);
  int64_t interval_ns_;
  std::vector<TimelinePoint> points_;
};

}  // namespace ioprobe
