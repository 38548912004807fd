// Tune: sweep planning, the knee and the recommendation on recorded sweep tables, the
// numactl line on fixture topologies, CSV and HTML escaping.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <set>

#include "core/error.hpp"
#include "report/html_report.hpp"
#include "report/tune_document.hpp"
#include "topology/numa.hpp"
#include "tune/recommend.hpp"
#include "tune/rules.hpp"
#include "tune/sweep.hpp"
#include "tune/tune_run.hpp"
#include "tune_fixture.hpp"

using namespace ioprobe;
using namespace ioprobe::test;

TEST_CASE("summarize_point: median and spread of repeats", "[tune]") {
  TunePoint p = pt(4, 2, {900, 1000, 1200});
  CHECK(p.samples_per_s == Approx(1000));
  CHECK(p.spread == Approx(0.3));
  CHECK(p.samples_per_s_min == Approx(900));
  CHECK(p.samples_per_s_max == Approx(1200));
  TunePoint q = pt(4, 2, {800, 1000});
  CHECK(q.samples_per_s == Approx(900));
}

TEST_CASE("default worker list follows the allowed CPUs, not the online count", "[tune]") {
  CHECK(default_worker_list(1) == std::vector<uint32_t>{1, 2, 4, 8});
  CHECK(default_worker_list(2) == std::vector<uint32_t>{1, 2, 4, 8, 16});
  CHECK(default_worker_list(64).back() == 64);
}

TEST_CASE("parse_uint_list: sorted, bad values named", "[tune]") {
  CHECK(parse_uint_list("16,4,8", "--workers", 1, 4096) == std::vector<uint32_t>{4, 8, 16});
  CHECK_THROWS_AS(parse_uint_list("4,x", "--workers", 1, 4096), UsageError);
  CHECK_THROWS_AS(parse_uint_list("0", "--workers", 1, 4096), UsageError);
  CHECK_THROWS_AS(parse_uint_list("4,4", "--workers", 1, 4096), UsageError);
  CHECK_THROWS_WITH(parse_uint_list("4,,8", "--workers", 1, 4096), Catch::Contains("--workers"));
  // Too large, even for 64 bits: out of range with the range, not "not a whole number".
  CHECK_THROWS_WITH(parse_uint_list("4,99999999999999999999", "--workers", 1, 4096),
                    Catch::Contains("'99999999999999999999', is out of range; give values from 1 to 4096"));
  // "1,000" is split on the comma: the message says the list is comma-separated and names the element.
  CHECK_THROWS_WITH(parse_uint_list("1,000", "--workers", 1, 4096),
                    Catch::Contains("--workers '1,000': element 2 of the comma-separated list, '000', is out of "
                                    "range; give values from 1 to 4096") &&
                        Catch::Contains("without thousands separators (1000)"));
  CHECK_THROWS_WITH(parse_uint_list("4,x", "--workers", 1, 4096),
                    Catch::Contains("element 2 of the comma-separated list, 'x', is not a whole number"));
  CHECK_THROWS_WITH(parse_uint_list("5000", "--workers", 1, 4096),
                    Catch::Contains("5000 is out of range; give values from 1 to 4096"));
  // A repeated value: the thousands hint only where the element could be a group of three digits.
  CHECK_THROWS_WITH(parse_uint_list("2,2", "--oversubscribe", 2, 64),
                    Catch::Contains("2 appears twice") && !Catch::Contains("thousands"));
  CHECK_THROWS_WITH(parse_uint_list("1,000,000", "--workers", 0, 4096),
                    Catch::Contains("0 appears twice") && Catch::Contains("thousands separators"));
}

TEST_CASE("make_plan shares the budget and refuses one too small", "[tune]") {
  SweepPlan p = make_plan({1, 2, 4, 8}, {1, 2, 4}, {"none"}, 3, 600, 30);
  CHECK(p.points.size() == 12);
  CHECK(p.run_s <= (600.0 - 30) / 36);
  CHECK(p.run_s >= 2.0);
  CHECK(p.estimated_s <= 600);
  CHECK_THROWS_WITH(make_plan({1, 2, 4, 8}, {1, 2, 4}, {"none"}, 3, 30, 5), Catch::Contains("--budget"));
}

