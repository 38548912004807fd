// The run's verdict is labelled by where the bytes came from: a warm run on
// the page cache or a tmpfs run must not say "metadata-bound" / "storage [unknown]" as if a device were measured.
#include <catch2/catch.hpp>

#include "cli/device_accounting.hpp"
#include "topology/target.hpp"

using namespace ioprobe;

namespace {
nlohmann::json doc_with(const std::string& verdict) {
  nlohmann::json d;
  d["results"] = nlohmann::json::object();
  d["warnings"] = nlohmann::json::array();
  d["ingest"] = {{"verdict", verdict}, {"verdict_text", "metadata/open-bound: open+close take 70%"}};
  return d;
}
}  // namespace

TEST_CASE("verdict labels: page cache and tmpfs runs say where the bytes came from", "[device_io][ingest]") {
  LoaderResult lr;
  lr.samples = 100;
  lr.bytes = 100 << 20;
  TargetInfo t;
  t.fs_type = "ext4";
  DeviceIo cached;  // measured, but the device read almost nothing: the page cache served it
  cached.source = "diskstats";
  cached.bytes_read = 1 << 20;
  nlohmann::json d = doc_with("metadata");
  cli::add_run_device_io(d, lr, cached, {}, false, t);
  CHECK(d["ingest"]["bytes_source"] == "page cache");
  CHECK_THAT(d["ingest"]["verdict_text"].get<std::string>(),
             Catch::Contains("the bytes came from the page cache") && Catch::Contains("not of a storage device"));

  TargetInfo ram;
  ram.fs_type = "tmpfs";
  nlohmann::json s = doc_with("storage");
  cli::add_run_device_io(s, lr, DeviceIo{}, {}, false, ram);
  CHECK(s["ingest"]["bytes_source"] == "RAM (tmpfs)");
  CHECK_THAT(s["ingest"]["verdict_text"].get<std::string>(), Catch::Contains("came from RAM (tmpfs)"));

  // Read from the device: the verdict stands as it was.
  DeviceIo dev;
  dev.source = "diskstats";
  dev.bytes_read = lr.bytes;
  nlohmann::json v = doc_with("storage");
  cli::add_run_device_io(v, lr, dev, {}, true, t);
  CHECK(v["ingest"]["bytes_source"] == "device");
  CHECK(v["ingest"]["verdict_text"] == "metadata/open-bound: open+close take 70%");
}
