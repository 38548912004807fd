#include "stats/histogram.hpp"

#include <algorithm>
#include <cmath>

#include <stdexcept>
#include <string>

namespace ioprobe {

// Values below kSub are stored exactly (group 0). Above, group g = highest bit - kSubBits + 1
// and the sub-bucket is the kSubBits bits below the highest bit.
int LatencyHistogram::bucket_of(uint64_t v) {
  if (v < static_cast<uint64_t>(kSub)) return static_cast<int>(v);
  int hb = 63 - __builtin_clzll(v);
  int group = hb - kSubBits + 1;
  int sub = static_cast<int>((v >> (hb - kSubBits)) & (kSub - 1));
  return group * kSub + sub;
}

uint64_t LatencyHistogram::bucket_lower(int b) {
  int group = b / kSub, sub = b % kSub;
  if (group == 0) return static_cast<uint64_t>(sub);
  int hb = group + kSubBits - 1;
  return (1ULL << hb) | (static_cast<uint64_t>(sub) << (hb - kSubBits));
}

uint64_t LatencyHistogram::bucket_upper(int b) {
  int group = b / kSub;
  if (group == 0) return bucket_lower(b);
  int hb = group + kSubBits - 1;
  return bucket_lower(b) + (1ULL << (hb - kSubBits)) - 1;
}

void LatencyHistogram::record(uint64_t ns) {
  ++counts_[static_cast<size_t>(bucket_of(ns))];
  ++count_;
  sum_ += ns;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

uint64_t LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  // Rank of the value (1-based, nearest-rank definition).
  uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[static_cast<size_t>(b)];
    if (seen >= rank) {
      uint64_t lo = bucket_lower(b), hi = bucket_upper(b);
      uint64_t mid = lo + (hi - lo) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

std::vector<HistogramBucket> LatencyHistogram::buckets() const {
  std::vector<HistogramBucket> out;
  for (int b = 0; b < kBuckets; ++b)
    if (counts_[static_cast<size_t>(b)]) out.push_back({bucket_lower(b), counts_[static_cast<size_t>(b)]});
  return out;
}

LatencyHistogram LatencyHistogram::from_buckets(const std::vector<HistogramBucket>& buckets, uint64_t min_ns,
                                                uint64_t max_ns, unsigned __int128 sum_ns) {
  LatencyHistogram h;
  int prev = -1;
  for (const auto& bk : buckets) {
    const int b = bucket_of(bk.lower_ns);
    if (bucket_lower(b) != bk.lower_ns)
      throw std::invalid_argument("histogram bucket lower bound " + std::to_string(bk.lower_ns) +
                                  " ns is not a bucket bound (the nearest is " + std::to_string(bucket_lower(b)) +
                                  " ns)");
    if (b <= prev)
      throw std::invalid_argument("histogram bucket " + std::to_string(bk.lower_ns) +
                                  " ns repeats or is out of order: bounds must ascend");
    if (bk.count == 0)
      throw std::invalid_argument("histogram bucket " + std::to_string(bk.lower_ns) +
                                  " ns has count 0: only non-empty buckets are kept");
    prev = b;
    h.counts_[static_cast<size_t>(b)] = bk.count;
    h.count_ += bk.count;
  }
  if (h.count_ == 0) return h;
  if (bucket_of(min_ns) != bucket_of(buckets.front().lower_ns) ||
      bucket_of(max_ns) != bucket_of(buckets.back().lower_ns))
    throw std::invalid_argument("histogram min " + std::to_string(min_ns) + " ns / max " + std::to_string(max_ns) +
                                " ns do not fall in its first (" + std::to_string(buckets.front().lower_ns) +
                                " ns) / last (" + std::to_string(buckets.back().lower_ns) + " ns) bucket");
  h.min_ = min_ns;
  h.max_ = max_ns;
  h.sum_ = sum_ns;
  return h;
}

}  // namespace ioprobe
