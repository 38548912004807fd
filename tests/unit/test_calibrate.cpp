// The calibration document (calibrate/calibration.hpp): figures from the driver's output, the
// round trip, refusal of bad documents, and the driver's failures. The model it feeds is in
// test_calibration_model.cpp.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <csignal>
#include <fstream>

#include "calibrate/calibration.hpp"
#include "calibrate/driver.hpp"
#include "calibration_fixture.hpp"
#include "core/error.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;
using nlohmann::json;
using namespace ioprobe::test;

TEST_CASE("calibration figures from the driver's rows: means over the runs with workers, spread over them",
          "[calibrate]") {
  const Calibration c = calibration_from_driver(driver_output(), "test");
  // Worker and main costs come from the runs without pin_memory (pinning adds its own thread).
  CHECK(c.worker_cpu_per_sample_us.value == Approx(56.0));
  CHECK(c.worker_cpu_per_sample_us.min == Approx(52.0));
  CHECK(c.worker_cpu_per_sample_us.max == Approx(60.0));
  CHECK(c.main_cpu_per_batch_us.value == Approx((1573.5 + 1700.5) / 2));
  CHECK(c.main_cpu_per_batch_p90_us == Approx(1400.0));
  CHECK(c.main_cpu_per_sample_us() == Approx((1573.5 + 1700.5) / 2 / 64));
  CHECK(c.inprocess_cpu_per_sample_us.value == Approx(49.75));
  CHECK(c.bytes_per_batch.value == Approx(16384));
  CHECK(c.worker_startup_s.min == Approx(0.777));
  CHECK(c.worker_startup_s.max == Approx(0.95));
  REQUIRE(c.pin_measured);
  CHECK(c.pin_cpu_per_batch_us.value == Approx((118.4 + 130.0) / 2));
  CHECK(c.pin_cpu_per_batch_us.max == Approx(300));
  CHECK(c.batch_size == 64);
  CHECK(c.torch_version == "1.13.0a0");
  REQUIRE(c.startup_measured);
  // The one-time CPU: the smaller of the two passes' (0.1 and 0.2 s), their spread around it.
  CHECK(c.worker_startup_cpu_s.value == Approx(0.1));
  CHECK(c.worker_startup_cpu_s.min == Approx(0.1));
  CHECK(c.worker_startup_cpu_s.max == Approx(0.25));
  CHECK(c.main_startup_cpu_s.value == Approx(0.02));
}

TEST_CASE("calibration start-up CPU: round trip, and documents written before it was measured read as not measured",
          "[calibrate]") {
  const Calibration c = sample_calibration();
  json j = calibration_to_json(c);
  CHECK(j["figures"]["startup_cpu"]["measured"] == true);
  const Calibration back = calibration_from_json(j, "cal.json");
  CHECK(back.startup_measured);
  CHECK(back.worker_startup_cpu_s.value == Approx(0.1));
  CHECK(back.main_startup_cpu_s.value == Approx(0.02));
  j["figures"].erase("startup_cpu");
  const Calibration old = calibration_from_json(j, "cal.json");
  CHECK_FALSE(old.startup_measured);
  CHECK(old.worker_startup_cpu_s.value == 0);
  // A driver whose rows lack the figures (an older driver) measured none.
  json out = driver_output();
  for (json& r : out["rows"]) r.erase("worker_startup_cpu_s");
  CHECK_FALSE(calibration_from_driver(out, "drv").startup_measured);
}

TEST_CASE("calibration start-up CPU: a stall in one pass's first batches does not raise the one-time figure",
          "[calibrate]") {
  // As measured (docs/benchmarks/calibration.md, "Two workers on two CPUs"): flat.py's 2-worker
  // pass on a 2-CPU host left 0.226 s per worker after its steady samples where its other passes
  // left 0.02-0.06 s, and the mean of the two (0.143 s) made ioprobe slow at 2 workers.
  json out = driver_output();
  for (json& r : out["rows"])
    if (r["num_workers"] == 2 && !r["pin_memory"].get<bool>()) r["worker_startup_cpu_s"] = spread(0.9, 0.85, 0.95);
  const Calibration c = calibration_from_driver(out, "drv");
  CHECK(c.worker_startup_cpu_s.value == Approx(0.1));
  CHECK(c.worker_startup_cpu_s.max == Approx(0.95));  // the stall stays in the spread
  CHECK(c.main_startup_cpu_s.value == Approx(0.02));  // the main thread's iter(): the passes' mean
}

