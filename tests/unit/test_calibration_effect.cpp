// How a calibration changes the prediction (ingest/calibration_effect.hpp): the modelled CPU
// ceiling with the calibration's costs beside the same model with a run's defaults, and its
// document section and text line (report/calibration_effect_report.hpp).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "calibration_fixture.hpp"
#include "ingest/calibration_effect.hpp"
#include "report/calibration_effect_report.hpp"
#include "report/html_report.hpp"
#include "report/run_document.hpp"

using namespace ioprobe;

namespace {

// A calibrated loader: 1 rank x 4 workers on 2 CPUs, batch 32; a worker's loop 400 µs, its put
// 100 µs (half of it under the GIL), its sharer 50 µs per sample; the main process 3,200 µs per batch.
LoaderConfig calibrated() {
  LoaderConfig l;
  l.ranks = 1;
  l.num_workers = 4;
  l.batch_size = 32;
  l.cpus = 2;
  l.costs.worker = {.loop_us = 400, .put_us = 100, .other_us = 50, .startup_cpu_us = 1e6};
  l.costs.put_gil_share = 0.5;
  l.costs.python_gil = true;
  l.costs.main_cpu_per_batch_us = 3200;
  return l;
}

}  // namespace

TEST_CASE("calibration effect: the calibrated ceiling by the model, none without the calibration",
          "[calibration][ingest]") {
  const CalibrationEffect e = calibration_effect(calibrated());
  CHECK(e.ranks == 1);
  CHECK(e.num_workers == 4);
  CHECK(e.cpus == 2);
  // A worker: 400 + 100 x 0.5 + 50 = 500 µs per sample under its GIL -> 4 x 2,000 = 8,000 samples/s.
  CHECK(e.calibrated.worker_us_per_sample == Approx(500));
  CHECK(e.calibrated.workers_samples_per_s == Approx(8000));
  // The main process: 32 x 1e6 / 3,200 = 10,000 samples/s.
  CHECK(e.calibrated.main_samples_per_s == Approx(10000));
  // The CPUs: all threads 400 + 100 + 50 + 100 = 650 µs per sample on 2 CPUs = 3,077 samples/s.
  CHECK(e.calibrated.cpu_us_per_sample == Approx(650));
  CHECK(e.calibrated.cpus_samples_per_s == Approx(2e6 / 650));
  CHECK(e.calibrated.samples_per_s == Approx(2e6 / 650));
  CHECK(e.calibrated.bound == "CPUs");
  // Without --calibration a run models no CPU per sample: no ceiling at all.
  CHECK(e.uncalibrated.samples_per_s == 0);
  CHECK(e.uncalibrated.bound == "none");
  CHECK(e.uncalibrated.cpu_us_per_sample == 0);
}

TEST_CASE("calibration effect: workers bound without the GIL take their slowest thread", "[calibration][ingest]") {
  LoaderConfig l = calibrated();
  l.costs.python_gil = false;
  l.cpus = 64;  // plenty of CPUs
  l.costs.main_cpu_per_batch_us = 0;
  const CpuCeiling c = modelled_cpu_ceiling(l);
  CHECK(c.worker_us_per_sample == Approx(400));  // loop, put and sharer side by side
  CHECK(c.workers_samples_per_s == Approx(4 * 1e6 / 400));
  CHECK(c.main_samples_per_s == 0);
  CHECK(c.bound == "workers");
  CHECK(c.samples_per_s == Approx(10000));
}

TEST_CASE("calibration effect: a thread pipeline's threads are bound by their one GIL", "[calibration][ingest]") {
  // 4 threads of one process, 40 µs CPU per sample, half of it under the GIL, on 64 CPUs: the GIL
  // caps the process at 1e6 / (40 x 0.5) = 50,000 samples/s, below the threads' 4 x 25,000.
  LoaderConfig l;
  l.ranks = 1;
  l.num_workers = 4;
  l.batch_size = 32;
  l.cpus = 64;
  l.costs.worker = {.loop_us = 40, .put_us = 0, .other_us = 0, .startup_cpu_us = 0};
  l.costs.python_gil = true;
  l.costs.threads_share_gil = true;
  l.costs.loop_gil_share = 0.5;
  CpuCeiling c = modelled_cpu_ceiling(l);
  CHECK(c.gil_samples_per_s == Approx(50000));
  CHECK(c.workers_samples_per_s == Approx(100000));
  CHECK(c.bound == "GIL");
  CHECK(c.samples_per_s == Approx(50000));
  // Worker processes (one GIL each) have no such bound.
  l.costs.threads_share_gil = false;
  c = modelled_cpu_ceiling(l);
  CHECK(c.gil_samples_per_s == 0);
  CHECK(c.bound == "workers");
}

