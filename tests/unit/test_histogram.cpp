#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "stats/histogram.hpp"

using ioprobe::LatencyHistogram;

namespace {
// The order statistic of rank ceil(p/100 * n), as LatencyHistogram::percentile defines it.
uint64_t reference_percentile(const std::vector<uint64_t>& sorted, double p) {
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<uint64_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}
}  // namespace

TEST_CASE("histogram: buckets tile the value range with relative width <= 1/64", "[histogram]") {
  for (uint64_t v : std::initializer_list<uint64_t>{0ULL, 1ULL, 63ULL, 64ULL, 65ULL, 127ULL, 128ULL, 129ULL, 1000ULL,
                                                    123456789ULL, (1ULL << 40) + 12345, UINT64_MAX}) {
    int i = LatencyHistogram::bucket_of(v);
    REQUIRE(i >= 0);
    REQUIRE(i < LatencyHistogram::kBuckets);
    uint64_t lo = LatencyHistogram::bucket_lower(i);
    uint64_t w = LatencyHistogram::bucket_upper(i) - lo + 1;
    CHECK(lo <= v);
    CHECK(v - lo < w);
    CHECK(w * 64 <= std::max<uint64_t>(v, 64));
  }
  // Consecutive buckets are contiguous up to the one holding UINT64_MAX: each ends where the next starts.
  const int last = LatencyHistogram::bucket_of(UINT64_MAX);
  for (int i = 0; i < last; ++i)
    REQUIRE(LatencyHistogram::bucket_upper(i) + 1 == LatencyHistogram::bucket_lower(i + 1));
  CHECK(LatencyHistogram::bucket_upper(last) == UINT64_MAX);
}

TEST_CASE("histogram: percentiles match a sorted reference to the bucket", "[histogram]") {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(11.0, 1.5);  // ~60 µs median, long tail
  std::vector<uint64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 100000; ++i) {
    auto v = static_cast<uint64_t>(dist(rng));
    values.push_back(v);
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  CHECK(h.count() == values.size());
  CHECK(h.min() == values.front());
  CHECK(h.max() == values.back());
  double sum = 0;
  for (auto v : values) sum += static_cast<double>(v);
  CHECK(h.mean() == Approx(sum / values.size()).epsilon(1e-12));
  for (double p : {0.0, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    uint64_t ref = reference_percentile(values, p);
    uint64_t got = h.percentile(p);
    INFO("p" << p << " ref " << ref << " got " << got);
    // Same bucket as the true order statistic, so within the bucket width (<= ref/64).
    CHECK(LatencyHistogram::bucket_of(got) == LatencyHistogram::bucket_of(ref));
    CHECK(static_cast<double>(got > ref ? got - ref : ref - got) <= static_cast<double>(ref) / 64.0 + 1.0);
  }
  CHECK(h.percentile(100.0) == values.back());
  CHECK(h.percentile(0.0) == values.front());
}

TEST_CASE("histogram: small values are exact, midpoint is clamped to [min,max]", "[histogram]") {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 50; ++v) h.record(v);
  CHECK(h.percentile(50) == 25);
  CHECK(h.percentile(99) == 50);
  LatencyHistogram one;
  one.record(1000001);  // bucket of width 2^13 around it; clamped to the only value
  CHECK(one.percentile(50) == 1000001);
  CHECK(one.percentile(99.9) == 1000001);
  LatencyHistogram empty;
  CHECK(empty.count() == 0);
  CHECK(empty.percentile(99) == 0);
  CHECK(empty.max() == 0);
  CHECK(empty.min() == 0);
  CHECK(empty.mean() == 0.0);
}

TEST_CASE("histogram: merge equals recording everything in one", "[histogram]") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint64_t> dist(100, 10000000);
  LatencyHistogram a, b, all;
  for (int i = 0; i < 20000; ++i) {
    uint64_t v = dist(rng);
    (i % 3 ? a : b).record(v);
    all.record(v);
  }
  LatencyHistogram merged;
  merged.merge(a);
  merged.merge(b);
  CHECK(merged.count() == all.count());
  CHECK(merged.min() == all.min());
  CHECK(merged.max() == all.max());
  CHECK(merged.mean() == Approx(all.mean()));
  for (double p : {50.0, 90.0, 99.0, 99.9}) CHECK(merged.percentile(p) == all.percentile(p));
}