TEST_CASE("placements: one node sweeps only unbound; two nodes sweep device node and each node", "[tune][numa]") {
  std::string why;
  CHECK(placements_to_sweep(one_node(), -1, &why) == std::vector<std::string>{"none"});
  CHECK_THAT(why, Catch::Contains("single NUMA node"));
  Topology two = discover(std::string(IOPROBE_FIXTURES) + "/sysfs/two-socket-nvme-gpu-node1");
  REQUIRE(two.nodes.size() == 2);
  CHECK(placements_to_sweep(two, 1, &why) == std::vector<std::string>{"none", "node:1", "node:0"});
}

TEST_CASE("knee on a clean saturating curve", "[tune]") {
  std::vector<TunePoint> t = {pt(1, 2, {1000, 1000}), pt(2, 2, {1900, 1900}), pt(4, 2, {3500, 3500}),
                              pt(8, 2, {3900, 3900}), pt(16, 2, {4000, 4000})};
  double tol = 0;
  size_t k = find_knee(t, {0, 1, 2, 3, 4}, &tol);
  CHECK(tol == Approx(0.05));
  CHECK(t[k].num_workers == 8);  // 3900 >= 0.95 x 4000; 3500 is not
}

TEST_CASE("knee on a noisy table: noise past the knee does not move it", "[tune]") {
  // 16 and 32 workers are within the spread of 8; 32's lucky repeat must not win.
  std::vector<TunePoint> t = {pt(2, 2, {1500, 1700, 1600}), pt(4, 2, {2600, 2900, 2750}), pt(8, 2, {3300, 3700, 3500}),
                              pt(16, 2, {3100, 3900, 3550}), pt(32, 2, {3400, 4100, 3650})};
  Recommendation r = recommend(t, demand(100000), one_node());
  REQUIRE(r.valid);
  CHECK(r.tolerance > 0.15);  // the best point's spread (~19%)
  CHECK(t[r.knee].num_workers == 8);
  CHECK_FALSE(r.meets_demand);
  // Demand unmet: the best median (32: 3650) is recommended, the knee named beside it.
  CHECK(t[r.point].num_workers == 32);
  CHECK(r.shortfall_samples_per_s == Approx(100000 - 3650));
  bool noisy = false, knee_named = false;
  for (const auto& n : r.notes) {
    noisy |= n.find("noisy") != std::string::npos;
    knee_named |= n.find("num_workers=8 prefetch_factor=2 (the knee)") != std::string::npos;
  }
  CHECK(noisy);
  CHECK(knee_named);
}

TEST_CASE("recommend: the smallest setting that meets demand (AU >= target)", "[tune]") {
  std::vector<TunePoint> t = {pt(1, 1, {800}, 0.40),  pt(1, 2, {850}, 0.42),  pt(2, 1, {1700}, 0.85),
                              pt(2, 2, {1800}, 0.91), pt(4, 1, {1900}, 0.95), pt(4, 2, {1900}, 0.95)};
  Recommendation r = recommend(t, demand(1950), one_node());
  REQUIRE(r.meets_demand);
  CHECK(t[r.point].num_workers == 2);
  CHECK(t[r.point].prefetch_factor == 2);
  CHECK(r.dataloader == "DataLoader(num_workers=2, prefetch_factor=2, pin_memory=False)");
  CHECK(r.shortfall_samples_per_s == 0);
  CHECK(r.numactl.empty());
  CHECK_THAT(r.numa_reason, Catch::Contains("no NUMA binding needed"));
  CHECK_FALSE(r.oversubscribed);
}

