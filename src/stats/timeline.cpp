#include "stats/timeline.hpp"

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
  p.wait_s += static_cast<double>(wait_ns) / 1e9;
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
