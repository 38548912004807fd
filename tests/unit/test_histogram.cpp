#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "stats/histogram.hpp"

using namespace ioprobe;

TEST_CASE("LatencyHistogram percentiles match a sorted reference within the bucket error", "[histogram]") {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> dist(std::log(200000.0), 1.0);
  std::vector<uint64_t> values;
  LatencyHistogram a, b;
  for (int i = 0; i < 100000; ++i) {
    uint64_t v = static_cast<uint64_t>(dist(rng)) + 1;
    values.push_back(v);
    (i % 2 ? a : b).record(v);
  }
  a.merge(b);  // merging two halves gives the whole
  std::sort(values.begin(), values.end());
  REQUIRE(a.count() == values.size());
  for (double p : {1.0, 50.0, 90.0, 99.0, 99.9}) {
    size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
    double ref = static_cast<double>(values[rank - 1]);
    double got = static_cast<double>(a.percentile(p));
    INFO("p" << p << " ref " << ref << " got " << got);
    CHECK(std::fabs(got - ref) / ref <= 1.0 / 64);
  }
  CHECK(a.max() == values.back());
  CHECK(a.min() == values.front());
  CHECK(a.percentile(100) == values.back());
}

TEST_CASE("LatencyHistogram buckets tile the value range", "[histogram]") {
  for (int b = 1; b < 59 * LatencyHistogram::kSub; ++b)  // groups 0..58 cover 64-bit values
    REQUIRE(LatencyHistogram::bucket_lower(b) == LatencyHistogram::bucket_upper(b - 1) + 1);
  for (uint64_t v : {0ULL, 1ULL, 63ULL, 64ULL, 65ULL, 1000ULL, 123456789ULL, 1ULL << 40}) {
    int b = LatencyHistogram::bucket_of(v);
    CHECK(LatencyHistogram::bucket_lower(b) <= v);
    CHECK(v <= LatencyHistogram::bucket_upper(b));
  }
  LatencyHistogram empty;
  CHECK(empty.percentile(50) == 0);
  CHECK(empty.max() == 0);
}
