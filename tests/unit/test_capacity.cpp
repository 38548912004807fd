// Capacity search on recorded point tables (monotone, noisy, non-monotone, nothing fed,
// client-bound, budget), the summary of a point's repeats, the capacity document's text and
// HTML, and the run's capacity line (measured, or "run ioprobe capacity"; no multiplier).
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "capacity/capacity_run.hpp"
#include "capacity/search.hpp"
#include "ingest/analysis.hpp"
#include "ingest/catalog.hpp"
#include "report/capacity_document.hpp"
#include "report/capacity_report.hpp"
#include "report/html_report.hpp"
#include "tune/sweep.hpp"

using namespace ioprobe;

namespace {

// A capacity document around the search's answer `a` (a host of 2 CPUs, 100 files on `fs` at
// `path`), as `ioprobe capacity` builds it.
CapacityDocument capacity_doc(const CapacityAnswer& a, const CapacitySectionInputs& in,
                              const std::string& path = "/mnt/x", const std::string& fs = "tmpfs") {
  CapacityDocument d;
  d.header.host.cpus_allowed = 2;
  d.header.host.cpus_online = 2;
  d.target.path = path;
  d.target.fs_type = fs;
  d.target.reading.emplace();
  d.dataset.files = 100;
  d.dataset.bytes = 1000;
  d.capacity.in = in;
  d.capacity.answer = a;
  return d;
}

CapacityPoint at(double au, bool client = false, bool metadata = false) {
  CapacityPoint p;
  p.au = au;
  p.au_min = au - 0.01;
  p.samples_per_s = 100 * au;
  p.repeats = 3;
  p.client_bound = client;
  p.metadata_bound = metadata;
  if (client) p.note = "the process used 97% of its allowed CPUs";
  return p;
}

// Replays a recorded table; counts missing from it would be a search that measured something it
// should not have, so they fail the test.
struct Table {
  std::map<uint32_t, CapacityPoint> points;
  std::vector<uint32_t> asked;
  size_t budget = 1000;  // points the budget allows
  MeasurePointFn fn() {
    return [this](uint32_t g) -> std::optional<CapacityPoint> {
      asked.push_back(g);
      if (asked.size() > budget) return std::nullopt;
      auto it = points.find(g);
      REQUIRE(it != points.end());
      return it->second;
    };
  }
};

std::set<uint32_t> measured(const CapacityAnswer& a) {
  std::set<uint32_t> s;
  for (const auto& p : a.points) s.insert(p.gpus);
  return s;
}

CapacitySearchOptions opts(double target = 0.9, uint32_t max = 1024) {
  CapacitySearchOptions o;
  o.au_target = target;
  o.max_gpus = max;
  return o;
}

}  // namespace

TEST_CASE("capacity: monotone table, doubling then bisection; N and N+1 both measured", "[capacity]") {
  Table t;
  for (uint32_t g = 1; g <= 16; ++g) t.points[g] = at(g <= 5 ? 0.97 : 0.6);
  CapacityAnswer a = search_capacity(t.fn(), opts());
  CHECK(a.gpus_fed == 5);
  CHECK(a.bound == "storage");
  CHECK(a.boundary_measured);
  CHECK(t.asked == std::vector<uint32_t>{1, 2, 4, 8, 6, 5});
  CHECK(measured(a) == std::set<uint32_t>{1, 2, 4, 5, 6, 8});
  CHECK_THAT(a.text, Catch::Contains("5 fed") && Catch::Contains("6 reached AU 60.0%"));
}

TEST_CASE("capacity: noisy AU near the floor; the medians decide, the answer is adjacent counts", "[capacity]") {
  Table t;
  const double au[] = {0, 0.991, 0.962, 0.944, 0.931, 0.905, 0.897, 0.88, 0.84, 0.86, 0.82};
  for (uint32_t g = 1; g <= 10; ++g) t.points[g] = at(au[g]);
  CapacityAnswer a = search_capacity(t.fn(), opts());
  CHECK(a.gpus_fed == 5);
  CHECK(a.boundary_measured);
  CHECK(measured(a).count(5));
  CHECK(measured(a).count(6));
  // The same table with the workload's 85% floor (retinanet) moves the answer.
  Table r = t;
  r.asked.clear();
  CHECK(search_capacity(r.fn(), opts(0.85)).gpus_fed == 7);
}

