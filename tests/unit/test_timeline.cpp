#include <catch2/catch.hpp>

#include "stats/timeline.hpp"

using namespace ioprobe;

TEST_CASE("timeline: a wait is split over the intervals it spans", "[timeline]") {
  Timeline tl(1.0);
  // A batch delivered at 3.5 s after a 2.0 s wait (1.5 s .. 3.5 s): 0.5 s in [1,2), 1 s in [2,3),
  // 0.5 s in [3,4); the samples count only where the delivery happened.
  tl.add(3'500'000'000, 32, 32 * 4096, 2'000'000'000);
  const auto& p = tl.points();
  REQUIRE(p.size() == 4);
  CHECK(p[0].wait_s == Approx(0.0));
  CHECK(p[1].wait_s == Approx(0.5));
  CHECK(p[2].wait_s == Approx(1.0));
  CHECK(p[3].wait_s == Approx(0.5));
  CHECK(p[3].samples == 32);
  CHECK(p[3].bytes == 32 * 4096);
  CHECK(p[1].samples + p[2].samples == 0);
  double total = 0;
  for (const auto& x : p) {
    total += x.wait_s;
    CHECK(x.wait_s <= tl.interval_s() + 1e-12);
  }
  CHECK(total == Approx(2.0));
}

TEST_CASE("timeline: a wait inside one interval stays there, and one ending on a boundary", "[timeline]") {
  Timeline tl(0.5);
  tl.add(1'200'000'000, 1, 10, 100'000'000);  // 1.1 .. 1.2 s: interval [1.0, 1.5)
  tl.add(1'000'000'000, 1, 10, 500'000'000);  // 0.5 .. 1.0 s: all in [0.5, 1.0), none in [1.0, 1.5)
  const auto& p = tl.points();
  REQUIRE(p.size() == 3);
  CHECK(p[1].wait_s == Approx(0.5));
  CHECK(p[2].wait_s == Approx(0.1));
  CHECK(p[2].samples == 2);  // the second delivery happened at 1.0 s, in [1.0, 1.5)
}

TEST_CASE("timeline: a wait starting before the run counts in the first interval, and merge keeps the split",
          "[timeline]") {
  Timeline a(1.0), b(1.0);
  a.add(500'000'000, 1, 1, 800'000'000);  // -0.3 .. 0.5 s
  REQUIRE(a.points().size() == 1);
  CHECK(a.points()[0].wait_s == Approx(0.8));
  b.add(2'000'000'000, 1, 1, 1'500'000'000);  // 0.5 .. 2.0 s
  a.merge(b);
  REQUIRE(a.points().size() == 3);
  CHECK(a.points()[0].wait_s == Approx(0.8 + 0.5));
  CHECK(a.points()[1].wait_s == Approx(1.0));
  CHECK(a.points()[2].wait_s == Approx(0.0));
  CHECK(a.points()[2].samples == 1);
}
