// A thread pipeline's calibration (python/ioprobe_threads.py's result): its figures from the
// driver, the document's round trip, and edited documents refused.
#include <catch2/catch.hpp>

#include "calibrate/calibration.hpp"
#include "core/error.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

json thread_driver_output() {
  json rows = json::array();
  for (int n : {1, 2, 4})
    rows.push_back({{"num_threads", n},
                    {"cpus", 2},
                    {"batches", 15},
                    {"samples", 1920},
                    {"pass_samples", 2048},
                    {"samples_per_batch", 128.0},
                    {"samples_per_s", n == 1 ? 2000.0 : 3000.0},
                    {"cpu_per_sample_us", n == 1 ? 480.0 : 500.0},
                    {"parallelism", n == 1 ? 0.96 : 1.5},
                    {"oversubscribed", n == 4},
                    {"pin_memory", false}});
  return {{"python", "/usr/bin/python3"},
          {"python_version", "3.11.2"},
          {"torch_version", "1.13.0a0"},
          {"cuda_available", false},
          {"collate", "the pipeline's own"},
          {"dataset_kind", "thread-pipeline"},
          {"files", 2048},
          {"data_bytes", 150000000},
          {"batch_size", 128},
          {"rows", rows},
          {"threads",
           {{"cpu_per_sample_us", {{"value", 493.3}, {"min", 480.0}, {"max", 500.0}}},
            {"gil_share", {{"value", 0.64}, {"min", 0.64}, {"max", 0.64}}},
            {"gil_measured", true},
            {"cpu_bound", false},
            {"gil_method", "1 / the speedup over 1 thread"}}},
          {"pin_method", "a thread pipeline's batches are not pinned by calibrate"}};
}

Calibration thread_calibration() {
  Calibration c = calibration_from_driver(thread_driver_output(), "driver");
  c.ioprobe_version = "0.1.0";
  c.created = "2026-12-07T22:00:00Z";
  c.code_file = "/x/pipe.py";
  c.function = "make_pipeline";
  c.data_dir = "/data";
  c.hostname = "h";
  c.kernel = "6.1";
  c.cpus_allowed = 2;
  return c;
}

}  // namespace

TEST_CASE("a thread pipeline's calibration: its CPU per sample and GIL share, no DataLoader figures",
          "[calibrate][threads]") {
  const Calibration c = thread_calibration();
  CHECK(c.thread_pipeline());
  CHECK(c.thread_cpu_per_sample_us.value == Approx(493.3));
  CHECK(c.thread_cpu_per_sample_us.min == Approx(480.0));
  CHECK(c.worker_cpu_per_sample_us.value == Approx(493.3));
  CHECK(c.thread_gil_measured);
  CHECK(c.thread_gil_share.value == Approx(0.64));
  CHECK_FALSE(c.thread_cpu_bound);
  CHECK(c.main_cpu_per_batch_us.value == 0);
  CHECK_FALSE(c.split_measured);
  CHECK_FALSE(c.pin_measured);
  CHECK(c.batch_size == 128);
  CHECK(c.dataset_samples == 0);  // one sample per file
  CHECK(c.rows.size() == 3);
}

TEST_CASE("a thread pipeline's calibration document: round trip, its figures required with its kind",
          "[calibrate][threads]") {
  const Calibration c = thread_calibration();
  json j = calibration_to_json(c);
  CHECK(j["code"]["dataset"] == "thread-pipeline");
  REQUIRE(j["figures"].contains("threads"));
  const Calibration back = calibration_from_json(j, "cal.json");
  CHECK(back.thread_pipeline());
  CHECK(back.thread_gil_share.value == Approx(0.64));
  CHECK(back.thread_cpu_per_sample_us.max == Approx(500.0));
  CHECK(back.thread_gil_method == "1 / the speedup over 1 thread");
  // A DataLoader's document has no thread section, and reads as before.
  Calibration loader = c;
  loader.dataset_kind = "map-style";
  CHECK_FALSE(calibration_to_json(loader)["figures"].contains("threads"));
  CHECK_FALSE(calibration_from_json(calibration_to_json(loader), "cal.json").thread_pipeline());
  // Edited or damaged: the section missing, a share above 1.
  json no_threads = j;
  no_threads["figures"].erase("threads");
  CHECK_THROWS_WITH(calibration_from_json(no_threads, "cal.json"), Catch::Contains("missing field 'threads'"));
  json above = j;
  above["figures"]["threads"]["gil_share"] = {{"value", 1.5}, {"min", 1.5}, {"max", 1.5}};
  CHECK_THROWS_WITH(calibration_from_json(above, "cal.json"), Catch::Contains("GIL share of 1.5"));
}

TEST_CASE("a thread pipeline's driver output without its figures is refused", "[calibrate][threads]") {
  json out = thread_driver_output();
  out.erase("threads");
  CHECK_THROWS_AS(calibration_from_driver(out, "driver"), Error);
  json none = thread_driver_output();
  none["rows"] = json::array();
  CHECK_THROWS_WITH(calibration_from_driver(none, "driver"), Catch::Contains("no pass of the thread pipeline"));
}