TEST_CASE("capacity: non-monotone table: the search stops at the first failure it meets", "[capacity]") {
  // 3 would fail and 6 would pass again (noise); doubling passes 1, 2, 4, fails 8; bisection: 6
  // passes, 7 fails. 3 is never measured: the answer is 6, with 7 measured to fail.
  Table t;
  for (uint32_t g : {1u, 2u, 4u, 6u}) t.points[g] = at(0.95);
  for (uint32_t g : {3u, 5u, 7u, 8u}) t.points[g] = at(g == 5 ? 0.95 : 0.7);
  CapacityAnswer a = search_capacity(t.fn(), opts());
  CHECK(a.gpus_fed == 6);
  CHECK(a.boundary_measured);
  CHECK_FALSE(measured(a).count(3));
  // A failure at 2 ends the doubling even if 4 would pass: the answer is 1, not 4.
  Table u;
  u.points = {{1, at(0.95)}, {2, at(0.7)}, {4, at(0.95)}};
  CapacityAnswer b = search_capacity(u.fn(), opts());
  CHECK(b.gpus_fed == 1);
  CHECK(u.asked == std::vector<uint32_t>{1, 2});
}

TEST_CASE("capacity: nothing fed; storage-bound or metadata-bound at 1", "[capacity]") {
  Table t;
  t.points[1] = at(0.4);
  CapacityAnswer a = search_capacity(t.fn(), opts());
  CHECK(a.gpus_fed == 0);
  CHECK(a.boundary_measured);
  CHECK(a.bound == "storage");
  CHECK_THAT(a.text, Catch::Contains("feeds no accelerator"));
  Table m;
  m.points[1] = at(0.4, false, true);
  CHECK(search_capacity(m.fn(), opts()).bound == "metadata");
  // A point that delivered nothing never passes, whatever its AU field says.
  Table z;
  z.points[1] = at(0.95);
  z.points[1].samples_per_s = 0;
  CHECK(search_capacity(z.fn(), opts()).gpus_fed == 0);
}

TEST_CASE("capacity: client-bound at N+1 says add hosts, not storage", "[capacity]") {
  Table t;
  t.points = {{1, at(0.97)}, {2, at(0.95)}, {3, at(0.8, true)}, {4, at(0.6, true)}};
  CapacityAnswer a = search_capacity(t.fn(), opts());
  CHECK(a.gpus_fed == 2);
  CHECK(a.bound == "client-cpu");
  CHECK_THAT(a.text, Catch::StartsWith("client-bound at 2: add hosts"));
  // Client saturated at a passing count does not matter: the failing count decides.
  Table u;
  u.points = {{1, at(0.97, true)}, {2, at(0.5)}};
  CHECK(search_capacity(u.fn(), opts()).bound == "storage");
  // Not even one accelerator: no "at 0" that reads as an answer.
  Table none;
  none.points = {{1, at(0.5, true)}};
  CapacityAnswer z = search_capacity(none.fn(), opts());
  CHECK(z.gpus_fed == 0);
  CHECK(z.bound == "client-cpu");
  CHECK_THAT(z.text, Catch::StartsWith("client-bound: this client could not emulate even 1 accelerator"));
  CHECK_THAT(z.text, !Catch::Contains("at 0"));
}

TEST_CASE("capacity: an answer N fed while client-bound says so in the summary as its table row does",
          "[capacity][report]") {
  // Every count up to --max-gpus 2 passed, 2 with the client at its limit: the row says "fed
  // (client-bound)", so the summary must not read as a clean "at least 2 fed".
  Table t;
  t.points = {{1, at(0.99)}, {2, at(0.95, true)}};
  CapacityAnswer a = search_capacity(t.fn(), opts(0.9, 2));
  CHECK(a.gpus_fed == 2);
  CHECK(a.bound == "limit");
  CHECK_THAT(a.text, Catch::Contains("at 2 the client was already the limit (the note at 2): 2 is this client's "
                                     "count"));
  CapacitySectionInputs in;
  in.accelerator_name = "H100";
  in.au_target = 0.9;
  CapacityDocument doc = capacity_doc(a, in, "/mnt/x", "ext4");
  std::string text = render_capacity_text(doc);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("fed (client-bound)"));
  CHECK_THAT(text, Catch::Contains("Capacity: at least 2 x H100 fed, client-bound at 2 (every count up to --max-gpus "
                                   "passed)"));
  CHECK_THAT(render_html_report({capacity_document_json(doc)}),
             Catch::Contains("at least 2 x H100 fed, client-bound at 2"));
  // The same with the boundary measured: N client-bound, N+1 not fed by the storage.
  Table u;
  u.points = {{1, at(0.97, true)}, {2, at(0.5)}};
  CapacityAnswer b = search_capacity(u.fn(), opts());
  CHECK(b.bound == "storage");
  doc.capacity.answer = b;
  CHECK_THAT(render_capacity_text(doc), Catch::Contains("Capacity: 1 x H100 fed at AU >= 90%, client-bound at 1 "
                                                        "(storage-bound at 2)"));
  // A clean answer row: no client clause.
  Table v;
  v.points = {{1, at(0.97)}, {2, at(0.5)}};
  doc.capacity.answer = search_capacity(v.fn(), opts());
  CHECK_THAT(render_capacity_text(doc), Catch::Contains("Capacity: 1 x H100 fed at AU >= 90% (storage-bound at 2)"));
  CHECK_THAT(render_capacity_text(doc), !Catch::Contains("client"));
}

