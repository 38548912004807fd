// The calibration document (calibrate/calibration.hpp): figures from the driver's output, the
// round trip, refusal of bad documents; and the model it feeds: the consumer's step of
// max(GPU step, main-process work), and the verdicts on main-process-, pin-, worker- and
// storage-bound runs.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <csignal>
#include <fstream>

#include "calibrate/calibration.hpp"
#include "calibrate/driver.hpp"
#include "core/error.hpp"
#include "dataset/walker.hpp"
#include "ingest/analysis.hpp"
#include "loader/consumer.hpp"
#include "loader/loader_run.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

json spread(double mean, double lo, double hi) {
  return {{"mean", mean}, {"p10", lo}, {"p50", mean}, {"p90", hi}, {"min", lo}, {"max", hi}, {"n", 15}};
}

// The shape python/ioprobe_calibrate.py prints (figures from a run on this host, rounded).
json driver_output() {
  json rows = json::array();
  rows.push_back({{"num_workers", 0},
                  {"pin_memory", false},
                  {"batches", 15},
                  {"samples", 960},
                  {"samples_per_s", 2638.9},
                  {"main_cpu_per_batch_us", 3184.0},
                  {"main_thread_cpu_per_batch_us", spread(2973, 2756, 3104)},
                  {"bytes_per_batch", spread(16384, 16384, 16384)},
                  {"inprocess_cpu_per_sample_us", 49.75}});
  rows.push_back({{"num_workers", 0},
                  {"pin_memory", true},
                  {"batches", 15},
                  {"samples", 960},
                  {"samples_per_s", 1695.6},
                  {"main_cpu_per_batch_us", 4576.5},
                  {"main_thread_cpu_per_batch_us", spread(4223, 2590, 4848)},
                  {"bytes_per_batch", spread(16384, 16384, 16384)},
                  {"inprocess_cpu_per_sample_us", 71.5},
                  {"pin_cpu_per_batch_us", spread(137.1, 50, 215.9)}});
  for (int w : {1, 2}) {
    rows.push_back({{"num_workers", w},
                    {"pin_memory", false},
                    {"batches", 15},
                    {"samples", 960},
                    {"samples_per_s", 6395.2},
                    {"main_cpu_per_batch_us", w == 1 ? 1573.5 : 1700.5},
                    {"main_thread_cpu_per_batch_us", spread(1152, 1000, w == 1 ? 1300 : 1500)},
                    {"bytes_per_batch", spread(16384, 16384, 16384)},
                    {"worker_cpu_per_sample_us", w == 1 ? 52.0 : 60.0},
                    {"worker_loop_cpu_per_sample_us", w == 1 ? 30.0 : 34.0},
                    {"worker_put_cpu_per_sample_us", w == 1 ? 22.0 : 26.0},
                    {"worker_startup_s", spread(w == 1 ? 0.777 : 0.9, w == 1 ? 0.777 : 0.85, w == 1 ? 0.777 : 0.95)},
                    {"worker_startup_cpu_s", spread(w == 1 ? 0.1 : 0.2, w == 1 ? 0.1 : 0.15, w == 1 ? 0.1 : 0.25)},
                    {"main_startup_cpu_s", w == 1 ? 0.01 : 0.03}});
    rows.push_back({{"num_workers", w},
                    {"pin_memory", true},
                    {"batches", 15},
                    {"samples", 960},
                    {"samples_per_s", 8013.6},
                    {"main_cpu_per_batch_us", 1519.1},
                    {"main_thread_cpu_per_batch_us", spread(979, 900, 1100)},
                    {"bytes_per_batch", spread(16384, 16384, 16384)},
                    {"worker_cpu_per_sample_us", 52.0},
                    {"worker_startup_s", spread(0.826, 0.826, 0.826)},
                    {"pin_cpu_per_batch_us", spread(w == 1 ? 118.4 : 130.0, 40, 300)}});
  }
  return {{"python", "/usr/bin/python3"},
          {"python_version", "3.11.2"},
          {"torch_version", "1.13.0a0"},
          {"cuda_available", false},
          {"pin_method", "copy into an mlock'ed buffer (torch without CUDA cannot pin memory)"},
          {"collate", "torch default_collate"},
          {"files", 1024},
          {"data_bytes", 3498712},
          {"batch_size", 64},
          {"rows", rows}};
}

Calibration sample_calibration() {
  Calibration c = calibration_from_driver(driver_output(), "test");
  c.ioprobe_version = "0.1.0";
  c.created = "2026-12-01T23:00:00Z";
  c.command = {"ioprobe", "calibrate"};
  c.code_file = "/home/u/train.py";
  c.function = "make_dataset";
  c.data_dir = "/data/train";
  c.hostname = "h";
  c.kernel = "6.1";
  c.cpus_allowed = 2;
  return c;
}

