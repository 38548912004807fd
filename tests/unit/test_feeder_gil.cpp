// The feeder's GIL share: the calibration's figure (from the driver, round trip, older documents,
// refusal of edited ones) and the burn that holds the worker's lock for that share of its CPU
// (loader/worker_gil.hpp).
#include <catch2/catch.hpp>

#include "calibrate/calibration.hpp"
#include "calibration_fixture.hpp"
#include "core/clock.hpp"
#include "loader/worker_gil.hpp"

using namespace ioprobe;
using namespace ioprobe::test;

namespace {

json with_gil(json out) {
  out["feeder_gil"] = {{"value", 0.4}, {"min", 0.3}, {"max", 0.5}, {"cpu_us", 51000.0}, {"trials", 3}};
  out["feeder_gil_method"] = "batches pickled beside a thread running Python";
  return out;
}

}  // namespace

TEST_CASE("feeder GIL share: from the driver, round trip, and documents without it", "[calibrate][worker_gil]") {
  const Calibration c = calibration_from_driver(with_gil(driver_output()), "drv");
  CHECK(c.feeder_gil_measured);
  CHECK(c.feeder_gil_share.value == Approx(0.4));
  CHECK(c.feeder_gil_share.min == Approx(0.3));
  CHECK(c.feeder_gil_method == "batches pickled beside a thread running Python");
  json j = calibration_to_json(c);
  CHECK(j["figures"]["feeder_gil"]["share"]["max"] == Approx(0.5));
  const Calibration back = calibration_from_json(j, "cal.json");
  CHECK(back.feeder_gil_measured);
  CHECK(back.feeder_gil_share.value == Approx(0.4));
  // Written before it was measured: the whole put holds the lock, as the model had it.
  j["figures"].erase("feeder_gil");
  const Calibration old = calibration_from_json(j, "cal.json");
  CHECK_FALSE(old.feeder_gil_measured);
  CHECK(old.feeder_gil_share.value == 1.0);
  // A driver that could not measure it (one CPU) says why; the document keeps the reason.
  json one_cpu = driver_output();
  one_cpu["feeder_gil"] = nullptr;
  one_cpu["feeder_gil_method"] = "needs 2 CPUs";
  const Calibration n = calibration_from_driver(one_cpu, "drv");
  CHECK_FALSE(n.feeder_gil_measured);
  CHECK(n.feeder_gil_share.value == 1.0);
  CHECK(n.feeder_gil_method == "not measured: needs 2 CPUs");
  CHECK(calibration_from_json(calibration_to_json(n), "cal.json").feeder_gil_method == n.feeder_gil_method);
  // An older driver prints neither field.
  CHECK_FALSE(calibration_from_driver(driver_output(), "drv").feeder_gil_measured);
}

TEST_CASE("feeder GIL share: edited documents are refused naming the field", "[calibrate]") {
  json j = calibration_to_json(calibration_from_driver(with_gil(driver_output()), "drv"));
  json above = j;
  above["figures"]["feeder_gil"]["share"] = {{"value", 1.2}, {"min", 1.0}, {"max", 1.5}};
  CHECK_THAT(refusal(above), Catch::Contains("figures.feeder_gil") && Catch::Contains("above 1"));
  json text = j;
  text["figures"]["feeder_gil"]["share"] = "most";
  CHECK_THAT(refusal(text), Catch::Contains("figures.feeder_gil") && Catch::Contains("not an object"));
  json no_method = j;
  no_method["figures"]["feeder_gil"].erase("method");
  CHECK_THAT(refusal(no_method), Catch::Contains("figures.feeder_gil") && Catch::Contains("'method'"));
}

TEST_CASE("worker GIL: a burn holds the lock for its share of the CPU and burns the rest beside it", "[worker_gil]") {
  constexpr double kUs = 10000;  // 10 ms in turns of at most 0.2 ms
  auto turns_for = [&](double share) {
    WorkerGil gil(200);
    const int64_t c0 = thread_cpu_ns();
    gil.burn(kUs, {}, share);
    CHECK(static_cast<double>(thread_cpu_ns() - c0) / 1e3 >= kUs * 0.99);  // all of it burned either way
    return gil.turns();
  };
  CHECK(turns_for(0.0) == 0);  // none of it under the lock
  const uint64_t all = turns_for(1.0), half = turns_for(0.5);
  // 10 ms / 0.2 ms: 50 turns, a few fewer where the lock calls' CPU (counted in the turns) is
  // large, as under a sanitizer; never many more (the calls do not add turns beyond the CPU).
  CHECK(all >= 40);
  CHECK(all <= 60);
  CHECK(half >= 20);
  CHECK(half <= 31);
  CHECK(half < all);
  // Out-of-range shares are clamped.
  CHECK(turns_for(-1.0) == 0);
  CHECK(turns_for(7.0) >= 40);
}
