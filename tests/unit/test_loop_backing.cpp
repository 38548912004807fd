// A loop device's backing (topology/block_device.hpp loop_backing) on the recorded sysfs tree, and
// where its bytes came from: a loop device without direct I/O served by its backing file's page
// cache is not "device" (topology/device_io.hpp bytes_source, DeviceIo::backing).
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/device_accounting.hpp"
#include "report/device_io_report.hpp"
#include "sysfs_fixtures.hpp"
#include "temp_dir.hpp"
#include "topology/block_device.hpp"
#include "topology/device_io.hpp"
#include "topology/device_io_json.hpp"

using namespace ioprobe;

namespace {

// The fixture's backing file does not exist here: its st_dev as a stat of it on the recorded
// host would give (259:1, nvme0n1p1, a partition of nvme0n1).
std::optional<std::pair<unsigned, unsigned>> on_nvme0n1p1(const std::string& path) {
  CHECK(path == "/var/tmp/disk image.img");
  return std::make_pair(259U, 1U);
}

void write_diskstats(const std::string& dir, uint64_t loop_sectors, uint64_t vda_sectors) {
  std::ofstream out(dir + "/diskstats");
  REQUIRE(out);
  out << "7 0 loop0 100 0 " << loop_sectors << " 0 0 0 0 0 0 0 0\n"
      << "254 0 vda 50 0 " << vda_sectors << " 0 7 0 56 0 0 0 0\n";
}

// A loop0 target whose backing file is on vda, loop direct I/O as given.
TargetInfo loop_target(int dio) {
  TargetInfo t;
  t.fs_type = "ext4";
  t.device = "loop0";
  t.disk = "loop0";
  t.backing_file = "/var/tmp/img";
  t.backing_device = "vda";
  t.loop_direct_io = dio;
  return t;
}

// What the meter saw with loop0 reading `loop_mib` MiB and vda `vda_mib` MiB between two readings.
DeviceIo loop_delta(int dio, uint64_t loop_mib, uint64_t vda_mib) {
  TempDir dir("loopbacking");
  DeviceIoMeter m(accounting_devices(loop_target(dio)), dir.path);
  write_diskstats(dir.path, 1000, 5000);
  const DeviceIoSnapshot a = m.snapshot();
  write_diskstats(dir.path, 1000 + loop_mib * 2048, 5000 + vda_mib * 2048);
  const DeviceIoSnapshot b = m.snapshot();
  return m.delta(a, b);
}

constexpr uint64_t kMiB = 1 << 20;

}  // namespace

TEST_CASE("loop backing: the file, loop/dio and the partition holding the file", "[target][loop]") {
  const LoopBacking b = loop_backing("loop0", kTwoSocket, on_nvme0n1p1);
  CHECK(b.loop == "loop0");
  CHECK(b.backing_file == "/var/tmp/disk image.img");
  CHECK(b.direct_io == 0);
  CHECK(b.device == "nvme0n1p1");
  CHECK(b.disk == "nvme0n1");

  // A backing file that cannot be stat'ed (removed since): the loop device and its file, no device.
  const LoopBacking gone = loop_backing("loop0", kTwoSocket,
                                        [](const std::string&) -> std::optional<std::pair<unsigned, unsigned>> {
                                          return std::nullopt;
                                        });
  CHECK(gone.loop == "loop0");
  CHECK(gone.device.empty());
  CHECK(gone.disk.empty());

  // Not a loop device; a device sysfs does not list.
  CHECK(loop_backing("nvme0n1p1", kTwoSocket, on_nvme0n1p1).loop.empty());
  CHECK(loop_backing("loop9", kTwoSocket, on_nvme0n1p1).loop.empty());
}

TEST_CASE("loop accounting: the backing device is read beside the loop device, not added to it", "[device_io][loop]") {
  const DeviceIoPlan p = accounting_devices(loop_target(0));
  CHECK(p.devices == std::vector<std::string>{"loop0"});
  CHECK(p.backing_device == "vda");
  CHECK(p.backing_loop == "loop0");
  CHECK(p.loop_direct_io == 0);

  const DeviceIo io = loop_delta(0, 100, 0);
  CHECK(io.bytes_read == 100 * kMiB);  // the loop device's reads only
  REQUIRE(io.backing);
  CHECK(io.backing->device.name == "vda");
  CHECK(io.backing->device.bytes_read == 0);
  CHECK(io.backing->device.writes == 0);
  CHECK(io.backing->direct_io == 0);

  // Not a loop device: nothing beside it.
  TargetInfo plain = loop_target(0);
  plain.device = "vda";
  CHECK(accounting_devices(plain).backing_device.empty());
}