TEST_CASE("capacity: the budget ends the search with the largest passing count; max_gpus caps it", "[capacity]") {
  Table t;
  for (uint32_t g = 1; g <= 16; ++g) t.points[g] = at(g <= 5 ? 0.97 : 0.6);
  t.budget = 4;  // 1, 2, 4, 8 measured; no time for 6
  CapacityAnswer a = search_capacity(t.fn(), opts());
  CHECK(a.gpus_fed == 4);
  CHECK(a.bound == "budget");
  CHECK_FALSE(a.boundary_measured);
  CHECK_THAT(a.text, Catch::Contains("between 4 (passed) and 8 (failed)"));
  Table all;
  for (uint32_t g = 1; g <= 6; ++g) all.points[g] = at(0.99);
  CapacityAnswer b = search_capacity(all.fn(), opts(0.9, 6));
  CHECK(b.gpus_fed == 6);
  CHECK(b.bound == "limit");  // every count up to --max-gpus passed: not the budget
  CHECK_THAT(b.text, Catch::Contains("up to the search's limit of 6"));
  CHECK(all.asked == std::vector<uint32_t>{1, 2, 4, 6});
  Table none;
  none.points[1] = at(0.99);
  none.budget = 0;
  CapacityAnswer c = search_capacity(none.fn(), opts());
  CHECK(c.points.empty());
  CHECK(c.bound == "budget");
}

TEST_CASE("capacity: a point's repeats: medians, spread, client-bound by CPU or consumer lag", "[capacity]") {
  RepeatSample r1, r2, r3;
  r1.samples_per_s = 1000, r2.samples_per_s = 1100, r3.samples_per_s = 900;
  r1.au = 0.95, r2.au = 0.91, r3.au = 0.93;
  r1.au_min = 0.9, r2.au_min = 0.85, r3.au_min = 0.92;
  r1.steady = r2.steady = r3.steady = true;
  r1.cpu_fraction = r2.cpu_fraction = r3.cpu_fraction = 0.3;
  CapacityPoint p = summarize_repeats(4, {r1, r2, r3});
  CHECK(p.gpus == 4);
  CHECK(p.repeats == 3);
  CHECK(p.au == Approx(0.93));
  CHECK(p.au_min == Approx(0.85));
  CHECK(p.samples_per_s == Approx(1000));
  CHECK(p.spread == Approx(0.2));
  CHECK_FALSE(p.client_bound);
  r1.cpu_fraction = r2.cpu_fraction = 0.97;
  CapacityPoint cpu = summarize_repeats(4, {r1, r2, r3});
  CHECK(cpu.client_bound);
  CHECK_THAT(cpu.note, Catch::Contains("97% of its allowed CPUs"));
  RepeatSample lag = r3;
  lag.consumer_lag = 0.12;
  CapacityPoint late = summarize_repeats(2, {lag});
  CHECK(late.client_bound);
  CHECK_THAT(late.note, Catch::Contains("overran their steps by 12%"));
  RepeatSample opens = r3;
  opens.open_share = 0.7;
  CHECK(summarize_repeats(1, {opens}).metadata_bound);
  // Workers busy nearly all the time, mostly in per-sample CPU work: worker-bound, which takes
  // precedence over a large open share (the opens are then not what limits the rate).
  RepeatSample busy = opens;
  busy.worker_busy = 0.97;
  busy.worker_cpu_share = 0.9;
  CapacityPoint w = summarize_repeats(6, {busy});
  CHECK(w.workers_bound);
  CHECK_FALSE(w.metadata_bound);
  CHECK_THAT(w.note, Catch::Contains("fetched 97% of the time, 90% of it per-sample CPU work"));
  RepeatSample starved = busy;
  starved.worker_runq_share = 0.45;  // waited for a CPU 45% of their busy time: the host, not the storage
  CapacityPoint st = summarize_repeats(6, {starved});
  CHECK(st.client_bound);
  CHECK(st.worker_runq_share == Approx(0.45));
  CHECK_THAT(st.note, Catch::Contains("waited for a CPU 45% of the time they had work"));
  CHECK(client_notes(0.2, 0, -1).empty());  // not measured: no judgement
  CHECK(client_notes(0.2, 0, 0.1).empty());
  busy.worker_cpu_share = 0.2;  // busy, but waiting on I/O: not the workers' CPU work
  CHECK_FALSE(summarize_repeats(6, {busy}).workers_bound);
  CHECK(summarize_repeats(6, {busy}).metadata_bound);
}