TEST_CASE("recommend: nothing meets demand -> best and shortfall; past the CPUs -> oversubscription warning",
          "[tune]") {
  // Cold storage: workers wait on I/O, so 16 workers on 2 CPUs still help (CPU use stays low).
  std::vector<TunePoint> t = {pt(1, 2, {300}, 0.05, "none", 0.1),   pt(2, 2, {590}, 0.1, "none", 0.15),
                              pt(4, 2, {1150}, 0.2, "none", 0.3),   pt(8, 2, {2100}, 0.35, "none", 0.5),
                              pt(16, 2, {2600}, 0.45, "none", 0.6), pt(32, 2, {2650}, 0.45, "none", 0.6)};
  Recommendation r = recommend(t, demand(24000, 1, 2), one_node());
  CHECK_FALSE(r.meets_demand);
  CHECK(t[r.point].num_workers == 32);
  CHECK(t[r.knee].num_workers == 16);
  CHECK(r.shortfall_samples_per_s == Approx(24000 - 2650));
  CHECK(r.oversubscribed);
  bool oversubscribed_note = false;
  for (const auto& n : r.notes)
    oversubscribed_note |= n.find("oversubscribed") != std::string::npos && n.find("wait on I/O") != std::string::npos;
  CHECK(oversubscribed_note);
}

TEST_CASE("recommend: rising at the edge of the sweep says so", "[tune]") {
  std::vector<TunePoint> t = {pt(1, 2, {100}), pt(2, 2, {200}), pt(4, 2, {400})};
  Recommendation r = recommend(t, demand(1e6, 1, 8), one_node());
  CHECK(t[r.point].num_workers == 4);
  bool edge = false;
  for (const auto& n : r.notes) edge |= n.find("still rising") != std::string::npos;
  CHECK(edge);
}

TEST_CASE("a run without a steady state is no measurement of its setting", "[tune]") {
  // A loaded host, 16 workers, 5 s per run: the first batches arrive in the last interval.
  LoaderResult r;
  r.elapsed_ns = 5'000'000'000;
  r.ranks.resize(1);
  r.ranks[0].timeline = Timeline(0.5);
  for (int i = 0; i < 10; ++i) r.ranks[0].timeline.add(int64_t{i} * 500'000'000 + 1, i == 9 ? 640 : 0, 0, 0);
  TuneSample late = steady_sample(r, 1, 2 * 16 * 64);
  CHECK_FALSE(late.steady);
  CHECK(late.samples_per_s == Approx(0));
  // The same run with batches throughout: 2 cycles of 16 workers x 64 samples fit in the window.
  LoaderResult ok = r;
  ok.ranks[0].timeline = Timeline(0.5);
  for (int i = 0; i < 10; ++i) ok.ranks[0].timeline.add(int64_t{i} * 500'000'000 + 1, 640, 0, 0);
  TuneSample s = steady_sample(ok, 1, 2 * 16 * 64);
  CHECK(s.steady);
  CHECK(s.steady_samples == 8 * 640);
  CHECK(s.samples_per_s == Approx(1280));

  // Medians use the steady runs only; a point with none is left out of the recommendation and named.
  TunePoint mixed = pt(8, 2, {1000, 1100});
  TuneSample bad;
  bad.samples_per_s = 10;
  mixed.runs.push_back(bad);
  summarize_point(mixed);
  CHECK(mixed.steady_runs == 2);
  CHECK(mixed.samples_per_s == Approx(1050));
  std::vector<TunePoint> t = {pt(1, 2, {630, 632}), pt(2, 2, {650, 640}),
                              pt(16, 2, {0, 0, 5}, 0.5, "none", 1.0, false)};
  Recommendation rec = recommend(t, demand(1e6), one_node());
  REQUIRE(rec.valid);
  CHECK(t[rec.point].num_workers == 2);  // the best median (645) with demand unmet
  CHECK(t[rec.knee].num_workers == 1);   // 631 is within 5% of 645
  bool named = false;
  for (const auto& n : rec.notes)
    named = named || (n.find("num_workers=16") != std::string::npos && n.find("steady") != std::string::npos);
  CHECK(named);
  std::vector<TunePoint> none = {pt(16, 2, {0, 3}, 0.5, "none", 1.0, false)};
  CHECK_FALSE(recommend(none, demand(100), one_node()).valid);
}

