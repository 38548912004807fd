// Mergeable latency histogram in the style of fio's: log-linear buckets over nanoseconds.
//
// Values are grouped by their highest set bit, then split into 2^kSubBits linear sub-buckets,
// so each bucket's width is at most 1/64 of its lower bound: a percentile is exact to the
// bucket, with relative error <= 1/64 (1.6%). Memory is fixed (64 x 64 counters, 32 KiB);
// picking a bucket uses integer bit operations only. Histograms from several threads or hosts
// merge by adding counts.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace ioprobe {

/// One non-empty bucket of a LatencyHistogram: the lowest value it holds (ns) and how many
/// recorded values fell in it. Saved in result documents as [lower_ns, count].
struct HistogramBucket {
  uint64_t lower_ns = 0;
  uint64_t count = 0;
  bool operator==(const HistogramBucket&) const = default;
};

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = 64 * kSub;

  /// Records one value in nanoseconds.
  void record(uint64_t ns);
  /// Adds another histogram's counts.
  void merge(const LatencyHistogram& other);
  uint64_t count() const { return count_; }
  /// The p-th percentile (p in [0, 100]) in ns: the midpoint of the bucket holding it, clamped to
  /// [min(), max()]. 0 when empty.
  uint64_t percentile(double p) const;
  uint64_t max() const { return count_ ? max_ : 0; }
  uint64_t min() const { return count_ ? min_ : 0; }
  /// Exact arithmetic mean in ns (sum kept separately). 0 when empty.
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }

  /// The non-empty buckets in ascending order of value: with min(), max() and sum_ns() they
  /// are the whole histogram (from_buckets rebuilds it exactly).
  std::vector<HistogramBucket> buckets() const;
  /// Exact sum of the recorded values, ns.
  unsigned __int128 sum_ns() const { return sum_; }
  /// Rebuilds a histogram from buckets() and the exact min, max and sum of its values (ns), so
  /// that counts, percentiles, mean, min and max equal the original's. Add more with merge().
  /// Throws std::invalid_argument naming the value when a lower bound is not a bucket's, the bounds are not
  /// strictly ascending, a count is 0, or min/max do not fall in the first/last bucket.
  static LatencyHistogram from_buckets(const std::vector<HistogramBucket>& buckets, uint64_t min_ns, uint64_t max_ns,
                                       unsigned __int128 sum_ns);

  /// Bucket index for a value `v`, and the [lower, upper] value range of a bucket (for tests).
  static int bucket_of(uint64_t v);
  static uint64_t bucket_lower(int b);
  static uint64_t bucket_upper(int b);

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  unsigned __int128 sum_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace ioprobe