TEST_CASE("calibration worker CPU split: loop and feeder parts from the driver, round trip, older documents without it",
          "[calibrate]") {
  const Calibration c = sample_calibration();
  REQUIRE(c.split_measured);
  // Means over the worker rows without pin: loop (30, 34), put (22, 26); they add up to the total.
  CHECK(c.worker_loop_cpu_per_sample_us.value == Approx(32));
  CHECK(c.worker_loop_cpu_per_sample_us.min == Approx(30));
  CHECK(c.worker_loop_cpu_per_sample_us.max == Approx(34));
  CHECK(c.worker_put_cpu_per_sample_us.value == Approx(24));
  CHECK(c.worker_loop_cpu_per_sample_us.value + c.worker_put_cpu_per_sample_us.value ==
        Approx(c.worker_cpu_per_sample_us.value));
  json j = calibration_to_json(c);
  CHECK(j["figures"]["worker_cpu_split"]["measured"] == true);
  const Calibration back = calibration_from_json(j, "cal.json");
  CHECK(back.split_measured);
  CHECK(back.worker_loop_cpu_per_sample_us.value == Approx(32));
  CHECK(back.worker_put_cpu_per_sample_us.max == Approx(26));
  // A split that does not add up to the total is refused, naming the figure.
  json bad = j;
  bad["figures"]["worker_cpu_split"]["put_per_sample_us"] = {{"value", 100}, {"min", 100}, {"max", 100}};
  CHECK_THAT(refusal(bad), Catch::Contains("cal.json: figures.worker_cpu_split: loop 32 + put 100"));
  // A tensor count no batch has (an edited document) is refused, not wrapped into 32 bits.
  bad = j;
  bad["figures"]["tensors_per_batch"] = {{"value", 1e12}, {"min", 1e12}, {"max", 1e12}};
  CHECK_THAT(refusal(bad), Catch::Contains("figures.tensors_per_batch 1000000000000 is more than 1,000,000"));
  // A split figure whose spread does not hold is named by its path in the document.
  bad = j;
  bad["figures"]["worker_cpu_split"]["put_per_sample_us"]["min"] = 99;
  CHECK_THAT(refusal(bad), Catch::Contains("cal.json: figures.worker_cpu_split.put_per_sample_us: min 99"));
  // A document written before the split: not measured, zeros; the total is read as before.
  j["figures"].erase("worker_cpu_split");
  const Calibration old = calibration_from_json(j, "cal.json");
  CHECK_FALSE(old.split_measured);
  CHECK(old.worker_loop_cpu_per_sample_us.value == 0);
  CHECK(old.worker_put_cpu_per_sample_us.value == 0);
  CHECK(old.worker_cpu_per_sample_us.value == Approx(56));
  // An older driver's rows lack the parts: not measured.
  json out = driver_output();
  for (json& r : out["rows"]) r.erase("worker_put_cpu_per_sample_us");
  CHECK_FALSE(calibration_from_driver(out, "drv").split_measured);
  // A driver that read no feeder thread's own clock: the put is all but the loop, no other threads.
  CHECK_FALSE(c.other_measured);
  CHECK(j["figures"]["worker_cpu_split"].contains("other_per_sample_us") == false);
}

TEST_CASE("calibration worker CPU split: the feeder thread's own clock and the other threads", "[calibrate]") {
  // The driver read each worker's QueueFeederThread clock: feeder (16, 20) of the put (22, 26),
  // the rest (6, 6) the other threads (the resource sharer).
  json out = driver_output();
  for (json& r : out["rows"])
    if (r["num_workers"] == 1 || r["num_workers"] == 2) {
      if (r["pin_memory"] == true) continue;
      const bool one = r["num_workers"] == 1;
      r["worker_feeder_cpu_per_sample_us"] = one ? 16.0 : 20.0;
      r["worker_other_cpu_per_sample_us"] = 6.0;
      r["tensors_per_batch"] = {{"mean", 64.0}, {"min", 64.0}, {"max", 64.0}, {"p10", 64.0}, {"p90", 64.0}};
    }
  const Calibration c = calibration_from_driver(out, "drv");
  CHECK(c.tensors_per_batch.value == Approx(64));
  REQUIRE(c.split_measured);
  REQUIRE(c.other_measured);
  CHECK(c.worker_put_cpu_per_sample_us.value == Approx(18));
  CHECK(c.worker_put_cpu_per_sample_us.min == Approx(16));
  CHECK(c.worker_other_cpu_per_sample_us.value == Approx(6));
  CHECK(c.worker_loop_cpu_per_sample_us.value + c.worker_put_cpu_per_sample_us.value +
            c.worker_other_cpu_per_sample_us.value ==
        Approx(c.worker_cpu_per_sample_us.value));
  // Written and read back; the three parts must add up to the total.
  json j = calibration_to_json(c);
  CHECK(j["figures"]["worker_cpu_split"]["other_per_sample_us"]["value"] == Approx(6));
  const Calibration back = calibration_from_json(j, "cal.json");
  CHECK(back.other_measured);
  CHECK(back.worker_other_cpu_per_sample_us.value == Approx(6));
  CHECK(back.worker_put_cpu_per_sample_us.value == Approx(18));
  CHECK(back.tensors_per_batch.max == Approx(64));
  json bad = j;
  bad["figures"]["worker_cpu_split"]["other_per_sample_us"] = {{"value", 50}, {"min", 50}, {"max", 50}};
  CHECK_THAT(refusal(bad), Catch::Contains("loop 32 + put 18 + other 50"));
  // One worker row without the feeder's clock: the older split (put = all but the loop).
  for (json& r : out["rows"])
    if (r["num_workers"] == 2 && r["pin_memory"] == false) r.erase("worker_feeder_cpu_per_sample_us");
  const Calibration older = calibration_from_driver(out, "drv");
  CHECK_FALSE(older.other_measured);
  CHECK(older.worker_put_cpu_per_sample_us.value == Approx(24));
  CHECK(older.worker_other_cpu_per_sample_us.value == 0);
}

