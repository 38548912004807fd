// LatencyHistogram: a mergeable log-linear latency histogram in nanoseconds, after fio's
// (fio stat.h: FIO_IO_U_PLAT_BITS / FIO_IO_U_PLAT_VAL; one group per highest set bit, a fixed
// number of linear sub-buckets per group).
//
// Layout: values below 64 ns each get their own bucket; a value v >= 64 goes to group
// g = msb(v) - 5 (msb = index of the highest set bit) and sub-bucket (v >> (msb - 6)) & 63.
// Each bucket is 2^(msb-6) ns wide and holds values >= 2^msb, so the relative error of any
// reported value is at most 1/64 (1.6 %). 59 groups x 64 buckets cover all of uint64_t in a
// fixed 30 KiB; picking a bucket uses integer bit operations only (no floating point).
// merge() adds counts, so per-thread (or per-host) histograms combine exactly.
#pragma once

#include <array>
#include <cstdint>

namespace ioprobe {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBits = 6;                    // 2^6 = 64 sub-buckets per group
  static constexpr unsigned kSubBuckets = 1u << kSubBits;
  static constexpr unsigned kGroups = 64 - kSubBits + 1;     // group 0 (exact) + msb 6..63
  static constexpr unsigned kBuckets = kGroups * kSubBuckets;  // 3,776

  /// Records one latency of `ns` nanoseconds. O(1), no allocation, no floating point.
  void record(uint64_t ns) {
    buckets_[bucket_index(ns)]++;
    count_++;
    sum_ += ns;
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
  }

  /// Adds all of `other`'s values to this histogram (exact: counts add).
  void merge(const LatencyHistogram& other);

  /// Number of values recorded.
  uint64_t count() const { return count_; }

  /// The p-th percentile (p in 0..100) in ns: the value of rank ceil(p/100 * count) (at least 1),
  /// reported as the midpoint of its bucket clamped to [min(), max()]. 0 when empty.
  /// Exact to the bucket: within 1/64 of the true order statistic.
  uint64_t percentile(double p) const;

  /// Largest / smallest value recorded (exact), 0 when empty.
  uint64_t max() const { return count_ ? max_ : 0; }
  uint64_t min() const { return count_ ? min_ : 0; }

  /// Arithmetic mean in ns (exact sum / count), 0 when empty.
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }

  /// Bucket of value `ns` (0 .. kBuckets-1).
  static unsigned bucket_index(uint64_t ns) {
    if (ns < kSubBuckets) return static_cast<unsigned>(ns);
    unsigned msb = 63u - static_cast<unsigned>(__builtin_clzll(ns));
    unsigned group = msb - kSubBits + 1;
    return (group << kSubBits) | static_cast<unsigned>((ns >> (msb - kSubBits)) & (kSubBuckets - 1));
  }
  /// Smallest value that falls in bucket `index`.
  static uint64_t bucket_lower(unsigned index);
  /// Width of bucket `index` in ns (1 for the first 128 buckets).
  static uint64_t bucket_width(unsigned index);

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t sum_ = 0;  // ns; overflows only after 584 years of summed latency
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace ioprobe