TEST_CASE("bytes_source: a buffered loop device served by its backing file's page cache is not 'device'",
          "[device_io][loop]") {
  // ext4 on loop0 without loop direct I/O, cold: loop0 read 1.04 x delivered while vda read 0 B.
  CHECK(bytes_source(loop_delta(0, 104, 0), 100 * kMiB) == kLoopBackingCache);
  // The disk under the file read the bytes: from the device.
  CHECK(bytes_source(loop_delta(0, 104, 102), 100 * kMiB) == "device");
  // Half of them: mixed.
  CHECK(bytes_source(loop_delta(0, 104, 50), 100 * kMiB) == "mixed");
  // Unknown loop/dio is taken as buffered, the kernel's default.
  CHECK(bytes_source(loop_delta(-1, 104, 0), 100 * kMiB) == kLoopBackingCache);
  // With direct I/O the loop device's reads are the file's reads on the disk: its own label.
  CHECK(bytes_source(loop_delta(1, 104, 0), 100 * kMiB) == "device");
  // The loop device itself read nothing: the filesystem's page cache, as before.
  CHECK(bytes_source(loop_delta(0, 0, 0), 100 * kMiB) == "page cache");

  // Other traffic on the backing device that could account for what it read: unknown.
  DeviceIo busy = loop_delta(0, 104, 102);
  busy.interval_s = 2;
  busy.backing->idle_bytes_per_s_before = 200e6;
  CHECK(bytes_source(busy, 100 * kMiB) == "unknown");
  // ... but a backing device that read nothing did not serve the bytes, whatever else it did.
  DeviceIo quiet = loop_delta(0, 104, 0);
  quiet.interval_s = 2;
  quiet.backing->idle_bytes_per_s_before = 200e6;
  CHECK(bytes_source(quiet, 100 * kMiB) == kLoopBackingCache);

  // A cold run so served is warned of, with what to do; a warm one is not, nor one the disk served.
  const auto w = cli::device_read_warnings(loop_delta(0, 104, 0), 100 * kMiB, true, loop_target(0), "the run");
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("loop0 reads its backing file /var/tmp/img through the page cache"));
  CHECK_THAT(w[0], Catch::Contains("vda under that file read only 0 B"));
  CHECK_THAT(w[0], Catch::Contains("losetup --direct-io=on /dev/loop0"));
  CHECK(cli::device_read_warnings(loop_delta(0, 104, 0), 100 * kMiB, false, loop_target(0), "the run").empty());
  CHECK(cli::device_read_warnings(loop_delta(0, 104, 102), 100 * kMiB, true, loop_target(0), "the run").empty());
}

TEST_CASE("loop backing: merged by device, kept through JSON, named in the device I/O line", "[device_io][loop]") {
  DeviceIo a = loop_delta(0, 10, 1);
  const DeviceIo b = loop_delta(0, 20, 2);
  a.merge(b);
  REQUIRE(a.backing);
  CHECK(a.backing->device.bytes_read == 3 * kMiB);
  CHECK(a.bytes_read == 30 * kMiB);

  DeviceIo other = loop_delta(0, 5, 5);
  other.backing->device.name = "sdb";
  a.merge(other);
  CHECK_FALSE(a.backing);  // two backing devices: no one to name

  const DeviceIo io = loop_delta(0, 104, 0);
  const nlohmann::json wire = io;
  const DeviceIo back = device_io_from_wire(wire, "device_io");
  REQUIRE(back.backing);
  CHECK(back.backing->device.name == "vda");
  CHECK(back.backing->direct_io == 0);
  CHECK(back.backing->backing_file == "/var/tmp/img");

  const nlohmann::json doc = device_io_json(io, DeviceRef::kRead, 100 * kMiB);
  CHECK(doc.at("bytes_source") == kLoopBackingCache);
  CHECK(doc.at("backing").at("direct_io") == false);
  const DeviceIo from_doc = device_io_from_json(doc);
  REQUIRE(from_doc.backing);
  CHECK(from_doc.backing->device.bytes_read == 0);
  const std::string line = device_io_summary(doc, "delivered");
  CHECK_THAT(line, Catch::Contains("bytes from: page cache of the loop device's backing file"));
  CHECK_THAT(line, Catch::Contains("under loop0: vda read 0 B"));
  CHECK_THAT(line, Catch::Contains("loop direct I/O off"));
}
