// ioprobe's own read of the calibration's files (cli/calibrate_read.hpp): the document keeps the
// per-engine figures, refuses edited ones, and the worker's loop burn leaves out the run's engine's.
#include <unistd.h>

#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "calibrate/calibration.hpp"
#include "cli/calibrate_read.hpp"
#include "core/error.hpp"
#include "dataset/record_layout.hpp"
#include "dataset/walker.hpp"
#include "loader/loader_run.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

Calibration with_own_read() {
  Calibration c;
  c.batch_size = 8;
  c.own_read_measured = true;
  c.own_read_io_uring_us = {42, 40, 45};
  c.own_read_psync_us = {22, 21, 23};
  return c;
}

}  // namespace

TEST_CASE("own read: the document keeps both engines' figures; older documents take nothing off", "[calibrate]") {
  json j = calibration_to_json(with_own_read());
  CHECK(j["figures"]["own_read"]["measured"] == true);
  const Calibration back = calibration_from_json(j, "cal.json");
  CHECK(back.own_read_measured);
  CHECK(back.own_read_io_uring_us.value == Approx(42));
  CHECK(back.own_read_psync_us.max == Approx(23));
  j["figures"].erase("own_read");
  const Calibration old = calibration_from_json(j, "cal.json");
  CHECK_FALSE(old.own_read_measured);
  CHECK(old.own_read_io_uring_us.value == 0);
  CHECK(old.own_read_psync_us.value == 0);
}

TEST_CASE("own read: an edited figure is refused naming the field", "[calibrate]") {
  json j = calibration_to_json(with_own_read());
  j["figures"]["own_read"]["psync_cpu_per_file_us"]["value"] = -1;
  CHECK_THROWS_WITH(calibration_from_json(j, "cal.json"),
                    Catch::Contains("cal.json") && Catch::Contains("figures.own_read.psync_cpu_per_file_us"));
  j = calibration_to_json(with_own_read());
  j["figures"]["own_read"]["io_uring_cpu_per_file_us"] = {{"value", 1e9}, {"min", 1e9}, {"max", 1e9}};
  CHECK_THROWS_WITH(calibration_from_json(j, "cal.json"), Catch::Contains("figures.own_read"));
  j = calibration_to_json(with_own_read());
  j["figures"]["own_read"]["measured"] = "yes";
  CHECK_THROWS_AS(calibration_from_json(j, "cal.json"), UsageError);
}

TEST_CASE("own read: the loop burn leaves out the run's engine's figure, never below 0, not for records", "[loader]") {
  LoaderConfig l;
  l.costs.worker.loop_us = 240;
  l.costs.own_read_io_uring_us = 42;
  l.costs.own_read_psync_us = 22;
  l.engine = EngineKind::kIoUring;
  CHECK(loop_burn_us(l, nullptr) == Approx(198));
  l.engine = EngineKind::kPsync;
  CHECK(loop_burn_us(l, nullptr) == Approx(218));
  l.costs.worker.loop_us = 10;  // a loop cheaper than the read (a hand-given cost, a noisy calibration)
  CHECK(loop_burn_us(l, nullptr) == 0);
  l.costs.worker.loop_us = 240;
  const RecordLayout files;  // one file per sample: the default kind
  CHECK(loop_burn_us(l, &files) == Approx(218));
  l.costs.own_read_psync_us = 0;  // no calibration figure: the whole cost
  CHECK(loop_burn_us(l, nullptr) == Approx(240));
}

TEST_CASE("own read: the driver's NUL-separated list is read back; an empty one is refused", "[calibrate]") {
  TempDir d("ownread");
  const std::string list = d.path + "/paths";
  {
    std::ofstream out(list, std::ios::binary);
    out << d.path << "/a" << '\0' << d.path << "/b c\n" << '\0';
  }
  const std::vector<std::string> paths = cli::read_driver_paths(list);
  REQUIRE(paths.size() == 2);
  CHECK(paths[1] == d.path + "/b c\n");  // a name with a space and a newline, byte for byte
  std::ofstream(list, std::ios::trunc).close();
  CHECK_THROWS_WITH(cli::read_driver_paths(list), Catch::Contains("names no file"));
  CHECK_THROWS_WITH(cli::read_driver_paths(d.path + "/missing"), Catch::Contains("cannot read"));
}

TEST_CASE("own read: measured over real files with both engines, per file", "[calibrate]") {
  TempDir d("ownread");
  std::vector<std::string> paths;
  for (int i = 0; i < 64; ++i) {
    paths.push_back(d.path + "/f" + std::to_string(i));
    std::ofstream(paths.back()) << std::string(64 << 10, 'x');
  }
  Calibration cal;
  std::vector<std::string> notes;
  cli::measure_own_read(paths, 16, cal, notes);
  CHECK(cal.own_read_measured);
  // psync works everywhere; io_uring may be disabled on this host (a note says so, zeros stay).
  CHECK(cal.own_read_psync_us.value > 0);
  CHECK(cal.own_read_psync_us.min <= cal.own_read_psync_us.value);
  CHECK(cal.own_read_psync_us.value <= cal.own_read_psync_us.max);
  CHECK((cal.own_read_io_uring_us.value > 0 || !notes.empty()));
  // A missing file is a failed read: that engine is not measured, and a note says so.
  paths.push_back(d.path + "/gone");
  Calibration bad;
  std::vector<std::string> bad_notes;
  cli::measure_own_read(paths, 16, bad, bad_notes);
  CHECK_FALSE(bad.own_read_measured);
  CHECK(bad_notes.size() == 2);
}
