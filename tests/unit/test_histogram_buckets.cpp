#include <catch2/catch.hpp>

#include <random>
#include <stdexcept>

#include "core/error.hpp"
#include "stats/histogram.hpp"
#include "stats/latency_json.hpp"

using namespace ioprobe;

namespace {
LatencyHistogram random_histogram(uint32_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> lat(12.0, 1.5);
  LatencyHistogram h;
  for (int i = 0; i < n; ++i) h.record(static_cast<uint64_t>(lat(rng)));
  return h;
}

void require_same(const LatencyHistogram& a, const LatencyHistogram& b) {
  REQUIRE(a.count() == b.count());
  CHECK(a.buckets() == b.buckets());
  CHECK(a.min() == b.min());
  CHECK(a.max() == b.max());
  CHECK(a.mean() == b.mean());
  for (double p : {0.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0}) CHECK(a.percentile(p) == b.percentile(p));
}
}  // namespace

TEST_CASE("histogram: buckets() and from_buckets() round-trip exactly", "[histogram]") {
  LatencyHistogram h = random_histogram(7, 5000);
  std::vector<HistogramBucket> b = h.buckets();
  REQUIRE(!b.empty());
  uint64_t total = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    CHECK(b[i].count > 0);
    if (i) CHECK(b[i - 1].lower_ns < b[i].lower_ns);
    total += b[i].count;
  }
  CHECK(total == h.count());
  require_same(LatencyHistogram::from_buckets(b, h.min(), h.max(), h.sum_ns()), h);
  CHECK(LatencyHistogram::from_buckets({}, 0, 0, 0).count() == 0);
}

TEST_CASE("histogram: from_buckets refuses buckets that are not its own", "[histogram]") {
  CHECK_THROWS_AS(LatencyHistogram::from_buckets({{129, 1}}, 129, 129, 129),
                  std::invalid_argument);  // 128..129 is one bucket
  CHECK_THROWS_AS(LatencyHistogram::from_buckets({{10, 1}, {5, 1}}, 5, 10, 15), std::invalid_argument);  // out of order
  CHECK_THROWS_AS(LatencyHistogram::from_buckets({{10, 0}}, 10, 10, 0), std::invalid_argument);          // empty bucket
  CHECK_THROWS_AS(LatencyHistogram::from_buckets({{10, 1}}, 9, 10, 10), std::invalid_argument);          // min outside
}

TEST_CASE("latency JSON: µs object and ns object round-trip, merged equals all values", "[histogram][json]") {
  LatencyHistogram a = random_histogram(1, 3000), b = random_histogram(2, 7000);
  LatencyHistogram all = a;
  all.merge(b);
  nlohmann::json ja = nlohmann::json::parse(latency_us_json(a).dump());  // through text, as a saved file
  nlohmann::json jb = nlohmann::json::parse(histogram_ns_json(b).dump());
  LatencyHistogram ra = latency_from_us_json(ja, "a"), rb = histogram_from_ns_json(jb, "b");
  require_same(ra, a);
  require_same(rb, b);
  ra.merge(rb);
  require_same(ra, all);
  CHECK(ja.at("p99").get<double>() == a.percentile(99) / 1e3);
  nlohmann::json old = ja;
  old.erase("buckets");
  CHECK_THROWS_WITH(latency_from_us_json(old, "A.json results.file_latency_us"),
                    Catch::Contains("A.json results.file_latency_us: missing key 'buckets'"));
  nlohmann::json bad = ja;
  bad.erase("sum_ns");
  CHECK_THROWS_WITH(latency_from_us_json(bad, "x"), Catch::Contains("missing key 'sum_ns'"));
  CHECK(latency_from_us_json(latency_us_json(LatencyHistogram{}), "empty").count() == 0);
  nlohmann::json odd = ja;
  odd["buckets"] = nlohmann::json::array({nlohmann::json::array({129, 1})});
  CHECK_THROWS_WITH(latency_from_us_json(odd, "B.json x"),
                    Catch::Contains("B.json x: histogram bucket lower bound 129"));
}

TEST_CASE("timeline JSON: points round-trip and an odd interval survives", "[timeline][json]") {
  Timeline t(0.3);
  CHECK(t.interval_ns() == 300'000'000);
  t.add(100'000'000, 3, 300, 50'000'000);
  t.add(1'000'000'000, 2, 200, 400'000'000);
  Timeline r = timeline_from_json(nlohmann::json::parse(timeline_points_json(t).dump()), t.interval_s(), "t");
  CHECK(r.interval_ns() == t.interval_ns());
  REQUIRE(r.points().size() == t.points().size());
  for (size_t i = 0; i < r.points().size(); ++i) {
    CHECK(r.points()[i].samples == t.points()[i].samples);
    CHECK(r.points()[i].bytes == t.points()[i].bytes);
    CHECK(r.points()[i].wait_s == t.points()[i].wait_s);
    CHECK(r.points()[i].t_s == t.points()[i].t_s);
  }
  CHECK_THROWS_AS(timeline_from_json(nlohmann::json::array({{{"samples", 1}}}), 1.0, "t"), UsageError);
}
