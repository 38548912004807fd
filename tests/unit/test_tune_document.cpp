// The typed tune document (report/tune_document.hpp): its JSON both ways, strict reading, and a
// document saved by `ioprobe tune` (tests/fixtures/documents/tune_cut.json: an interrupted sweep,
// two settings measured and two not) read back and rendered as the tune did.
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "loader/loader_result.hpp"
#include "report/device_io_report.hpp"
#include "report/document.hpp"
#include "report/document_text.hpp"
#include "report/tune_document.hpp"
#include "tune_fixture.hpp"

using namespace ioprobe;
using namespace ioprobe::test;
using nlohmann::json;

namespace {

const std::string kTuneDocs = std::string(IOPROBE_FIXTURES) + "/documents";

std::string tune_fixture_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A document with every optional part present: worker costs and device accounting on a point, a
// calibration effect, a fastest run, a cluster section, rules with and without figures.
TuneDocument full_tune_document() {
  std::vector<TunePoint> t = {pt(1, 2, {1000, 1040}), pt(2, 2, {1900, 1950}, 0.95), pt(4, 2, {})};
  t[1].runs[0].from_completions = true;
  t[1].runs[1].steady_samples = 4096;
  t[0].run_s = 2.5;
  t[0].pin_memory = true;
  const Recommendation rec = recommend(t, demand(1800), one_node());
  TuneDocument d = tune_doc(t, rec, 1800.0, TuneStop{.kind = TuneStopKind::kInterrupted}, 2);
  d.header.created_utc = "2026-01-01T00:00:00Z";
  d.loader = {256, 1, EngineKind::kIoUring, true, true, 12.5, 0.25, RunConsumerModel{}};
  d.loader.consumer.calibration = RunCalibrationRef{"cal.json", "ds.py", "make", "h1", "2.3.0", 32, "2026-01-01"};
  d.demand.demand.accelerator = "h100";
  d.demand.demand.accelerator_name = "H100-SXM";
  d.demand.demand.model = "resnet50";
  d.demand.demand.rate_family = "training";
  d.demand.demand.samples_per_s_per_gpu = 1800;
  d.demand.demand.source = "catalog";
  d.demand.required_bytes_per_s = 1.8e8;
  d.demand.sample_bytes = 1e5;
  d.tune.workers = {1, 2, 4};
  d.tune.prefetch_factors = {2};
  d.tune.placements = {"none"};
  d.tune.placements_reason = "one node";
  d.tune.budget_s = 600;
  d.tune.elapsed_s = 12.5;
  d.tune.runs_done = 4;
  d.tune.runs_planned = 6;
  CalibrationEffect effect;
  effect.ranks = 1;
  effect.num_workers = 2;
  effect.batch_size = 256;
  effect.cpus = 2;
  effect.calibrated = {3265, 4000, 612, 0, 500, 500, "CPUs"};  // uncalibrated: no CPU ceiling
  d.tune.calibration_effect = effect;
  DeviceIo io;
  io.source = "diskstats";
  io.devices = {{"nvme0n1", 1000, 0, 1, 0}};
  io.bytes_read = 1000;
  io.reads = 1;
  io.interval_s = 2;
  d.points[0].device_io = TunePointDeviceIo{.section = device_io_section(io), .device_read_bytes_per_s = 500};
  d.points[1].worker_costs = TuneWorkerCosts{0.5, 30, 20, 6, 4, 0.25, "measured"};
  d.rules = tune_rules(check_workers_rule(t, rec, 2), t);
  TuneRule measured = d.rules[0];
  measured.samples_per_s = 1000;
  measured.best_num_workers = 2;
  measured.best_samples_per_s = 1925;
  measured.measured = true;
  d.rules.push_back(measured);
  RankStats rk;
  rk.timeline = Timeline(0.5);
  WorkerStats w;
  for (uint64_t ns : {120'000, 150'000, 900'000}) w.file_latency.record(ns);
  w.open_latency.record(20'000);
  w.cpu_list = "0-1";
  w.numa = "none";
  rk.batch_wait.record(1'000'000);
  rk.samples = 4096;
  rk.bytes = 4096ULL * 100'000;
  rk.timeline.add(100, 4096, 4096ULL * 100'000, 1000);
  const LoaderResult best = rank_result(rk, {w}, 2'000'000'000, 1);
  d.best_run = best;
  d.cluster = tune_cluster_section("mpirun", 2, 4, 8, "shared", "one directory on every host");
  d.partial = true;
  d.warnings = {"a warning"};
  return d;
}

// What tune_document_from_json refuses for `j`, or "" when it reads it.
std::string tune_refusal(const json& j) {
  try {
    tune_document_from_json(j, "'t.json'");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("tune document: a document `ioprobe tune` saved reads back, writes the same JSON and renders the same text",
          "[tune_document]") {
  // Saved with `ioprobe tune --json` (interrupted after two of four settings) before the document
  // was typed, with the text `ioprobe report` rendered from it then.
  const json saved = read_json_file(kTuneDocs + "/tune_cut.json");
  const TuneDocument doc = tune_document_from_json(saved, "'tune_cut.json'");
  REQUIRE(doc.points.size() == 4);
  CHECK(tune_point_measured(doc.points[1]));
  CHECK_FALSE(tune_point_measured(doc.points[2]));
  CHECK(doc.best_run.has_value());
  // Its points of one repeat wrote spread 0.0, read as such; written again, they have none (null).
  json expected = saved;
  for (auto& p : expected["points"])
    if (p["repeats"] == 1) p["spread"] = nullptr;
  CHECK(tune_document_json(doc).dump(2, ' ', false, json::error_handler_t::replace) ==
        expected.dump(2, ' ', false, json::error_handler_t::replace));
  CHECK(render_tune_text(doc) == tune_fixture_text(kTuneDocs + "/tune_cut.txt"));
  // The CSV of a document read as JSON is the typed document's.
  CHECK(render_document_csv(saved) == render_tune_csv(doc));
}

TEST_CASE("tune document: one repeat has no spread: null in the JSON, an empty CSV cell, '-' in the text",
          "[tune_document]") {
  const std::vector<TunePoint> t = {pt(1, 2, {1000}), pt(2, 2, {1900, 2100})};
  const Recommendation rec = recommend(t, demand(1800), one_node());
  const TuneDocument d = tune_doc(t, rec, 1800.0);
  const json j = tune_document_json(d);
  CHECK(j["points"][0]["spread"].is_null());
  CHECK(j["points"][1]["spread"].get<double>() == Approx(0.1));
  const std::string csv = render_tune_csv(d);
  INFO(csv);
  CHECK(csv.find("\n1,2,none,1,1000.0,1000.0,1000.0,,") != std::string::npos);
  CHECK(csv.find("\n2,2,none,2,2000.0,1900.0,2100.0,10.0,") != std::string::npos);
  // Read back (the null too), the text shows "-" for the one repeat.
  const TuneDocument back = tune_document_from_json(j, "'t.json'");
  CHECK(back.points[0].point.spread == 0.0);
  CHECK(back.points[1].point.spread == Approx(0.1));
  // A null spread where there were repeats to spread is refused, naming the field.
  json bad = j;
  bad["points"][1]["spread"] = nullptr;
  CHECK_THROWS_WITH(tune_document_from_json(bad, "'t.json'"), Catch::Contains("spread"));
}

TEST_CASE("tune document: every optional part survives the round trip", "[tune_document]") {
  const TuneDocument d = full_tune_document();
  const json j = tune_document_json(d);
  const TuneDocument back = tune_document_from_json(j, "'t.json'");
  CHECK(tune_document_json(back) == j);
  CHECK(back.points[1].worker_costs.has_value());
  CHECK(back.points[1].point.runs[0].from_completions);
  CHECK(back.points[0].point.run_s == 2.5);
  CHECK(back.points[0].point.pin_memory);
  CHECK_FALSE(back.points[1].device_io);
  REQUIRE(back.points[0].device_io);
  CHECK(back.points[0].device_io->device_read_bytes_per_s == 500);
  CHECK_FALSE(back.points[0].device_io->read_rate_ratio);
  CHECK(back.rules[1].best_num_workers == 2u);
  CHECK_FALSE(back.rules[0].samples_per_s.has_value());
  CHECK(back.best_run->samples == 4096);
  REQUIRE(back.tune.calibration_effect.has_value());
  CHECK(back.tune.calibration_effect->calibrated.bound == "CPUs");
  CHECK(back.tune.calibration_effect->calibrated.samples_per_s == 500);
  CHECK(back.tune.calibration_effect->uncalibrated.samples_per_s == 0);  // written as null: no ceiling
  CHECK(back.tune.calibration_effect->cpus == 2);
  CHECK(back.loader.consumer.calibration->function == "make");
  CHECK(render_tune_text(back) == render_tune_text(d));
  CHECK_THAT(render_tune_text(back), Catch::Contains("effect     modelled, not measured: CPU ceiling at 1 rank"));
}

TEST_CASE("tune stop: the sweep's own reasons and a run's, one spelling each way", "[tune_document]") {
  const TuneStop stops[] = {{},
                            {.kind = TuneStopKind::kBudget},
                            {.kind = TuneStopKind::kInterrupted},
                            tune_stop_of_run(loader_stop_interrupted(SIGTERM)),
                            tune_stop_of_run({.kind = LoaderStopKind::kDuration})};
  for (const TuneStop& s : stops) CHECK(tune_stop_from_string(to_string(s)) == s);
  CHECK(to_string(TuneStop{}) == "completed");
  CHECK(to_string(TuneStop{.kind = TuneStopKind::kInterrupted}) == "interrupted");
  CHECK(to_string(stops[3]) == "interrupted (SIGTERM)");
  CHECK_FALSE(tune_stop_from_string("budget spent"));
}

TEST_CASE("tune document: a missing or mistyped field is refused naming its path", "[tune_document]") {
  const json good = tune_document_json(full_tune_document());
  REQUIRE(tune_refusal(good).empty());
  struct Case {
    const char* what;
    json::json_pointer ptr;
    json value;  // null: the key is removed
    const char* expected;
  };
  const Case cases[] = {
      {"a point's repeats", json::json_pointer("/points/1/repeats"), nullptr,
       "'t.json'.points[1]: missing key 'repeats'"},
      {"a run's figure", json::json_pointer("/points/0/runs/1/au"), "high", "'t.json'.points[0].runs[1].au: expected"},
      {"a point's device bytes", json::json_pointer("/points/0/device_io/bytes_read"), "1 kB",
       "'t.json'.points[0].device_io.bytes_read: expected a non-negative integer"},
      {"a point's device read rate", json::json_pointer("/points/0/device_io/device_read_bytes_per_s"), nullptr,
       "'t.json'.points[0].device_io: missing key 'device_read_bytes_per_s'"},
      {"the recommendation's knee", json::json_pointer("/recommendation/knee"), -1,
       "'t.json'.recommendation.knee: expected"},
      {"the knee past the points", json::json_pointer("/recommendation/knee"), 7,
       "'t.json'.recommendation.knee: index 7 is past the document's 3 points"},
      {"a rule's figure", json::json_pointer("/rules/1/samples_per_s"), "fast", "'t.json'.rules[1].samples_per_s"},
      {"the demand", json::json_pointer("/demand/required_samples_per_s"), nullptr,
       "'t.json'.demand: missing key 'required_samples_per_s'"},
      {"the sweep's workers", json::json_pointer("/tune/workers"), json::array({1, "two"}),
       "'t.json'.tune.workers[1]: expected"},
      {"the loader's consumer model", json::json_pointer("/loader/decode"), nullptr,
       "'t.json'.loader: missing key 'decode'"},
      {"the fastest run", json::json_pointer("/best_run/samples"), -4, "'t.json'.best_run.samples"},
      {"a point's status", json::json_pointer("/points/0/status"), "guessed", "'t.json'.points[0].status: 'guessed'"},
      {"the sweep's stop reason", json::json_pointer("/tune/stop_reason"), "out of coffee",
       "'t.json'.tune.stop_reason: 'out of coffee' is not a tune stop reason"},
      {"a figure of a point not measured", json::json_pointer("/points/2/au"), 0.5,
       "'t.json'.points[2].au: expected null"},
      {"the calibration effect's CPUs", json::json_pointer("/tune/calibration_effect/setting/cpus"), "two",
       "'t.json'.tune.calibration_effect.setting.cpus: expected"},
      {"the calibration effect's bound", json::json_pointer("/tune/calibration_effect/calibrated_bound"), nullptr,
       "'t.json'.tune.calibration_effect: missing key 'calibrated_bound'"},
      {"the kind", json::json_pointer("/kind"), "run", "'t.json'.kind: 'run' is not a tune document"},
      {"the cluster's hosts", json::json_pointer("/cluster/hosts"), "two",
       "'t.json'.cluster.hosts: expected an integer in range, found \"two\""},
      {"the cluster's merge rule", json::json_pointer("/cluster/merge"), nullptr,
       "'t.json'.cluster: missing key 'merge'"},
      {"the cluster section", json::json_pointer("/cluster"), "mpirun",
       "'t.json'.cluster: expected a JSON object, found \"mpirun\""},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    json bad = good;
    if (c.value.is_null()) {
      const std::string key = c.ptr.back();
      bad[c.ptr.parent_pointer()].erase(key);
    } else {
      bad[c.ptr] = c.value;
    }
    CHECK_THAT(tune_refusal(bad), Catch::Contains(c.expected));
  }
  json mismatched = good;  // repeats that do not count the runs
  mismatched["points"][0]["repeats"] = 3;
  CHECK_THAT(tune_refusal(mismatched), Catch::Contains("'t.json'.points[0]: repeats 3 but 2 runs"));
}
