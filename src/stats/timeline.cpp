#include "stats/timeline.hpp"

#include <algorithm>
#include <cstddef>
using std::size_t;

namespace ioprobe {

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

void Timeline::merge(const Timeline& o) {
  for (size_t i = 0; i < o.points_.size(); ++i) {
    TimelinePoint& p = at(static_cast<int64_t>(i) * interval_ns_);
    p.samples += o.points_[i].samples;
    p.bytes += o.points_[i].bytes;
    p.wait_s += o.points_[i].wait_s;
  }
}

}  // namespace ioprobe