std::string refusal(json j) {
  try {
    calibration_from_json(j, "cal.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

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
  CHECK(c.worker_startup_cpu_s.value == Approx(0.15));
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
  CHECK(back.worker_startup_cpu_s.value == Approx(0.15));
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
  CHECK(calibration_to_json(back) == j);
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

TEST_CASE("consumer: a step takes max(GPU step, main-process work)", "[calibrate][consumer]") {
  LoaderConfig cfg;
  cfg.batch_size = 10;
  cfg.step_time_s = 0.02;
  cfg.main_cpu_per_batch_us = 0;
  CHECK(make_consumer(LoaderConfig{}) == nullptr);  // neither: the loop takes the next batch at once
  const auto never = [] { return false; };
  for (double main_us : {20000.0, 40000.0}) {
    cfg.main_cpu_per_batch_us = main_us;
    RankStats s;
    Batch full;
    full.samples = 10;
    make_consumer(cfg)->step(full, s, never);
    CHECK(s.main_cpu_ns >= static_cast<int64_t>(main_us * 1000));
    CHECK(s.compute_ns >= 20000000);
    // Not the sum: the main process's work runs beside the GPU step. (Against the sum, not the
    // max plus a margin: on a loaded host the sleep and the burn each overrun by whole time slices,
    // while a serial step would take at least 20 ms more than the burn.)
    CHECK(s.compute_ns < 20000000 + s.main_busy_ns);
    CHECK(s.nominal_compute_ns == 20000000);
  }
  RankStats half;  // a partial batch takes its share of both
  cfg.main_cpu_per_batch_us = 10000;
  Batch part;
  part.samples = 5;
  make_consumer(cfg)->step(part, half, never);
  CHECK(half.main_cpu_ns >= 5000000);
  CHECK(half.main_cpu_ns < 10000000);
  CHECK(half.nominal_compute_ns == 10000000);
}

namespace {

struct ModelRun {
  LoaderResult result;
  IngestResult ingest;
};

// One run of the loader on 256 small files with `tweak` applied, judged for one GPU that wants
// far more than any loader gives (so the loader sets the pace) on a host of 8 allowed CPUs.
template <class F>
ModelRun model_run(F tweak) {
  TempDir d("model");
  for (int i = 0; i < 256; ++i) std::ofstream(d.path + "/f" + std::to_string(i)) << std::string(200, 'x');
  const FileIndex index = walk_tree(d.path, false).index;
  LoaderConfig c;
  c.num_workers = 1;
  c.batch_size = 8;
  c.engine = "psync";
  c.direct = false;
  tweak(c);
  ModelRun m;
  m.result = run_loader(index, c);
  Demand dem;
  dem.accelerator_name = "test GPU";
  dem.samples_per_s_per_gpu = 1e9;
  AnalysisInputs in;
  in.cpus_allowed = 8;
  in.num_workers_total = c.num_workers;
  in.cpu_per_sample_us = c.cpu_per_sample_us;
  in.main_cpu_per_batch_us = c.main_cpu_per_batch_us;
  in.batch_size = c.batch_size;
  m.ingest = analyze_ingest(m.result, dem, in);
  return m;
}

}  // namespace

TEST_CASE("model: a costly main process burns its CPU per batch and caps the rank", "[calibrate][model]") {
  // The verdict and the busy share are checked on a recorded shape below ("... the main process
  // busy 90% of the time"): live, the share depends on how often this host's other processes
  // take the worker's CPU (it measured 57-80% at load 15 on 2 CPUs, 95% on a quiet host).
  const ModelRun m = model_run([](LoaderConfig& c) { c.main_cpu_per_batch_us = 2000; });
  CHECK(m.ingest.main_busy_fraction > 0);
  // 8 samples per 2 ms of main-process CPU: at most 4,000 samples/s per rank (less when the
  // thread waits for a CPU).
  CHECK(m.ingest.main_ceiling_samples_per_s <= 4000 * 1.01);
  CHECK(m.ingest.main_ceiling_samples_per_s > 0);
  CHECK(m.result.ranks.at(0).main_cpu_ns >= 32 * 2000000LL);
}

TEST_CASE("model: the calibration's worker cost is burned per sample, no main-process stage without one",
          "[calibrate][model]") {
  // The worker-bound verdict itself is checked on a recorded shape below: on a host whose CPUs
  // other processes share, the workers' wall time (and so the verdict) depends on that load.
  const ModelRun m = model_run([](LoaderConfig& c) { c.cpu_per_sample_us = 200; });
  CHECK(m.result.workers.at(0).cpu_work_ns >= 256 * 200000LL);
  CHECK(m.ingest.worker_cpu_fraction > 0);
  CHECK(m.ingest.main_ceiling_samples_per_s == 0);  // no main-process stage modelled
  CHECK(m.ingest.pin_ceiling_samples_per_s == 0);
}

TEST_CASE("model: each worker burns the start-up CPU once per epoch before its first sample, the main process its own",
          "[calibrate][model]") {
  // 256 files in batches of 8 over 2 workers and 2 epochs: a real DataLoader forks its workers
  // at each epoch's iter(), so each worker pays its one-time CPU twice, whatever its batch count.
  const ModelRun m = model_run([](LoaderConfig& c) {
    c.num_workers = 2;
    c.epochs = 2;
    c.worker_startup_cpu_us = 50000;
    c.main_startup_cpu_us = 20000;
  });
  REQUIRE(m.result.samples == 512);
  REQUIRE(m.result.workers.size() == 2);
  for (const WorkerStats& w : m.result.workers) {
    CHECK(w.cpu_work_ns >= 2 * 50000000LL);
    CHECK(w.cpu_work_ns < 3 * 50000000LL);  // once per epoch, not per batch (32 batches each)
  }
  CHECK(m.result.ranks.at(0).main_cpu_ns >= 2 * 20000000LL);
  const ModelRun none = model_run([](LoaderConfig& c) { c.num_workers = 2; });
  for (const WorkerStats& w : none.result.workers) CHECK(w.cpu_work_ns < 10000000LL);
}

TEST_CASE("model: the put part is burned by a feeder thread per worker, the loop part by the worker",
          "[calibrate][model]") {
  // 256 samples, one worker: loop 100 µs and put 200 µs per sample. The worker thread's CPU in the
  // emulated work is the loop part alone (CPU clocks, not wall time); the feeder thread burned the
  // put for every sample delivered.
  const ModelRun m = model_run([](LoaderConfig& c) {
    c.cpu_per_sample_us = 100;
    c.worker_put_cpu_per_sample_us = 200;
  });
  REQUIRE(m.result.samples == 256);
  REQUIRE(m.result.workers.size() == 1);
  const WorkerStats& w = m.result.workers.at(0);
  CHECK(w.cpu_work_ns >= 256 * 100000LL);
  CHECK(w.cpu_work_ns < 256 * 200000LL);  // the put is not on the worker's thread
  CHECK(w.put_cpu_ns >= 256 * 200000LL);
  CHECK(w.put_cpu_ns < 256 * 300000LL);
  // Without the figure no feeder thread burns anything.
  const ModelRun none = model_run([](LoaderConfig& c) { c.cpu_per_sample_us = 100; });
  CHECK(none.result.workers.at(0).put_cpu_ns == 0);
  CHECK(none.result.workers.at(0).other_cpu_ns == 0);
}

TEST_CASE("model: the worker's other-thread part is burned by its sharer in round trips with the main process",
          "[calibrate][model]") {
  // 256 samples, two workers, batches of 8: the main process's 800 µs per batch is cut into 4
  // pieces (4 tensors per batch), each followed by a round trip in which the batch's worker's
  // sharer thread burns a quarter of the batch's 150 µs x 8 samples. CPU clocks, not wall time.
  const ModelRun m = model_run([](LoaderConfig& c) {
    c.num_workers = 2;
    c.main_cpu_per_batch_us = 800;
    c.worker_other_cpu_per_sample_us = 150;
    c.tensors_per_batch = 4;
  });
  REQUIRE(m.result.samples == 256);
  int64_t other = 0;
  for (const WorkerStats& w : m.result.workers) {
    other += w.other_cpu_ns;
    CHECK(w.other_cpu_ns > 0);  // both workers' batches were received
    CHECK(w.put_cpu_ns == 0);   // no feeder figure: no feeder thread
  }
  CHECK(other >= 256 * 150000LL);
  CHECK(other < 256 * 250000LL);
  // The sharer's CPU is not the main process's: the rank burned its 800 µs per batch alone.
  const int64_t batches = 256 / 8;  // model_run: batches of 8
  CHECK(m.result.ranks.at(0).main_cpu_ns >= batches * 800000LL);
  CHECK(m.result.ranks.at(0).main_cpu_ns < batches * 800000LL + 256 * 100000LL);
  // Without main-process work the round trips still run (the consumer exists for them).
  const ModelRun alone = model_run([](LoaderConfig& c) { c.worker_other_cpu_per_sample_us = 100; });
  CHECK(alone.result.workers.at(0).other_cpu_ns >= 256 * 100000LL);
}

TEST_CASE("model: pin_memory copies each batch's bytes and can be the bottleneck", "[calibrate][model]") {
  const ModelRun m = model_run([](LoaderConfig& c) {
    c.pin_memory = true;
    c.pin_bytes_per_batch = 32 << 20;
  });
  REQUIRE(m.result.samples == 256);
  CHECK(m.result.ranks.at(0).pin_bytes == 32ULL * (32 << 20));  // 32 full batches
  CHECK(m.result.ranks.at(0).pin_busy_ns > 0);
  CHECK(m.ingest.pin_ceiling_samples_per_s > 0);
  // Whether the copy is the bottleneck depends on this host's memory bandwidth and load: the
  // verdict is checked on a recorded shape below ("... the pin thread busy 95%").
  // Without a fixed size the pin thread copies the bytes each batch read.
  const ModelRun read = model_run([](LoaderConfig& c) { c.pin_memory = true; });
  CHECK(read.result.ranks.at(0).pin_bytes == 256 * 200);
}

TEST_CASE("model: workers waiting on reads (no CPU work) give the storage verdict", "[calibrate][model]") {
  // A recorded shape: one rank, one worker busy 99% of 1 s, all of it in reads of 1 ms whose open
  // is a tenth; no per-sample CPU, no main-process stage; 10% AU.
  LoaderResult r;
  RankStats rk;
  rk.samples = r.samples = 1000;
  rk.elapsed_ns = r.elapsed_ns = 1000000000;
  rk.nominal_compute_ns = 100000000;
  r.ranks.push_back(rk);
  WorkerStats w;
  w.busy_ns = 990000000;
  r.workers.push_back(w);
  for (int i = 0; i < 1000; ++i) {
    r.file_latency.record(1000000);
    r.open_latency.record(100000);
  }
  r.cpu_user_s = 0.1;
  Demand dem;
  dem.samples_per_s_per_gpu = 10000;
  AnalysisInputs in;
  in.cpus_allowed = 8;
  const IngestResult ing = analyze_ingest(r, dem, in);
  CHECK(ing.verdict == "storage");
  CHECK(ing.worker_cpu_fraction == 0);
  // The same run with its workers' time spent on per-sample CPU work is worker-bound instead.
  r.workers[0].cpu_work_ns = 800000000;
  in.cpu_per_sample_us = 800;
  const IngestResult workers = analyze_ingest(r, dem, in);
  CHECK(workers.verdict == "workers");
  CHECK_THAT(workers.verdict_text, Catch::Contains("more num_workers"));
  CHECK(workers.worker_feeder_ceiling_samples_per_s == 0);  // no put modelled
  // With the fetch cheap (busy 40%) but the worker's queue feeder thread putting batches 90% of the
  // time, the feeder is named, with the rate it caps the workers at: 1000 samples / 0.9 s.
  {
    LoaderResult f = r;
    f.workers[0].busy_ns = 400000000;
    f.workers[0].cpu_work_ns = 300000000;
    f.workers[0].put_cpu_ns = 900000000;
    const IngestResult feed = analyze_ingest(f, dem, in);
    CHECK(feed.verdict == "workers");
    CHECK_THAT(feed.verdict_text, Catch::Contains("feeder"));
    CHECK(feed.worker_feeder_busy_fraction == Approx(0.9));
    CHECK(feed.worker_feeder_ceiling_samples_per_s == Approx(1000 / 0.9));
    f.workers[0].put_cpu_ns = 500000000;  // half the time: not the bound, the storage is
    CHECK(analyze_ingest(f, dem, in).verdict == "storage");
  }
  // And with the main process busy 90% of the time, the main process is named.
  r.ranks[0].main_busy_ns = 900000000;
  in.main_cpu_per_batch_us = 900;
  const IngestResult main = analyze_ingest(r, dem, in);
  CHECK(main.verdict == "main process");
  CHECK(main.main_busy_fraction >= kSerialStageBound);
  CHECK_THAT(main.verdict_text, Catch::Contains("caps a rank at 1111 samples/s"));
  CHECK(main.main_ceiling_samples_per_s == Approx(1000 / 0.9));
  // And with the pin thread busy 95% of the time instead, pin memory is named with its ceiling.
  r.ranks[0].main_busy_ns = 0;
  in.main_cpu_per_batch_us = 0;
  r.ranks[0].pin_busy_ns = 950000000;
  r.ranks[0].pin_bytes = 1000 * 200;
  const IngestResult pin = analyze_ingest(r, dem, in);
  CHECK(pin.verdict == "pin memory");
  CHECK(pin.pin_ceiling_samples_per_s == Approx(1000 / 0.95));
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