TEST_CASE("calibration effect: the cost curve's level is the run's own", "[calibration][ingest]") {
  LoaderConfig l = calibrated();
  l.costs.main_cpu_per_batch_us = 0;
  l.cpus = 1;  // 4 worker processes per CPU
  l.costs.worker_curve.points = {{1.0, {400, 100, 50, 1e6}}, {4.0, {800, 100, 50, 1e6}}};
  const CpuCeiling c = modelled_cpu_ceiling(l);
  CHECK(c.cpu_us_per_sample == Approx(950));  // the loop at 4 per CPU: 800 µs
  const LoaderConfig d = without_calibration(l);
  CHECK(d.costs.worker_curve.empty());
  CHECK_FALSE(d.costs.python_gil);
  CHECK(d.costs.worker.loop_us == 0);
  CHECK(d.num_workers == 4);  // the setting stays
}

TEST_CASE("calibration effect: the document section and its text line are labelled modelled", "[calibration][report]") {
  const nlohmann::json j = calibration_effect_json(calibration_effect(calibrated()));
  CHECK(j.at("label") == "modelled");
  CHECK(j.at("calibrated_ceiling_samples_per_s").get<double>() == Approx(2e6 / 650));
  CHECK(j.at("uncalibrated_ceiling_samples_per_s").is_null());
  CHECK(j.at("calibrated_bound") == "CPUs");
  CHECK(j.at("setting").at("num_workers") == 4);
  CHECK(j.at("calibrated").at("main_samples_per_s").get<double>() == Approx(10000));
  CHECK(j.at("uncalibrated").at("workers_samples_per_s").is_null());

  const std::string line = render_calibration_effect_line(calibration_effect_from_json(j, "effect"),
                                                          "calibration effect", 20, 2900);
  CHECK_THAT(line, Catch::StartsWith("  calibration effect   modelled, not measured: CPU ceiling at 1 rank(s) x 4 "
                                     "worker(s) on 2 CPU(s): with the calibration 3,077 samples/s (bound: CPUs"));
  CHECK_THAT(line, Catch::Contains("), without it no CPU ceiling (0 µs CPU per sample modelled); the run"));
  CHECK_THAT(line, Catch::Contains("the run delivered 2,900 samples/s (measured) = 94% of the calibrated ceiling"));
  CHECK(render_calibration_effect_line(std::nullopt, "x", 20).empty());
}

TEST_CASE("calibration effect: the HTML report has the text report's line", "[calibration][report]") {
  RunDocument r;
  r.target.reading.emplace();
  r.target.run.emplace();
  r.ingest.calibration_effect = calibration_effect(calibrated());
  const std::string html = render_html_report({run_document_json(r)});
  INFO(html);
  CHECK_THAT(html, Catch::Contains("<tr><th>calibration effect</th><td>modelled, not measured: CPU ceiling at 1 "
                                   "rank(s) x 4 worker(s) on 2 CPU(s): with the calibration 3,077 samples/s"));
  // With the run's measured rate: its share of the calibrated ceiling, as in the text line.
  IngestResult measured;
  measured.delivered_samples_per_s = 2900;
  measured.verdict = "none";  // every analysis gives one (ingest/analysis.hpp kVerdicts)
  r.ingest.result = measured;
  CHECK_THAT(render_html_report({run_document_json(r)}),
             Catch::Contains("the run delivered 2,900 samples/s (measured) = 94% of the calibrated ceiling</td>"));
  // Without --calibration: no row.
  r.ingest.calibration_effect.reset();
  CHECK(render_html_report({run_document_json(r)}).find("calibration effect") == std::string::npos);
}

TEST_CASE("calibration effect: the integration tests' calibration file is the unit tests' sample calibration",
          "[calibration]") {
  // run_calibration_effect.sh reads it with --calibration; regenerate it from sample_calibration
  // (calibration_to_json(...).dump(2)) when the document's layout changes.
  const std::string path = std::string(IOPROBE_FIXTURES) + "/calibration/sample.json";
  CHECK(calibration_to_json(load_calibration(path)) == calibration_to_json(test::sample_calibration()));
}