TEST_CASE("capacity: worker-bound at N+1 says more num_workers, not storage", "[capacity]") {
  Table t;
  t.points = {{1, at(0.97)}, {2, at(0.95)}, {3, at(0.7)}, {4, at(0.5)}};
  t.points[3].workers_bound = t.points[4].workers_bound = true;
  t.points[3].note = "the workers fetched 98% of the time, 95% of it per-sample CPU work";
  CapacityAnswer a = search_capacity(t.fn(), opts());
  CHECK(a.gpus_fed == 2);
  CHECK(a.bound == "workers");
  CHECK_THAT(a.text, Catch::StartsWith("worker-bound at 2: more num_workers"));
  CHECK_THAT(a.text, Catch::Contains("the storage was not the limit"));
}

TEST_CASE("worker_load: busy over elapsed x workers, per-sample CPU over busy", "[capacity][ingest]") {
  LoaderResult r;
  r.elapsed_ns = 2'000'000'000;
  WorkerStats a, b;
  a.busy_ns = 1'900'000'000, a.cpu_work_ns = 1'500'000'000;
  b.busy_ns = 1'900'000'000, b.cpu_work_ns = 1'300'000'000;
  r.workers = {a, b};
  const WorkerLoad w = worker_load(r);
  CHECK(w.busy == Approx(0.95));
  CHECK(w.cpu_share == Approx(2.8 / 3.8));
  CHECK(workers_bound(w));
  r.workers[1].busy_ns = 500'000'000;  // one worker mostly idle: (1.9 + 0.5) / 4 = 60% busy
  CHECK_FALSE(workers_bound(worker_load(r)));
  const LoaderResult none;
  CHECK(worker_load(none).busy == 0);
}

TEST_CASE("capacity: repeat_sample takes CPU per allowed CPU and the consumers' lag from the result", "[capacity]") {
  LoaderResult r;
  r.elapsed_ns = 4'000'000'000;
  r.cpu_user_s = 6;
  r.cpu_sys_s = 1;  // 7 CPU s over 4 s on 2 CPUs = 87.5%
  RankStats rk;
  rk.elapsed_ns = 4'000'000'000;
  rk.wait_ns = 1'000'000'000;
  rk.nominal_compute_ns = 2'600'000'000;  // 0.4 s of 4 s overslept = 10%
  rk.timeline = Timeline(0.5);
  r.ranks.push_back(rk);
  LoaderConfig c;
  RepeatSample s = repeat_sample(r, c, 2, 0);
  CHECK(s.cpu_fraction == Approx(0.875));
  CHECK(s.consumer_lag == Approx(0.1));
  CHECK(summarize_repeats(1, {s}).client_bound);
}