TEST_CASE("calibration from a driver that ran no worker is refused", "[calibrate]") {
  json out = driver_output();
  json rows = json::array();
  for (const json& r : out["rows"])
    if (r["num_workers"] == 0) rows.push_back(r);
  out["rows"] = rows;
  CHECK_THROWS_WITH(calibration_from_driver(out, "drv"), Catch::Contains("no run with num_workers > 0"));
  json missing = driver_output();
  missing.erase("torch_version");
  CHECK_THROWS_WITH(calibration_from_driver(missing, "drv"), Catch::Contains("lacks a field"));
}

TEST_CASE("calibration from the driver's result file: its JSON read as the driver's rows, anything else is none",
          "[calibrate]") {
  const std::optional<Calibration> c = calibration_from_driver_result(driver_output().dump(), "drv");
  REQUIRE(c);
  CHECK(c->worker_cpu_per_sample_us.value ==
        calibration_from_driver(driver_output(), "drv").worker_cpu_per_sample_us.value);
  CHECK_FALSE(calibration_from_driver_result("", "drv"));
  CHECK_FALSE(calibration_from_driver_result("Traceback (most recent call last):", "drv"));
  // JSON that is not the driver's is refused as calibration_from_driver refuses it.
  CHECK_THROWS_WITH(calibration_from_driver_result("{}", "drv"), Catch::Contains("lacks a field"));
}

namespace {

// The driver's output with its oversubscribed passes: two at num_workers 4 on 2 CPUs (2 per CPU),
// two at 8 on 2 (4 per CPU), in the order they ran (the larger level first here, to check sorting).
json crowded_output() {
  json out = driver_output();
  for (int w : {8, 8, 4, 4}) {
    const bool second = out["rows"].back().value("num_workers", 0) == w;
    const double loop = (w == 4 ? 40.0 : 50.0) + (second ? 2.0 : 0.0);
    out["rows"].push_back({{"num_workers", w},
                           {"pin_memory", false},
                           {"oversubscribed", true},
                           {"cpus", 2},
                           {"workers_per_cpu", w / 2},
                           {"batches", 30},
                           {"samples", 1920},
                           {"samples_per_s", 5000.0},
                           {"main_cpu_per_batch_us", 9999.0},  // not the main-process figure's: left out
                           {"main_thread_cpu_per_batch_us", spread(9000, 8000, 10000)},
                           {"bytes_per_batch", spread(16384, 16384, 16384)},
                           {"worker_cpu_per_sample_us", loop + 25},
                           {"worker_loop_cpu_per_sample_us", loop},
                           {"worker_put_cpu_per_sample_us", 25.0},
                           {"worker_feeder_cpu_per_sample_us", 24.0},
                           {"worker_other_cpu_per_sample_us", 1.0},
                           {"worker_startup_s", spread(1.5, 1.4, 1.6)},
                           {"worker_startup_cpu_s", spread(w == 4 ? 0.3 : 0.5, 0.2, 0.6)},
                           {"main_startup_cpu_s", 0.05}});
  }
  return out;
}

}  // namespace

