#include "stats/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <stdexcept>
#include <string>
using std::size_t;

namespace ioprobe {

// Rounded, not truncated: 0.3 s is 300000000 ns although 0.3 * 1e9 is 299999999.99999994.
Timeline::Timeline(double interval_s) : interval_ns_(std::max<int64_t>(1, std::llround(interval_s * 1e9))) {}

Timeline Timeline::from_points(int64_t interval_ns, std::vector<TimelinePoint> points) {
  if (interval_ns <= 0)
    throw std::invalid_argument("timeline interval " + std::to_string(interval_ns) + " ns: must be > 0");
  Timeline t;
  t.interval_ns_ = interval_ns;
  t.points_ = std::move(points);
  for (size_t i = 0; i < t.points_.size(); ++i) t.points_[i].t_s = static_cast<double>(i) * t.interval_s();
  return t;
}

TimelinePoint& Timeline::at(int64_t t_ns) {
  size_t i = t_ns < 0 ? 0 : static_cast<size_t>(t_ns / interval_ns_);
  while (points_.size() <= i) {
    TimelinePoint p;
    p.t_s = static_cast<double>(points_.size()) * interval_s();
    points_.push_back(p);
  }
  return points_[i];
}

void Timeline::add(int64_t t_ns, uint64_t samples, uint64_t bytes, int64_t wait_ns) {
  TimelinePoint& p = at(t_ns);
  p.samples += samples;
  p.bytes += bytes;
  // The wait ran from t_ns - wait_ns to t_ns: each interval it overlaps gets its own share, so a
  // stall of several seconds shows in every interval it covered (not only in the one it ended in).
  // Time before the run's start (negative) counts in the first interval.
  int64_t end = t_ns, begin = t_ns - std::max<int64_t>(wait_ns, 0);
  if (begin < 0) {
    at(0).wait_s += static_cast<double>(std::min<int64_t>(-begin, end - begin)) / 1e9;
    begin = 0;
  }
  while (begin < end) {
    int64_t interval_end = (begin / interval_ns_ + 1) * interval_ns_;
    int64_t piece_end = std::min(end, interval_end);
    at(begin).wait_s += static_cast<double>(piece_end - begin) / 1e9;
    begin = piece_end;
  }
}

double Timeline::interval_length_s(size_t i, double elapsed_s) const {
  const double iv = interval_s();
  if (i + 1 != points_.size()) return iv;
  const double left = elapsed_s - points_[i].t_s;
  return left > 0 && left < iv ? left : iv;
}

void Timeline::merge(const Timeline& o) {
  if (points_.empty()) interval_ns_ = o.interval_ns_;
  if (o.interval_ns_ != interval_ns_ && !o.points_.empty())
    throw std::invalid_argument("cannot add timelines of " + std::to_string(interval_ns_) + " ns and " +
                                std::to_string(o.interval_ns_) + " ns intervals: the intervals must be equal");
  for (size_t i = 0; i < o.points_.size(); ++i) {
    TimelinePoint& p = at(static_cast<int64_t>(i) * interval_ns_);
    p.samples += o.points_[i].samples;
    p.bytes += o.points_[i].bytes;
    p.wait_s += o.points_[i].wait_s;
  }
}

}  // namespace ioprobe