TEST_CASE("recommend: empty table is not valid", "[tune]") {
  std::vector<TunePoint> t = {pt(1, 2, {})};
  CHECK_FALSE(recommend(t, demand(100), one_node()).valid);
}

TEST_CASE("numactl on the two-socket fixture: only when binding helped, never node -1", "[tune][numa]") {
  Topology two = discover(std::string(IOPROBE_FIXTURES) + "/sysfs/two-socket-nvme-gpu-node1");
  REQUIRE(two.nodes.size() == 2);
  NumactlAdvice a = numactl_line(two, two.common_node("gpu"));
  CHECK(a.binding_needed);
  CHECK(a.command == "numactl --cpunodebind=1 --membind=1");
  CHECK_FALSE(numactl_line(two, -1).binding_needed);
  CHECK(numactl_line(two, -1).command.find("-1") == std::string::npos);

  // Binding to node 1 measurably helps: advised at launch.
  std::vector<TunePoint> helped = {pt(4, 2, {3000, 3050}, 0.5, "none"),   pt(8, 2, {3100, 3150}, 0.5, "none"),
                                   pt(4, 2, {3900, 3950}, 0.5, "node:1"), pt(8, 2, {4000, 4050}, 0.5, "node:1"),
                                   pt(4, 2, {2500, 2550}, 0.5, "node:0"), pt(8, 2, {2600, 2650}, 0.5, "node:0")};
  Recommendation r = recommend(helped, demand(1e6, 1, 4), two);
  CHECK(r.numa == "node:1");
  CHECK(r.binding_helped);
  CHECK(r.numactl == "numactl --cpunodebind=1 --membind=1 python train.py");

  // Within the noise: no binding.
  std::vector<TunePoint> same = {pt(8, 2, {3000, 3300}, 0.5, "none"), pt(8, 2, {3100, 3350}, 0.5, "node:1")};
  Recommendation s = recommend(same, demand(1e6, 1, 4), two);
  CHECK(s.numa == "none");
  CHECK(s.numactl.empty());
  CHECK_THAT(s.numa_reason, Catch::Contains("no NUMA binding needed"));

  Topology minus = discover(std::string(IOPROBE_FIXTURES) + "/sysfs/numa-minus-one");
  Recommendation m = recommend({pt(8, 2, {3000})}, demand(1e6), minus);
  CHECK(m.numactl.empty());
  CHECK_THAT(m.numa_reason, Catch::Contains("no NUMA binding"));
}