TEST_CASE("calibration oversubscription: a point per level from its passes, kept out of the base figures",
          "[calibrate]") {
  const Calibration c = calibration_from_driver(crowded_output(), "test");
  // The base figures are the uncrowded runs' alone, as without the passes.
  const Calibration plain = calibration_from_driver(driver_output(), "test");
  CHECK(c.worker_cpu_per_sample_us.value == Approx(plain.worker_cpu_per_sample_us.value));
  CHECK(c.main_cpu_per_batch_us.value == Approx(plain.main_cpu_per_batch_us.value));
  CHECK(c.worker_startup_cpu_s.value == Approx(plain.worker_startup_cpu_s.value));
  CHECK_FALSE(plain.oversubscription_measured);
  REQUIRE(c.oversubscription_measured);
  REQUIRE(c.oversubscription.size() == 2);
  const CalLoadPoint& two = c.oversubscription[0];
  CHECK(two.workers_per_cpu == 2.0);
  CHECK(two.num_workers == 4);
  CHECK(two.cpus == 2);
  CHECK(two.worker_cpu_per_sample_us.value == Approx(66.0));  // passes of 65 and 67
  CHECK(two.worker_cpu_per_sample_us.min == Approx(65.0));
  CHECK(two.worker_cpu_per_sample_us.max == Approx(67.0));
  CHECK(two.loop_per_sample_us == Approx(41.0));
  CHECK(two.put_per_sample_us == Approx(24.0));  // the feeder thread's own clock
  CHECK(two.other_per_sample_us == Approx(1.0));
  CHECK(two.worker_startup_cpu_s.value == Approx(0.3));
  CHECK(two.worker_startup_cpu_s.max == Approx(0.6));
  CHECK(c.oversubscription[1].workers_per_cpu == 4.0);
  CHECK(c.oversubscription[1].loop_per_sample_us == Approx(51.0));
  // Round trip.
  const json j = calibration_to_json(c);
  const Calibration back = calibration_from_json(j, "cal.json");
  REQUIRE(back.oversubscription.size() == 2);
  CHECK(back.oversubscription[1].worker_startup_cpu_s.value == Approx(0.5));
  CHECK(calibration_to_json(back) == j);
  // A document written before it was measured reads as not measured.
  json old = j;
  old["figures"].erase("oversubscription");
  CHECK_FALSE(calibration_from_json(old, "cal.json").oversubscription_measured);
}

TEST_CASE("calibration oversubscription: per-sample and one-time CPU fitted from two pass lengths' whole lives",
          "[calibrate]") {
  // num_workers 8 on 2 CPUs, 3 and 6 batches of 64 per worker: 1536 and 3072 samples. Whole-life CPU
  // of the workers 8 x 0.5 s + 1536 x 100 µs = 4.1536 s and 8 x 0.5 + 3072 x 100 µs = 4.3072 s.
  json out = crowded_output();
  for (json& r : out["rows"]) {
    if (!r.value("oversubscribed", false) || r["num_workers"] != 8) continue;
    const bool first = !r.contains("seen");
    r["pass_samples"] = first ? 1536 : 3072;
    r["worker_life_cpu_s"] = first ? 4.1536 : 4.3072;
    for (json& q : out["rows"])
      if (q.value("oversubscribed", false) && q["num_workers"] == 8) q["seen"] = true;
  }
  const Calibration c = calibration_from_driver(out, "test");
  REQUIRE(c.oversubscription.size() == 2);
  const CalLoadPoint& four = c.oversubscription[1];
  CHECK(four.worker_cpu_per_sample_us.value == Approx(100.0));
  CHECK(four.worker_startup_cpu_s.value == Approx(0.5));
  // The windows' split kept in proportion (loop 51, put 24, other 1 of 76), scaled to the fit.
  CHECK(four.loop_per_sample_us == Approx(100.0 * 51 / 76));
  CHECK(four.put_per_sample_us == Approx(100.0 * 24 / 76));
  CHECK(four.other_per_sample_us == Approx(100.0 * 1 / 76));
  // The spread holds the windows' figures and the fit.
  CHECK(four.worker_cpu_per_sample_us.min == Approx(75.0));
  CHECK(four.worker_cpu_per_sample_us.max == Approx(100.0));
  CHECK(four.worker_startup_cpu_s.max == Approx(0.6));
  // The level without whole-life figures keeps its windowed means.
  CHECK(c.oversubscription[0].worker_cpu_per_sample_us.value == Approx(66.0));
  CHECK(calibration_from_json(calibration_to_json(c), "cal.json").oversubscription[1].loop_per_sample_us ==
        Approx(four.loop_per_sample_us));
  // A fit below the level before (here the 2-per-CPU level's 66 µs) is held at it: crowding does
  // not make a sample cheaper. The one-time CPU is the smaller of the two passes' rests (a noisy
  // host only adds CPU): here the long pass's, (4.1997 - 3072 x 66 µs) / 8, not the short one's
  // (4.1536 - 1536 x 66 µs) / 8.
  for (json& r : out["rows"])
    if (r.value("pass_samples", 0) == 3072) r["worker_life_cpu_s"] = 4.1536 + 1536 * 30e-6;
  const CalLoadPoint low = calibration_from_driver(out, "test").oversubscription[1];
  CHECK(low.worker_cpu_per_sample_us.value == Approx(66.0));
  CHECK(low.worker_startup_cpu_s.value == Approx((4.1536 + 1536 * 30e-6 - 3072 * 66e-6) / 8));
  CHECK(low.basis == "floor");
  // A stall in the short pass (its whole life 20 ms longer): the long pass's rest stands.
  for (json& r : out["rows"])
    if (r.value("pass_samples", 0) == 1536) r["worker_life_cpu_s"] = 4.1736;
  const CalLoadPoint hiccup = calibration_from_driver(out, "test").oversubscription[1];
  CHECK(hiccup.basis == "floor");
  CHECK(hiccup.worker_startup_cpu_s.value == Approx((4.1536 + 1536 * 30e-6 - 3072 * 66e-6) / 8));
  CHECK(four.basis == "fit");
  CHECK(c.oversubscription[0].basis == "windows");
  // A longer pass that burned less (a noisy host) fits nothing: the windowed means stand.
  for (json& r : out["rows"])
    if (r.value("pass_samples", 0) == 3072) r["worker_life_cpu_s"] = 4.0;
  CHECK(calibration_from_driver(out, "test").oversubscription[1].worker_cpu_per_sample_us.value == Approx(76.0));
}