TEST_CASE("capacity document: text and HTML name the answer; the charts have the floor and demand lines",
          "[capacity][report]") {
  Table t;
  for (uint32_t g = 1; g <= 4; ++g) t.points[g] = at(g <= 2 ? 0.97 : 0.5);
  t.points[2].cpu_fraction = 0.3;  // 0.6 of the host's 2 CPUs at the answer, 2 accelerators
  CapacityAnswer a = search_capacity(t.fn(), opts(0.85));
  CapacitySectionInputs in;
  in.accelerator = "b200";
  in.accelerator_name = "B200";
  in.model = "retinanet";
  in.au_target = 0.85;
  in.samples_per_s_per_gpu = 504.7;
  in.sample_bytes = 322957;
  in.repeats = 3;
  in.point_s = 2;
  const CapacityDocument doc = capacity_doc(a, in, "/mnt/x<y>");
  const nlohmann::json j = capacity_document_json(doc);
  CHECK(j["capacity"]["gpus_fed"] == 2);
  CHECK(j["capacity"]["bound"] == "storage");
  CHECK(j["capacity"]["points"].size() == 4);  // 1, 2, 4, then 3
  CHECK(j["capacity"]["points"][1]["demand_samples_per_s"].get<double>() == Approx(1009.4));
  const std::string text = render_capacity_text(doc);
  CHECK_THAT(text, Catch::Contains("Capacity: 2 x B200 fed at AU >= 85% (storage-bound at 3)"));
  CHECK_THAT(text, Catch::Contains("NOT fed"));
  // The rule of thumb "CPU cores = 4 x GPUs" beside what the emulation used at the answer.
  CHECK_THAT(text, Catch::Contains("\"CPU cores = 4 x GPUs\": 8 cores for the 2 fed here; this host allows 2") &&
                       Catch::Contains("used 0.60 CPUs at 2 (0.30 per accelerator"));
  const std::string html = render_html_report({j});
  CHECK_THAT(html, Catch::Contains("data-chart=\"capacity-au\"") && Catch::Contains("data-chart=\"capacity-rate\""));
  CHECK_THAT(html, Catch::Contains("AU floor 85%"));
  CHECK_THAT(html, Catch::Contains("demand (accelerators x per-accelerator rate)"));
}

TEST_CASE("catalog: MLPerf Storage v3.0 accelerators and the per-workload AU floor", "[capacity][ingest]") {
  const std::string path = std::string(IOPROBE_SOURCE_WORKLOADS) + "/accelerators.json";
  auto rows = load_catalog(path);
  const CatalogRow& b200u = find_row(rows, "b200", "unet3d");
  REQUIRE(b200u.emulation);
  CHECK(b200u.emulation->samples_per_s == Approx(43.2));
  CHECK(b200u.emulation->samples_per_s * b200u.bytes_per_sample / 1e9 == Approx(6.33).epsilon(2e-3));
  const CatalogRow& b200r = find_row(rows, "b200", "retinanet");
  const CatalogRow& mi355r = find_row(rows, "mi355", "retinanet");
  REQUIRE(b200r.emulation);
  REQUIRE(mi355r.emulation);
  CHECK(b200r.emulation->batch_size / b200r.emulation->step_time_s == Approx(504.7).epsilon(1e-3));
  CHECK(mi355r.emulation->batch_size / mi355r.emulation->step_time_s == Approx(504.7).epsilon(1e-3));
  CHECK(mi355r.bytes_per_sample == 322957);
  std::string src;
  CHECK(load_au_floor(path, "retinanet", &src) == Approx(0.85));
  CHECK_THAT(src, Catch::Contains("v3.0"));
  CHECK(load_au_floor(path, "unet3d") == Approx(0.90));
  CHECK(load_au_floor(path, "resnet50") == Approx(0.90));
}

TEST_CASE("run: the GPUs-fed figure is only what the run measured, no multiplier", "[capacity][ingest]") {
  // A GPU-paced run with workers 12.5% busy once said "perhaps up to 8".
  LoaderResult r;
  r.elapsed_ns = 10'000'000'000;
  r.samples = 17860;
  r.bytes = 17860ULL * 114660;
  RankStats rk;
  rk.elapsed_ns = r.elapsed_ns;
  rk.nominal_compute_ns = 9'900'000'000;
  r.ranks.push_back(rk);
  WorkerStats w;
  w.busy_ns = 1'250'000'000;
  r.workers.push_back(w);
  Demand d;
  d.samples_per_s_per_gpu = 1786;
  d.gpus = 1;
  IngestResult out = analyze_ingest(r, d, AnalysisInputs{});
  CHECK(out.gpus_fed == 1);
  d.gpus = 3;  // the same rate against 3 GPUs: AU below the target, so none is claimed
  r.ranks[0].nominal_compute_ns = 5'000'000'000;
  CHECK(analyze_ingest(r, d, AnalysisInputs{}).gpus_fed == 0);
}

