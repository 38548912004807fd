#include "stats/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace ioprobe {

uint64_t LatencyHistogram::bucket_lower(unsigned index) {
  unsigned group = index >> kSubBits;
  uint64_t sub = index & (kSubBuckets - 1);
  if (group == 0) return sub;
  return (kSubBuckets + sub) << (group - 1);
}

uint64_t LatencyHistogram::bucket_width(unsigned index) {
  unsigned group = index >> kSubBits;
  return group == 0 ? 1 : uint64_t{1} << (group - 1);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (unsigned i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (unsigned i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      uint64_t mid = bucket_lower(i) + (bucket_width(i) - 1) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

}  // namespace ioprobe
