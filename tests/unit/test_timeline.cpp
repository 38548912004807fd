#include <catch2/catch.hpp>

#include <string>

#include "report/html_report.hpp"
#include "report/run_document.hpp"
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

TEST_CASE("timeline: the last interval is as long as the run lasted in it", "[timeline]") {
  Timeline tl(1.0);
  tl.add(500'000'000, 10, 100, 0);  // [0, 1)
  tl.add(2'200'000'000, 4, 40, 0);  // [2, 3): the run ended at 2.4 s
  REQUIRE(tl.points().size() == 3);
  CHECK(tl.interval_length_s(0, 2.4) == Approx(1.0));
  CHECK(tl.interval_length_s(1, 2.4) == Approx(1.0));
  CHECK(tl.interval_length_s(2, 2.4) == Approx(0.4));
  CHECK(tl.interval_length_s(2, 3.0) == Approx(1.0));  // ended on the boundary: whole
  CHECK(tl.interval_length_s(2, 0.0) == Approx(1.0));  // elapsed unknown: whole
  CHECK(tl.interval_length_s(2, 1.5) == Approx(1.0));  // ends before the interval starts: whole
}

TEST_CASE("timeline: the HTML chart's rate of a partial last interval is its samples over its real length",
          "[timeline][report]") {
  // A 0.40 s run that delivered 2,000 samples in its one 1 s interval ran at 5,000 samples/s, not
  // 2,000: the chart's y axis reaches 5000 and its x axis ends at 0.4 s.
  RunDocument r;
  r.target.reading.emplace();  // a run's target: the read setting and the run's facts
  r.target.run.emplace();
  r.loader.gpus = 1;
  r.results.loader.samples = 2000;
  r.results.loader.elapsed_ns = 400'000'000;
  r.results.loader.timeline = Timeline(1.0);
  r.results.loader.timeline.add(390'000'000, 2000, 2000 * 4096, 0);
  const std::string html = render_html_report({run_document_json(r)});
  const size_t chart = html.find("data-chart=\"timeline\"");
  REQUIRE(chart != std::string::npos);
  const std::string svg = html.substr(chart, html.find("</svg>", chart) - chart);
  INFO(svg);
  CHECK(svg.find(">5000</text>") != std::string::npos);
  CHECK(svg.find(">0.4</text>") != std::string::npos);
  CHECK(svg.find(">1</text>") == std::string::npos);  // no x tick past the run's end
}