TEST_CASE("calibration oversubscription: edited points are refused naming the point", "[calibrate]") {
  const json good = calibration_to_json(calibration_from_driver(crowded_output(), "test"));
  json j = good;
  j["figures"]["oversubscription"]["points"][1]["workers_per_cpu"] = 2.0;  // not above the one before
  j["figures"]["oversubscription"]["points"][1]["num_workers"] = 4;
  CHECK_THAT(refusal(j), Catch::Contains("cal.json: figures.oversubscription.points[1]: workers_per_cpu 2") &&
                             Catch::Contains("not above 2"));
  j = good;
  j["figures"]["oversubscription"]["points"][0]["workers_per_cpu"] = 1.0;  // the base figures' level
  j["figures"]["oversubscription"]["points"][0]["num_workers"] = 2;
  CHECK_THAT(refusal(j), Catch::Contains("points[0]: workers_per_cpu 1"));
  j = good;
  j["figures"]["oversubscription"]["points"][1]["workers_per_cpu"] = 3.0;  // not num_workers 8 / cpus 2
  CHECK_THAT(refusal(j), Catch::Contains("points[1]: workers_per_cpu 3 is not num_workers 8 / cpus 2 = 4"));
  j = good;
  j["figures"]["oversubscription"]["points"][0]["cpus"] = 0;
  CHECK_THAT(refusal(j), Catch::Contains("points[0]: num_workers 4 on 0 CPUs: both must be 1 or more"));
  j = good;
  j["figures"]["oversubscription"]["measured"] = false;  // points kept: not dropped silently
  CHECK_THAT(refusal(j), Catch::Contains("'measured' is false, yet it holds 2 point(s)"));
  j = good;
  j["figures"]["oversubscription"] = nullptr;
  CHECK_THAT(refusal(j), Catch::Contains("figures.oversubscription is null, not an object"));
  // Counts must be whole numbers in range (no silent truncation, no overflowing cast).
  j = good;
  j["figures"]["oversubscription"]["points"][1]["num_workers"] = 8.9;
  CHECK_THAT(refusal(j), Catch::Contains("points[1]: 'num_workers' is 8.9, not a whole number from 0 to"));
  j = good;
  j["figures"]["oversubscription"]["points"][0]["cpus"] = 1e10;
  CHECK_THAT(refusal(j), Catch::Contains("points[0]: 'cpus' is 10000000000.0, not a whole number"));
  j = good;
  j["figures"]["oversubscription"]["measured"] = "yes";
  CHECK_THAT(refusal(j), Catch::Contains("figures.oversubscription: 'measured' is \"yes\", not true or false"));
  j = good;
  j["figures"]["oversubscription"]["points"][0]["basis"] = "bogus";
  CHECK_THAT(refusal(j), Catch::Contains("points[0]: 'basis' is 'bogus', not fit, floor or windows"));
  j = good;
  j["figures"]["oversubscription"]["points"][0]["loop_per_sample_us"] = 400.0;
  CHECK_THAT(refusal(j), Catch::Contains("points[0]: loop 400") && Catch::Contains("is not the worker's total"));
  j = good;
  j["figures"]["oversubscription"]["points"][0]["worker_startup_cpu_s"]["min"] = 5.0;
  CHECK_THAT(refusal(j), Catch::Contains("cal.json: figures.oversubscription.points[0].worker_startup_cpu_s: min 5"));
  j = good;
  // Figures the loader would burn for ever: beyond a minute per sample or an hour per start.
  j["figures"]["oversubscription"]["points"][1]["worker_startup_cpu_s"] = {{"value", 1e9}, {"min", 1e9}, {"max", 1e9}};
  CHECK_THAT(refusal(j), Catch::Contains("points[1]: ") && Catch::Contains("beyond any DataLoader's"));
  j = good;
  j["figures"]["worker_cpu_per_sample_us"] = {{"value", 1e300}, {"min", 1e300}, {"max", 1e300}};
  j["figures"]["worker_cpu_split"] = {{"measured", false}};
  CHECK_THAT(refusal(j), Catch::Contains("figures.worker_cpu_per_sample_us 1e+300 µs is beyond any DataLoader's"));
  j = good;
  j["figures"]["startup_cpu"]["worker_s"] = {{"value", 1e9}, {"min", 1e9}, {"max", 1e9}};
  CHECK_THAT(refusal(j), Catch::Contains("figures.startup_cpu: 1e+09 s of start-up CPU is beyond"));
  j = good;
  j["figures"]["oversubscription"]["points"] = json::array();
  CHECK_THAT(refusal(j), Catch::Contains("measured, but no points"));
  j["figures"]["oversubscription"]["points"] = "none";
  CHECK_THAT(refusal(j), Catch::Contains("'points' is \"none\", not a list"));
}

