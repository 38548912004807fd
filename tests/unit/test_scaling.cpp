#include <catch2/catch.hpp>

#include <cerrno>

#include "raw/raw_target.hpp"
#include "scaling/scaling.hpp"
#include "sysfs_fixtures.hpp"
#include "topology/block_device.hpp"
#include "topology/device_class.hpp"
#include "topology/target.hpp"

using namespace ioprobe;

namespace {

ScalingPoint point(const char* name, double bytes_per_s) {
  ScalingPoint p;
  p.name = name;
  p.bytes_per_s = bytes_per_s;
  p.iops = bytes_per_s / 131072;
  return p;
}
}  // namespace

TEST_CASE("scaling: RAID levels' read expectations", "[scaling]") {
  CHECK(raid_expectation("raid0", 2).factor == 1.0);
  CHECK(raid_expectation("raid10", 4).factor == 1.0);
  CHECK(raid_expectation("raid1", 2).factor == 1.0);
  CHECK(raid_expectation("raid5", 4).factor == Approx(0.75));
  CHECK(raid_expectation("raid6", 6).factor == Approx(4.0 / 6));
  CHECK(raid_expectation("single", 2).factor == Approx(0.5));
  CHECK(raid_expectation("linear", 3).factor == Approx(1.0 / 3));
  CHECK(raid_expectation("", 1).factor == 1.0);
  CHECK(raid_expectation("raid5", 2).factor == 0);  // not a valid raid5: no expectation claimed
  CHECK(raid_expectation("weird", 2).factor == 0);
  CHECK(raid_expectation("weird", 2).rule.find("weird") != std::string::npos);
}

TEST_CASE("scaling: efficiency is array over the sum of members", "[scaling]") {
  ScalingResult r;
  r.level = "raid0";
  r.members = {point("loop0", 400e6), point("loop1", 600e6)};
  r.array = point("array", 800e6);
  finish_scaling(r);
  CHECK(r.sum_bytes_per_s == Approx(1000e6));
  CHECK(r.efficiency == Approx(0.8));
  CHECK(r.expected_bytes_per_s == Approx(1000e6));

  SECTION("a member that failed: no efficiency is claimed") {
    r.members[1].error = "read at offset 0: Input/output error (EIO)";
    r.notes.clear();
    finish_scaling(r);
    CHECK(r.efficiency == 0);
    CHECK(r.expected_bytes_per_s == 0);
    CHECK(r.sum_bytes_per_s == Approx(400e6));
    REQUIRE(r.notes.size() == 1);
  }
  SECTION("above 1: a cache served reads, said so") {
    r.array = point("array", 5870e6);
    r.notes.clear();
    finish_scaling(r);
    CHECK(r.efficiency == Approx(5.87));
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("a cache served") != std::string::npos);
  }
  SECTION("raid5 expects (n-1)/n of the sum") {
    r.level = "raid5";
    r.members.push_back(point("loop2", 500e6));
    finish_scaling(r);
    CHECK(r.expected_bytes_per_s == Approx(1500e6 * 2 / 3));
  }
}

TEST_CASE("scaling: members of the target; no device is refused", "[scaling]") {
  TargetInfo t;
  t.path = "/mnt/r";
  t.raid_members = {"loop0", "loop1"};
  CHECK(scaling_members(t) == std::vector<std::string>{"loop0", "loop1"});
  TargetInfo one;
  one.device = "nvme0n1p1";
  CHECK(scaling_members(one) == std::vector<std::string>{"nvme0n1p1"});
  TargetInfo tmp;
  tmp.path = "/dev/shm";
  tmp.fs_type = "tmpfs";
  tmp.memory_backed = true;
  CHECK_THROWS_WITH(scaling_members(tmp), Catch::Contains("no block device") && Catch::Contains("/dev/shm"));
}

TEST_CASE("device class: PCIe payload ceilings per generation", "[scaling][target]") {
  CHECK(pcie_bytes_per_s(16, 4) == Approx(16e9 * 128 / 130 / 8 * 4));  // Gen4 x4: 7.88 GB/s
  CHECK(pcie_bytes_per_s(32, 16) == Approx(63.02e9).epsilon(0.001));   // Gen5 x16: 63 GB/s
  CHECK(pcie_bytes_per_s(2.5, 1) == Approx(250e6));                    // Gen1 8b/10b
  CHECK(pcie_bytes_per_s(7, 4) == 0);                                  // not a PCIe rate
  CHECK(pcie_bytes_per_s(16, 0) == 0);
}

TEST_CASE("device class: NVMe nominal speed from the fixture's PCIe link", "[scaling][target]") {
  NominalSpeed n = nominal_device_speed("nvme0n1", kTwoSocket);
  CHECK(n.device_class == "NVMe");
  CHECK(n.link.pci_address == "0000:81:00.0");
  CHECK(n.link.speed_gts == 16.0);
  CHECK(n.link.width == 4);
  CHECK(n.bytes_per_s == Approx(7.877e9).epsilon(0.001));
  CHECK(n.basis.find("nominal") != std::string::npos);
  NominalSpeed loop = nominal_device_speed("loop0", kTwoSocket);
  CHECK(loop.device_class == "loop device");
  CHECK(loop.bytes_per_s == 0);
  CHECK(nominal_device_speed("sdz", kTwoSocket).device_class == "unknown");
}

TEST_CASE("scaling: an md raid0 fixture gives its members, level and each member's nominal class", "[scaling]") {
  BlockDeviceInfo md = describe_block_device_named("md0", kTwoSocket);
  TargetInfo t;
  t.raid_kind = "md";
  t.raid_level = md.raid_level;
  t.raid_members = md.members;
  REQUIRE(t.raid_level == "raid0");
  const std::vector<std::string> members = scaling_members(t);
  REQUIRE(members == std::vector<std::string>{"loop0", "nvme0n1p1"});
  CHECK(raid_expectation(t.raid_level, members.size()).factor == 1.0);
  // A partition's nominal speed is its disk's interface.
  const std::string disk = describe_block_device_named("nvme0n1p1", kTwoSocket).disk;
  CHECK(disk == "nvme0n1");
  CHECK(nominal_device_speed(disk, kTwoSocket).device_class == "NVMe");
  CHECK(nominal_device_speed(describe_block_device_named("loop0", kTwoSocket).disk, kTwoSocket).device_class ==
        "loop device");
}

TEST_CASE("a block device refused to root is not blamed on permissions", "[scaling][raw]") {
  // `ioprobe scaling` as root on EPERM said "needs root or the disk group".
  const std::string root = device_open_hint("/dev/sdb", EPERM, 0);
  CHECK_THAT(root, Catch::Contains("although ioprobe runs as root") && Catch::Contains("device cgroup") &&
                       Catch::Contains("SELinux") && Catch::Contains("/dev/sdb"));
  CHECK_THAT(root, !Catch::Contains("disk group") && !Catch::Contains("run as root"));
  CHECK_THAT(device_open_hint("/dev/sdb", EACCES, 0), Catch::Contains("although ioprobe runs as root"));
  const std::string user = device_open_hint("/dev/sdb", EACCES, 1000);
  CHECK_THAT(user, Catch::Contains("run as root or as a member of its group") && Catch::Contains("ls -l /dev/sdb"));
  CHECK(device_open_hint("/dev/sdb", ENOENT, 0).empty());
}