TEST_CASE("CSV fields and HTML escaping", "[tune][report]") {
  CHECK(csv_field("node:1") == "node:1");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"x\"") == "\"say \"\"x\"\"\"");
  CHECK(html_escape("<script>alert('x')</script> & \"") ==
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;");
  // A checkpoint document as `ioprobe checkpoint --json` wrote it (the HTML reads it strictly), its
  // command line holding markup.
  std::ifstream in(std::string(IOPROBE_FIXTURES) + "/documents/checkpoint_small.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["command"] = {"ioprobe", "<b>"};
  std::string html = render_html_report({doc});
  CHECK(html.find("<b>") == std::string::npos);
  CHECK(html.find("data-chart=\"checkpoint\"") != std::string::npos);
}

TEST_CASE("no steady state: the note names the condition that failed, intervals or batches", "[tune]") {
  // --point-time 1s: two 0.5 s intervals, ~23 batches from the one worker; the note blamed batches.
  LoaderResult r;
  r.elapsed_ns = 1'000'000'000;
  r.ranks.resize(1);
  r.ranks[0].timeline = Timeline(kTuneIntervalS);
  for (int i = 0; i < 2; ++i) r.ranks[0].timeline.add(int64_t{i} * 500'000'000 + 1, 12 * 64, 0, 0);
  TuneSample s = steady_sample(r, 1, 2 * 1 * 64);
  CHECK(s.intervals == 2);
  CHECK_FALSE(s.steady);
  TunePoint p;
  p.num_workers = 1;
  p.runs = {s};
  summarize_point(p);
  auto note_of = [](const std::vector<TunePoint>& t) {
    std::string all;
    for (const auto& n : recommend(t, demand(1e6), one_node()).notes) all += n + "\n";
    return all;
  };
  std::string n = note_of({p});
  INFO(n);
  CHECK_THAT(n, Catch::Contains("no steady state") && Catch::Contains("fewer than 3 timeline intervals of 0.5 s"));
  CHECK_THAT(n, !Catch::Contains("batches"));
  // Enough intervals but too few batches in the window: the batch rule is named.
  TuneSample few;
  few.intervals = 10;
  p.runs = {few};
  summarize_point(p);
  n = note_of({p});
  CHECK_THAT(n, Catch::Contains("fewer than 2 batches per worker") && !Catch::Contains("intervals of"));
  // The shortest --point-time accepted leaves the rule its 3 intervals and one of margin.
  CHECK(kMinRunS >= kSteadyMinIntervals * kTuneIntervalS + kTuneIntervalS);
}

TEST_CASE("recommend: one num_workers value swept shows no trend, so no 'still rising' warning", "[tune]") {
  std::vector<TunePoint> t = {pt(1, 1, {100}), pt(1, 2, {150}), pt(1, 4, {160})};
  Recommendation r = recommend(t, demand(1e6, 1, 8), one_node());
  REQUIRE(r.valid);
  CHECK_FALSE(r.meets_demand);
  for (const auto& n : r.notes) CHECK_THAT(n, !Catch::Contains("still rising"));
}

TEST_CASE("rule of thumb num_workers = 4 x cores, read off recorded tables", "[tune][rules]") {
  // 2 CPUs: the rule says 8 workers.
  SECTION("the rule's setting is as good as the best, within the noise") {
    std::vector<TunePoint> t = {pt(1, 2, {1000, 1000}), pt(2, 2, {1900, 1900}), pt(4, 2, {3500, 3500}),
                                pt(8, 2, {3900, 3900}), pt(16, 2, {4000, 4000})};
    Recommendation r = recommend(t, demand(100000), one_node());
    WorkersRule w = check_workers_rule(t, r, 2);
    CHECK(w.rule_workers == 8);
    REQUIRE(w.measured);
    CHECK(w.rule_samples_per_s == 3900);
    CHECK(w.best_samples_per_s == 4000);
    CHECK(w.holds);
    const auto rules = tune_rules(w, t);
    CHECK(rules[0].best_num_workers == 16u);
  }
  SECTION("the rule oversubscribes a CPU-bound loader: slower than the best") {
    std::vector<TunePoint> t = {pt(1, 2, {1000, 1000}), pt(2, 2, {1900, 1900}), pt(4, 2, {1500, 1500}),
                                pt(8, 2, {1100, 1100})};
    Recommendation r = recommend(t, demand(100000), one_node());
    WorkersRule w = check_workers_rule(t, r, 2);
    REQUIRE(w.measured);
    CHECK(w.rule_samples_per_s == 1100);
    CHECK(t[w.best_point].num_workers == 2);
    CHECK_FALSE(w.holds);
  }
  SECTION("not in the sweep: not measured, no figure claimed") {
    std::vector<TunePoint> t = {pt(1, 2, {1000}), pt(2, 2, {1900})};
    Recommendation r = recommend(t, demand(100000), one_node());
    WorkersRule w = check_workers_rule(t, r, 2);
    CHECK_FALSE(w.measured);
    CHECK_FALSE(w.planned);
    CHECK_FALSE(w.swept);
    CHECK_FALSE(w.holds);
    CHECK_FALSE(tune_rules(w, t)[0].samples_per_s.has_value());
  }
  SECTION("swept but not steady: said apart from not swept") {
    std::vector<TunePoint> t = {pt(1, 2, {1000}), pt(2, 2, {1900}), pt(8, 2, {1500}, 0.5, "none", 1.0, false)};
    Recommendation r = recommend(t, demand(100000), one_node());
    WorkersRule w = check_workers_rule(t, r, 2);
    CHECK(w.swept);
    CHECK_FALSE(w.measured);
  }
}

namespace {
// A run of one rank delivering batches of `batch` samples at `rate` samples/s for `run_s`
// seconds, first batch at `first_s`, recorded as the loader records it (timeline and deliveries);
// each batch waited `wait_s` before it.
LoaderResult paced_run(double rate, uint32_t batch, double run_s, double first_s = 0.013, double wait_s = 0) {
  LoaderResult r;
  r.elapsed_ns = static_cast<int64_t>(run_s * 1e9);
  RankStats rk;
  rk.timeline = Timeline(kTuneIntervalS);
  const double period = batch / rate;
  for (double t = first_s; t < run_s; t += period) {
    const int64_t t_ns = static_cast<int64_t>(t * 1e9), w_ns = static_cast<int64_t>(wait_s * 1e9);
    rk.timeline.add(t_ns, batch, uint64_t{batch} * 1000, w_ns);
    rk.deliveries.push_back({t_ns, batch, uint64_t{batch} * 1000, w_ns});
    r.samples += batch;
  }
  rk.elapsed_ns = r.elapsed_ns;
  r.ranks.push_back(rk);
  return r;
}
}  // namespace

TEST_CASE("tune rates come from completion times: no repeated quantized values", "[tune][capacity]") {
  // Five settings 10 samples/s apart, batch 256, 5 s runs. Counting whole batches per 0.5 s
  // interval quantizes each rate to 256 / 4 s = 64 samples/s, so the table repeated the same
  // value for different settings (e.g. 6,408, 6,024, 5,000 samples/s at many settings).
  std::set<long> by_interval, by_completion;
  for (double rate : {6200.0, 6210.0, 6220.0, 6230.0, 6240.0}) {
    LoaderResult r = paced_run(rate, 256, 5.0);
    TuneSample s = steady_sample(r, 1, 2 * 256);
    INFO(rate);
    CHECK(s.from_completions);
    CHECK(s.steady);
    CHECK(s.samples_per_s == Approx(rate).epsilon(1e-4));
    CHECK(s.bytes_per_s == Approx(rate * 1000).epsilon(1e-4));
    by_completion.insert(std::lround(s.samples_per_s));
    LoaderResult counted = r;
    counted.ranks[0].deliveries.clear();  // what the rate was before: whole batches per interval
    TuneSample q = steady_sample(counted, 1, 2 * 256);
    CHECK_FALSE(q.from_completions);
    by_interval.insert(std::lround(q.samples_per_s));
  }
  CHECK(by_completion.size() == 5);
  CHECK(by_interval.size() < by_completion.size());  // the defect this replaces: repeated values
  CHECK(by_interval.size() <= 3);
}

TEST_CASE("steady AU from completion times: nominal step time over the time between completions", "[tune][capacity]") {
  // Batches of 64 every 40 ms (1600 samples/s) to a GPU whose step takes 30 ms: AU 75%.
  LoaderResult r = paced_run(1600, 64, 4.0, 0.002, 0.010);
  TuneSample s = steady_sample(r, 1, 0, 0.030, 64);
  CHECK(s.from_completions);
  CHECK(s.au == Approx(0.75).epsilon(1e-3));
  CHECK(s.au_min == Approx(0.75).epsilon(1e-3));
  // Without a step time: 1 - waited / time, 10 ms of every 40 ms.
  CHECK(steady_sample(r, 1, 0).au == Approx(0.75).epsilon(1e-3));
  // Two ranks, one starved: the mean and the lowest differ.
  LoaderResult two = r;
  two.ranks.push_back(paced_run(800, 64, 4.0, 0.002, 0.050).ranks[0]);
  TuneSample t = steady_sample(two, 2, 0, 0.030, 64);
  CHECK(t.samples_per_s == Approx(2400).epsilon(1e-3));
  CHECK(t.au_min == Approx(0.375).epsilon(1e-3));
  CHECK(t.au == Approx((0.75 + 0.375) / 2).epsilon(1e-3));
}

TEST_CASE("steady AU counts a stall after the last batch: a burst then nothing is not 'fed'", "[tune][capacity]") {
  // A recorded capacity point: each rank's two workers finished their first batches together
  // at ~4 s, the consumer stepped through both (0.853 s each), then waited until the run ended.
  // Between its two completions the rank looked fed (AU 100%, 150 samples/s); over the window it
  // computed 1.7 s of 7 s.
  const double step = 128.0 / 150.0;
  LoaderResult r;
  r.elapsed_ns = 7'800'000'000;
  RankStats rk;
  rk.timeline = Timeline(kTuneIntervalS);
  for (double t : {4.0, 4.0 + step}) {
    const auto t_ns = static_cast<int64_t>(t * 1e9);
    rk.timeline.add(t_ns, 128, 128 * 4096, t == 4.0 ? 3'000'000'000 : 0);
    rk.deliveries.push_back({t_ns, 128, 128 * 4096, t == 4.0 ? 3'000'000'000 : 0});
  }
  rk.timeline.add(7'799'000'000, 0, 0, 0);  // the run went on to its end
  rk.elapsed_ns = r.elapsed_ns;
  r.ranks.push_back(rk);
  TuneSample s = steady_sample(r, 1, 0, step, 128);
  REQUIRE(s.from_completions);
  const double window_end = 7.5;  // the last whole interval is left out
  const double span = window_end - 4.0;
  CHECK(s.au == Approx(2 * step / span).epsilon(1e-3));
  CHECK(s.au < 0.6);
  // The rate: the batch after the first over the time to the window's end less the one gap in
  // which the next batch was still due.
  CHECK(s.samples_per_s == Approx(128 / (span - step)).epsilon(1e-3));
  CHECK(s.samples_per_s < 0.4 * 150);
  // Without a step time: 1 - waited / time, the overdue time counted as waited.
  const double overdue = span - 2 * step;
  CHECK(steady_sample(r, 1, 0).au == Approx(1 - overdue / (step + overdue)).epsilon(1e-3));
  // A loader that keeps its pace is untouched: the time after its last batch is within its gap.
  LoaderResult paced = paced_run(150, 128, 7.8, 0.3);
  TuneSample p = steady_sample(paced, 1, 0, step, 128);
  CHECK(p.au == Approx(1.0).epsilon(1e-3));
  CHECK(p.samples_per_s == Approx(150).epsilon(1e-3));
}

TEST_CASE("an interrupted sweep: settings never run are 'not measured', not zeros, in JSON, CSV, text and HTML",
          "[tune][report]") {
  // Round-robin stopped after two settings: 4 and 8 workers never ran.
  std::vector<TunePoint> t = {pt(1, 2, {100, 102}), pt(2, 2, {190, 195}), pt(4, 2, {}), pt(8, 2, {})};
  const Recommendation rec = recommend(t, demand(150), one_node());
  REQUIRE(rec.valid);
  TuneDocument doc = tune_doc(t, rec, 150.0, TuneStop{.kind = TuneStopKind::kInterrupted}, 2);
  doc.partial = true;
  doc.tune.runs_done = 4;
  const nlohmann::json written = tune_document_json(doc);
  const nlohmann::json& pts = written["points"];
  CHECK(pts[0]["status"] == "measured");
  CHECK(pts[2]["status"] == "not measured");
  CHECK(pts[2]["repeats"] == 0);
  for (const char* k : {"samples_per_s", "bytes_per_s", "au", "spread", "cpu_used", "worker_busy"}) {
    INFO(k);
    CHECK(pts[2][k].is_null());
    CHECK(pts[3][k].is_null());
  }
  CHECK(tune_point_measured(doc.points[1]));
  CHECK_FALSE(tune_point_measured(doc.points[3]));

  const std::string csv = render_tune_csv(doc);
  INFO(csv);
  CHECK_THAT(csv, Catch::Contains(",status\n"));
  CHECK_THAT(csv, Catch::Contains("\n4,2,none,0,,,,,,,,,not measured\n"));
  CHECK_THAT(csv, Catch::Contains("\n1,2,none,2,101.0,"));
  CHECK(csv.find("\n8,2,none,0,0") == std::string::npos);  // no zero figures for settings never run

  const std::string text = render_tune_text(doc);
  INFO(text);
  // A setting run once has no spread: "-", not 0.0%.
  TuneDocument once = doc;
  once.points[0].point.runs.resize(1);
  CHECK_THAT(render_tune_text(once), Catch::Contains(fmt::format("  {:>7} {:>8} {:<7} {:>10.0f} {:>8} ", 1, 2, "none",
                                                                 pts[0]["samples_per_s"].get<double>(), "-")));
  CHECK_THAT(text,
             Catch::Contains(fmt::format("  {:>7} {:>8} {:<7} {:>10.0f} {:>7.1f}% ", 1, 2, "none",
                                         pts[0]["samples_per_s"].get<double>(), 100 * pts[0]["spread"].get<double>())));
  CHECK_THAT(text, Catch::Contains("NOT MEASURED: 2 of 4 settings (workers=4 prefetch=2 numa=none; workers=8"));
  CHECK_THAT(text, Catch::Contains("the sweep stopped (interrupted)"));
  // The recommendation says it is from the settings measured before the stop.
  CHECK_THAT(text, Catch::Contains("Recommendation (per GPU rank), from the 2 of 4 settings measured before the sweep "
                                   "stopped (interrupted)"));
  CHECK_THAT(text, Catch::Contains("<- recommended (knee), of the 2 of 4 settings measured"));
  // The rule's 8 workers (2 CPUs) were in the sweep, not reached: not "not in the sweep".
  const WorkersRule w = check_workers_rule(t, rec, 2);
  CHECK(w.planned);
  CHECK_FALSE(w.swept);
  doc.rules = tune_rules(w, t);
  CHECK(tune_document_json(doc)["rules"][0]["in_sweep"] == true);
  const std::string ruled = render_tune_text(doc);
  CHECK_THAT(ruled, Catch::Contains("in the sweep but not measured (the sweep stopped before it: interrupted)"));
  CHECK_THAT(ruled, !Catch::Contains("not in the sweep"));
  // Stopped before any setting ran: says so, not "no steady state".
  std::vector<TunePoint> none = {pt(4, 2, {}), pt(8, 2, {})};
  TuneDocument stopped = doc;
  stopped.points = tune_point_entries(none);
  stopped.recommendation = recommend(none, demand(150), one_node());
  const std::string empty = render_tune_text(stopped);
  CHECK_THAT(empty,
             Catch::Contains("Recommendation: none (the sweep stopped (interrupted) before any setting was measured)"));
  CHECK_THAT(empty, !Catch::Contains("no setting reached a steady state"));

  const std::string html = render_tune_html(doc);
  CHECK_THAT(html, Catch::Contains("<tr class=\"not-measured\"><td>4</td><td>2</td><td>none</td>"));
  // The chart's tooltips say what the figures are.
  CHECK_THAT(html, Catch::Contains(" samples/s at 2 num_workers</title>"));
}

TEST_CASE("prefetch slots beyond the batches per epoch: the sweep's settings that never fill are named", "[tune]") {
  std::vector<TunePoint> table;
  for (uint32_t w : {4U, 16U, 32U})
    for (uint32_t pf : {1U, 2U}) table.push_back(TunePoint{.num_workers = w, .prefetch_factor = pf});
  // 20 batches per rank per epoch: 32 x 1, 16 x 2 and 32 x 2 keep more than 20 batches in flight.
  const std::string w = prefetch_slots_warning(table, 20, 1, 256);
  INFO(w);
  CHECK_THAT(w, Catch::StartsWith("3 of the 6 settings swept keep more batches in flight than the 20 batches per "
                                  "rank per epoch (up to 64 prefetch slots: num_workers=32 x prefetch_factor=2)"));
  CHECK_THAT(w, Catch::Contains("never reach a steady state"));
  CHECK_THAT(w, Catch::Contains("at least 16384 samples for 64 batches per rank at 1 rank of batch size 256"));
  // Enough batches for every setting, or none known: no warning.
  CHECK(prefetch_slots_warning(table, 64, 1, 256).empty());
  CHECK(prefetch_slots_warning(table, 0, 1, 256).empty());
}
