// Tune: what the sweep ran is what it reports -- the pin_memory of the recommended setting (True
// only where measured, else a labelled note), and runs lengthened for long GPU steps as capacity's
// points are, with the report saying which.
#include <catch2/catch.hpp>

#include "report/tune_document.hpp"
#include "topology/numa.hpp"
#include "tune/recommend.hpp"
#include "tune/sweep.hpp"
#include "tune_fixture.hpp"

using namespace ioprobe;
using namespace ioprobe::test;

TEST_CASE("recommend: pin_memory=True only where the recommended point measured it; else a labelled note",
          "[tune][report]") {
  // The sweep ran without --pin-memory: no point measured the pin thread, so True is not advised.
  std::vector<TunePoint> t = {pt(1, 2, {800}, 0.5), pt(2, 2, {1800}, 0.95), pt(4, 2, {1900}, 0.95)};
  Recommendation r = recommend(t, demand(1800), one_node());
  REQUIRE(r.valid);
  CHECK(r.dataloader == "DataLoader(num_workers=2, prefetch_factor=2, pin_memory=False)");
  CHECK_THAT(r.pin_memory_note, Catch::Contains("not measured: the sweep ran pin_memory=False"));
  CHECK_THAT(r.pin_memory_note, Catch::Contains("--pin-memory"));
  TuneDocument doc = tune_doc(t, r, 1800.0);
  CHECK(tune_document_json(doc)["points"][1]["pin_memory"] == false);
  const std::string text = render_tune_text(doc);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("  DataLoader(num_workers=2, prefetch_factor=2, pin_memory=False)\n"
                                   "  pin_memory: not measured: the sweep ran pin_memory=False"));
  CHECK_THAT(text, !Catch::Contains("pin_memory=True)"));
  CHECK_THAT(render_tune_html(doc), Catch::Contains("<p>pin_memory: not measured"));

  // A sweep run with --pin-memory measured it at every point: True, and no note.
  for (auto& p : t) p.pin_memory = true;
  r = recommend(t, demand(1800), one_node());
  CHECK(r.dataloader == "DataLoader(num_workers=2, prefetch_factor=2, pin_memory=True)");
  CHECK(r.pin_memory_note.empty());
  doc.recommendation = r;
  CHECK_THAT(render_tune_text(doc), !Catch::Contains("pin_memory: "));
}

TEST_CASE("lengthen_runs: long GPU steps lengthen a setting's runs as capacity lengthens its points", "[tune]") {
  // --point-time 2s with GPU steps of 0.512 s (256 samples at 500 samples/s): 2 s leave about 1 s
  // of steady window, 2 batches per rank, where num_workers=2 needs 4: no steady state before.
  SweepPlan p = make_plan({1, 2, 16}, {2}, {"none"}, 2, 1e12, 0, 2, 2);
  REQUIRE(p.run_s == Approx(2));
  const double before = p.estimated_s;
  lengthen_runs(p, 0.512);
  CHECK(p.points[0].run_s == Approx(5.1));   // kMinWarmupS + kMinStepsPerPoint steps, as capacity's point
  CHECK(p.points[1].run_s == Approx(5.1));   // 2 x 2 + 1 = 5 steps: the 8-step floor
  CHECK(p.points[2].run_s == Approx(17.9));  // 2 x 16 + 1 = 33 steps after 1 s
  CHECK(p.points[0].run_s == Approx(lengthened_run_s(2, 0.512, kMinStepsPerPoint)).margin(0.1));
  CHECK(p.estimated_s == Approx(before + 2 * (3.1 + 3.1 + 15.9)));
  // Short steps: the plan's run time stands.
  SweepPlan q = make_plan({1, 2, 16}, {2}, {"none"}, 2, 1e12, 0, 2, 2);
  lengthen_runs(q, 0.01);
  for (const auto& t : q.points) CHECK(t.run_s == q.run_s);
  CHECK(q.estimated_s == Approx(before));

  // The report says which settings ran longer, and why.
  for (auto& t : p.points) t.runs.push_back(TuneSample{});
  TuneDocument doc = tune_doc(p.points, Recommendation{}, 500.0, TuneStop{}, 2);
  doc.loader.step_time_s = 0.512;
  CHECK(tune_document_json(doc)["points"][2]["run_s"].get<double>() == Approx(17.9));
  CHECK_THAT(render_tune_text(doc),
             Catch::Contains("  lengthened num_workers=1: 5.1 s, num_workers=2: 5.1 s, num_workers=16: 17.9 s per "
                             "run, so that the steady window holds 2 batches per worker at the GPU step of 0.512 s"));
}