TEST_CASE("calibration document round trip", "[calibrate]") {
  const Calibration c = sample_calibration();
  const json j = calibration_to_json(c);
  CHECK(j["schema"] == "ioprobe.calibration/1");
  const Calibration back = calibration_from_json(j, "cal.json");
  CHECK(back.code_file == c.code_file);
  CHECK(back.function == "make_dataset");
  CHECK(back.batch_size == 64);
  CHECK(back.main_cpu_per_batch_us.value == Approx(c.main_cpu_per_batch_us.value));
  CHECK(back.pin_cpu_per_batch_us.max == Approx(300));
  CHECK(back.rows.size() == 6);
  CHECK(back.dataset_kind == "map-style");
  CHECK(calibration_to_json(back) == j);
}

TEST_CASE("a calibration says which kind of Dataset it measured; older documents were map-style", "[calibrate]") {
  Calibration c = sample_calibration();
  c.dataset_kind = "iterable";
  json j = calibration_to_json(c);
  CHECK(j["code"]["dataset"] == "iterable");
  CHECK(calibration_from_json(j, "cal.json").dataset_kind == "iterable");
  j["code"].erase("dataset");
  CHECK(calibration_from_json(j, "cal.json").dataset_kind == "map-style");
  j["code"]["dataset"] = "generator";
  CHECK_THROWS_WITH(calibration_from_json(j, "cal.json"),
                    Catch::Contains(
                        "cal.json: code.dataset 'generator' is not 'map-style', 'iterable' or 'thread-pipeline'"));
  j["code"]["dataset"] = 3;
  CHECK_THROWS_WITH(calibration_from_json(j, "cal.json"), Catch::Contains("dataset"));
}

TEST_CASE("an IterableDataset's calibration keeps the samples its files held", "[calibrate]") {
  json out = driver_output();
  out["dataset_kind"] = "iterable";
  for (json& r : out["rows"]) r["dataset_samples"] = 4096;
  const Calibration c = calibration_from_driver(out, "drv");
  CHECK(c.dataset_kind == "iterable");
  CHECK(c.dataset_samples == 4096);
  const json j = calibration_to_json(c);
  CHECK(j["data"]["samples"] == 4096);
  CHECK(calibration_from_json(j, "cal.json").dataset_samples == 4096);
  // A map-style Dataset's files are its samples: no count of their own.
  CHECK_FALSE(calibration_to_json(sample_calibration())["data"].contains("samples"));
  out["rows"][0].erase("dataset_samples");
  CHECK_THROWS(calibration_from_driver(out, "drv"));
}