TEST_CASE("capacity: a repeat without completion times uses the whole run, never interval counts", "[capacity]") {
  // 8 ranks with 0.512 s steps in a 3 s run: one batch per rank in the window. Interval counts
  // can give AU 99.8% next to 72% of the demand delivered.
  LoaderResult r;
  r.elapsed_ns = 3'000'000'000;
  for (int k = 0; k < 8; ++k) {
    RankStats rk;
    rk.timeline = Timeline(0.5);
    rk.elapsed_ns = r.elapsed_ns;
    rk.nominal_compute_ns = 1'536'000'000;  // 3 batches of 0.512 s in 3 s: AU 51.2%
    for (int b = 0; b < 3; ++b) {
      const int64_t t = int64_t{b} * 1'200'000'000 + 100'000'000;
      rk.timeline.add(t, 256, 256000, 0);
      rk.deliveries.push_back({t, 256, 256000, 0});
    }
    r.samples += 3 * 256;
    r.bytes += 3 * 256000;
    r.ranks.push_back(rk);
  }
  LoaderConfig c;
  c.ranks = 8;
  c.batch_size = 256;
  c.step_time_s = 0.512;
  RepeatSample s = repeat_sample(r, c, 2, 0);
  CHECK_FALSE(s.steady);
  CHECK(s.au == Approx(0.512));
  CHECK(s.samples_per_s == Approx(8 * 3 * 256 / 3.0));
  CHECK_FALSE(point_passes(summarize_repeats(8, {s}), 0.9));
}

TEST_CASE("capacity: a signal ends the search as 'interrupted', never as the budget", "[capacity]") {
  Table t;
  for (uint32_t g = 1; g <= 16; ++g) t.points[g] = at(g <= 5 ? 0.97 : 0.6);
  t.budget = 2;  // 1 and 2 measured, then the signal
  CapacitySearchOptions o = opts();
  o.interrupted = [] { return true; };
  CapacityAnswer a = search_capacity(t.fn(), o);
  CHECK(a.gpus_fed == 2);
  CHECK(a.bound == "interrupted");
  CHECK_FALSE(a.boundary_measured);
  CHECK_THAT(a.text, Catch::Contains("interrupted before a count above 2 was measured"));
  CHECK(a.text.find("budget") == std::string::npos);
  CapacitySectionInputs in;
  in.accelerator_name = "H100";
  in.au_target = 0.9;
  in.stop = CapacityStop::kInterrupted;
  CapacityDocument doc = capacity_doc(a, in);
  doc.partial = true;
  const std::string text = render_capacity_text(doc);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("Capacity: at least 2 x H100 fed (the search was interrupted before it finished)"));
  CHECK(text.find("budget ran out") == std::string::npos);
  // A document of an older version: bound "budget" with stop_reason "interrupted".
  doc.capacity.answer.bound = "budget";
  CHECK_THAT(render_capacity_text(doc), Catch::Contains("(the search was interrupted before it finished)"));
  // Nothing measured before the signal.
  Table none;
  none.points[1] = at(0.99);
  none.budget = 0;
  CapacityAnswer b = search_capacity(none.fn(), o);
  CHECK(b.bound == "interrupted");
  CHECK_THAT(b.text, Catch::Contains("interrupted before any count was measured"));
}

TEST_CASE("capacity: the least time one point needs, its runs lengthened for long GPU steps", "[capacity]") {
  // 2 repeats of 3 s (+ 0.3 s to start each) with short steps.
  CHECK(point_need_s(2, 3, 0.1) == Approx(2 * (3 + kRunOverheadS)));
  // 1 s steps: each run is lengthened to 1 s of warm-up + 8 steps = 9 s.
  CHECK(point_run_s(3, 1.0) == Approx(kMinWarmupS + kMinStepsPerPoint * 1.0));
  CHECK(point_need_s(2, 3, 1.0) == Approx(2 * (9 + kRunOverheadS)));
}

TEST_CASE("capacity HTML: the charts' tooltips give each figure its unit", "[capacity][report]") {
  Table t;
  for (uint32_t g = 1; g <= 4; ++g) t.points[g] = at(g <= 2 ? 0.97 : 0.5);
  CapacityAnswer a = search_capacity(t.fn(), opts(0.85));
  CapacitySectionInputs in;
  in.accelerator_name = "B200";
  in.au_target = 0.85;
  in.samples_per_s_per_gpu = 100;
  const std::string html = render_capacity_html(capacity_doc(a, in));
  INFO(html);
  CHECK_THAT(html, Catch::Contains("AU (mean over ranks): 97% at 1 accelerators</title>"));
  CHECK_THAT(html, Catch::Contains("delivered (median of repeats): 97 samples/s at 1 accelerators</title>"));
}