TEST_CASE("bad calibration documents are refused naming the file and the field", "[calibrate]") {
  const json good = calibration_to_json(sample_calibration());
  json j = good;
  j["kind"] = "run";
  CHECK_THAT(refusal(j), Catch::Contains("cal.json: not a calibration document"));
  CHECK_THAT(refusal(json::array()), Catch::Contains("not a calibration document"));
  j = good;
  j["schema_version"] = 2;
  CHECK_THAT(refusal(j), Catch::Contains("schema_version 2"));
  // The "schema" identifier is checked as a result document's is: missing, not a string, another
  // version's, another document's; each names the file and the field.
  j = good;
  j.erase("schema");
  CHECK_THAT(refusal(j), Catch::Contains("cal.json: field \"schema\" is missing"));
  j = good;
  j["schema"] = 1;
  CHECK_THAT(refusal(j), Catch::Contains("cal.json: field \"schema\" is 1"));
  j = good;
  j["schema"] = "ioprobe.calibration/2";
  CHECK_THAT(refusal(j), Catch::Contains("cal.json: field \"schema\" is \"ioprobe.calibration/2\"") &&
                             Catch::Contains("another ioprobe version"));
  j = good;
  j["schema"] = "ioprobe.result/1";
  CHECK_THAT(refusal(j), Catch::Contains("cal.json: field \"schema\" is \"ioprobe.result/1\"") &&
                             Catch::Contains("not a calibration document"));
  j = good;
  j["figures"].erase("main_cpu_per_batch_us");
  CHECK_THAT(refusal(j), Catch::Contains("missing field 'main_cpu_per_batch_us'"));
  j = good;
  j["figures"]["worker_cpu_per_sample_us"]["value"] = -3;
  CHECK_THAT(refusal(j), Catch::Contains("'value' is -3"));
  j = good;
  j["figures"]["worker_cpu_per_sample_us"]["min"] = 100;  // above the value 56
  CHECK_THAT(refusal(j), Catch::Contains("does not hold"));
  j = good;
  // A nested figure is named by its whole path in the document.
  j["figures"]["startup_cpu"] = {{"measured", true},
                                 {"worker_s", {{"value", 1.0}, {"min", 2.0}, {"max", 3.0}}},
                                 {"main_s", {{"value", 0.1}, {"min", 0.1}, {"max", 0.1}}}};
  CHECK_THAT(refusal(j), Catch::Contains("cal.json: figures.startup_cpu.worker_s: min 2"));
  j = good;
  j["batch_size"] = 0;
  CHECK_THAT(refusal(j), Catch::Contains("batch_size 0"));
  // A batch size beyond 32 bits is refused, not wrapped (2^32 + 64 would read as 64).
  j["batch_size"] = 4294967360.0;
  CHECK_THAT(refusal(j), Catch::Contains("batch_size 4294967360 is not a whole number from 1 to 1,000,000"));
  j = good;
  j["figures"]["bytes_per_batch"]["max"] = "big";
  CHECK_THAT(refusal(j), Catch::Contains("not a finite number"));
  j = good;
  j["code"].erase("file");
  CHECK_THAT(refusal(j), Catch::Contains("missing field 'file'"));
  // A section of another type is named as such, not as a missing field inside it.
  j = good;
  j["figures"]["own_read"] = "fast";
  CHECK_THAT(refusal(j),
             Catch::Contains("cal.json: figures.own_read is \"fast\", not an object with a field 'measured'"));
  j = good;
  j["code"] = 7;
  CHECK_THAT(refusal(j), Catch::Contains("cal.json: code is 7, not an object"));
}

TEST_CASE("load_calibration refuses unreadable and non-JSON files", "[calibrate]") {
  TempDir d("cal");
  CHECK_THROWS_WITH(load_calibration(d.path + "/none.json"), Catch::Contains("none.json: cannot read it"));
  std::ofstream(d.path + "/x.json") << "{not json";
  CHECK_THROWS_WITH(load_calibration(d.path + "/x.json"), Catch::Contains("x.json: not valid JSON"));
  CHECK_THROWS_WITH(load_calibration(d.path), Catch::Contains(": is a directory"));
  // A device would be read without end (/dev/zero filled the memory), a FIFO waits for a writer.
  CHECK_THROWS_WITH(load_calibration("/dev/zero"), Catch::Contains("/dev/zero: not a regular file"));
  REQUIRE(mkfifo((d.path + "/fifo.json").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(load_calibration(d.path + "/fifo.json"), Catch::Contains("fifo.json: not a regular file"));
  // A file far larger than any calibration document is refused before it is read (sparse: no space used).
  {
    std::ofstream big(d.path + "/big.json");
    big.seekp((int64_t{64} << 20) + 1);
    big << ' ';
  }
  CHECK_THROWS_WITH(load_calibration(d.path + "/big.json"),
                    Catch::Contains("big.json: 67108866 B is far larger than a calibration document"));
  std::ofstream(d.path + "/ok.json") << calibration_to_json(sample_calibration()).dump();
  CHECK(load_calibration(d.path + "/ok.json").function == "make_dataset");
}

namespace {

// An executable script standing in for the user's python.
std::string fake_python(const TempDir& d, const std::string& name, const std::string& body) {
  const std::string path = d.path + "/" + name;
  std::ofstream(path) << body;
  chmod(path.c_str(), 0755);
  return path;
}

}  // namespace

TEST_CASE("a python that fails without a word, or dies by a signal, is named with its status and what to do",
          "[calibrate][driver]") {
  // `calibrate --python /bin/false` said "see its messages above" with nothing above.
  TempDir d("caldriver");
  const DriverRun f = run_driver("/bin/false", "/x/ioprobe_calibrate.py", {"--factory", "f.py"});
  CHECK(f.exit_code == 1);
  CHECK(f.signal == 0);
  CHECK(f.silent());
  CHECK(driver_failure_is_usage(f));
  CHECK_THAT(driver_failure_text("/bin/false", "/x/ioprobe_calibrate.py", f),
             Catch::Contains("/bin/false exited with status 1 and printed nothing") &&
                 Catch::Contains("check that /bin/false is a Python 3 with PyTorch"));

  // Exit 3 is the driver's "no torch" only when it says so; silent, it is this failure too.
  const DriverRun three = run_driver(fake_python(d, "three", "#!/bin/sh\nexit 3\n"), "drv.py", {});
  CHECK(three.exit_code == 3);
  CHECK(three.silent());
  CHECK_THAT(driver_failure_text("three", "drv.py", three),
             Catch::Contains("exited with status 3 and printed nothing"));
  const DriverRun told = run_driver(fake_python(d, "told", "#!/bin/sh\necho 'no torch here' >&2\nexit 3\n"), "drv.py",
                                    {});
  CHECK(told.exit_code == 3);
  CHECK(told.err_bytes == 14);  // passed through to ioprobe's stderr, and counted
  CHECK_FALSE(told.silent());
  CHECK_FALSE(driver_failure_is_usage(told));
  CHECK_THAT(driver_failure_text("told", "drv.py", told), Catch::Contains("see its messages above"));

  // Killed by a signal: its number and name, not "exit 137"; SIGKILL points at the OOM killer.
  const DriverRun killed = run_driver(fake_python(d, "killed", "#!/bin/sh\nkill -KILL $$\n"), "drv.py", {});
  CHECK(killed.signal == SIGKILL);
  CHECK(killed.exit_code == 128 + SIGKILL);
  CHECK_FALSE(driver_failure_is_usage(killed));
  CHECK_THAT(driver_failure_text("killed", "drv.py", killed),
             Catch::Contains("killed by signal 9 (SIGKILL) before printing anything") && Catch::Contains("dmesg"));
  const DriverRun sigint = run_driver(fake_python(d, "sigint",
                                                  "#!/usr/bin/python3\nimport os, signal\n"
                                                  "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
                                                  "os.kill(os.getpid(), signal.SIGINT)\n"),
                                      "drv.py", {});
  CHECK(sigint.signal == SIGINT);
  CHECK_FALSE(sigint.forwarded);  // ioprobe itself was not interrupted: a failure of the driver, named
  CHECK_THAT(driver_failure_text("sigint", "drv.py", sigint),
             Catch::Contains("killed by signal 2 (SIGINT)") && Catch::Contains("Python 3 with PyTorch"));

  // What it printed on stdout is collected (the JSON result), and exit 0 is no failure.
  const DriverRun ok = run_driver(fake_python(d, "ok", "#!/bin/sh\necho '{\"rows\": []}'\n"), "drv.py", {});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "{\"rows\": []}\n");
  CHECK(driver_failure_text("ok", "drv.py", ok).empty());
  CHECK_THROWS_WITH(run_driver(d.path + "/none", "drv.py", {}), Catch::Contains("cannot start"));
}

TEST_CASE("calibration: the batch's parts without tensor bytes, from the driver to the document and back",
          "[calibrate]") {
  json out = driver_output();
  out["no_tensor_bytes"] = json::array({{{"field", "batch['path']"}, {"holds", "list of 64 str"}}});
  const Calibration c = calibration_from_driver(out, "test");
  REQUIRE(c.no_tensor_bytes.size() == 1);
  CHECK(c.no_tensor_bytes[0].field == "batch['path']");
  CHECK(c.no_tensor_bytes[0].holds == "list of 64 str");
  const json j = calibration_to_json(c);
  CHECK(j["figures"]["no_tensor_bytes"][0]["holds"] == "list of 64 str");
  const Calibration back = calibration_from_json(j, "cal.json");
  REQUIRE(back.no_tensor_bytes.size() == 1);
  CHECK(back.no_tensor_bytes[0].field == "batch['path']");
  // A driver or document from before the parts were named: none, and every part was a tensor.
  CHECK(calibration_from_driver(driver_output(), "test").no_tensor_bytes.empty());
  json older = j;
  older["figures"].erase("no_tensor_bytes");
  CHECK(calibration_from_json(older, "cal.json").no_tensor_bytes.empty());
  json bad = j;
  bad["figures"]["no_tensor_bytes"] = "path";
  CHECK_THAT(refusal(bad), Catch::Contains("cal.json: figures.no_tensor_bytes is not a list"));
  bad["figures"]["no_tensor_bytes"] = json::array({{{"field", "batch['x']"}}});
  CHECK_THAT(refusal(bad), Catch::Contains("missing field 'holds'"));
}
