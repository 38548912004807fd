// Device-level accounting (topology/device_io.hpp): the /proc/diskstats and /proc/self/mountstats
// parsers on recorded text, the choice of devices for a target, deltas and merge.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "temp_dir.hpp"
#include "topology/device_io.hpp"

using namespace ioprobe;

namespace {
const std::string kProc = std::string(IOPROBE_FIXTURES) + "/proc";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  REQUIRE(out);
  out << text;
}
}  // namespace

TEST_CASE("diskstats: a recorded 6.18 kernel's 17-field lines, sectors of 512 bytes", "[device_io]") {
  const auto m = parse_diskstats(slurp(kProc + "/diskstats-6.18"));
  REQUIRE(m.count("vda") == 1);
  CHECK(m.at("vda").reads == 2390781);
  CHECK(m.at("vda").bytes_read == 230463978ULL * 512);
  CHECK(m.at("vda").writes == 702606);
  CHECK(m.at("vda").bytes_written == 239179664ULL * 512);
  CHECK(m.at("loop0").bytes_read == 3557962ULL * 512);
  CHECK(m.at("loop3").reads == 0);
  CHECK(m.size() == 10);
}

TEST_CASE("diskstats: 11-field lines of older kernels; malformed and short lines skipped", "[device_io]") {
  const auto m = parse_diskstats(slurp(kProc + "/diskstats-4.x"));
  CHECK(m.count("nvme0n1p2") == 1);
  CHECK(m.at("nvme0n1p2").bytes_written == 12345576ULL * 512);
  CHECK(m.at("md127").reads == 5000);
  CHECK(m.count("sda") == 0);  // "three" is not a count
  CHECK(m.count("sdb") == 0);  // fewer than 10 fields
  CHECK(parse_diskstats("").empty());
}

TEST_CASE("mountstats: the server bytes and READ/WRITE ops of the NFS mount asked for", "[device_io]") {
  const std::string text = slurp(kProc + "/nfs/self/mountstats");
  // The mount point has a space, written \040 in mountstats.
  auto c = parse_mountstats(text, "/mnt/data sets");
  REQUIRE(c);
  CHECK(c->bytes_read == 1342177280ULL);  // serverreadbytes, not normalreadbytes (1 GiB)
  CHECK(c->bytes_written == 8192);
  CHECK(c->reads == 1280);
  CHECK(c->writes == 2);
  auto other = parse_mountstats(text, "/mnt/other");
  REQUIRE(other);
  CHECK(other->bytes_read == 555);
  CHECK(other->reads == 9);
  auto v3 = parse_mountstats(text, "/mnt/scratch");  // nfs (v3), no per-op section
  REQUIRE(v3);
  CHECK(v3->bytes_read == 50);
  CHECK(v3->reads == 0);
  CHECK_FALSE(parse_mountstats(text, "/proc"));  // not NFS
  CHECK_FALSE(parse_mountstats(text, "/mnt/data"));
}

TEST_CASE("accounting devices: RAM, NFS, FUSE, arrays, a partition", "[device_io]") {
  TargetInfo t;
  t.fs_type = "tmpfs";
  t.memory_backed = true;
  auto p = accounting_devices(t);
  CHECK(p.source == "none");
  CHECK(p.reason == "no block device: RAM (tmpfs)");

  t = {};
  t.fs_type = "nfs4";
  t.mount_fstype = "nfs4";
  t.network = true;
  t.mount_point = "/mnt/data";
  t.mount_source = "srv:/x";
  p = accounting_devices(t);
  CHECK(p.source == "nfs-mountstats");
  CHECK(p.mount_point == "/mnt/data");

  t = {};
  t.fs_type = "fuse.sshfs";
  t.mount_fstype = "fuse.sshfs";
  t.network = true;
  p = accounting_devices(t);
  CHECK(p.source == "none");
  CHECK(p.reason.find("not measurable: fuse.sshfs") == 0);

  t = {};
  t.fs_type = "btrfs";
  t.device = "loop3";
  t.raid_kind = "btrfs";
  t.raid_members = {"loop3", "loop4"};
  p = accounting_devices(t);
  CHECK(p.source == "diskstats");
  CHECK(p.devices == std::vector<std::string>{"loop3", "loop4"});

  t = {};
  t.fs_type = "ext4";
  t.device = "nvme0n1p2";
  t.disk = "nvme0n1";
  p = accounting_devices(t);
  CHECK(p.devices == std::vector<std::string>{"nvme0n1p2"});  // not the whole disk too
}

TEST_CASE("meter: delta over two diskstats readings, idle window rate, share unclear", "[device_io]") {
  TempDir dir("devio");
  DeviceIoPlan plan;
  plan.source = "diskstats";
  plan.devices = {"loop3", "loop4", "gone"};
  DeviceIoMeter m(plan, dir.path);
  write(dir.path + "/diskstats", "7 3 loop3 10 0 2048 0 1 0 8 0 0 0 0\n7 4 loop4 20 0 4096 0 0 0 0 0 0 0 0\n");
  DeviceIoSnapshot a = m.snapshot();
  REQUIRE(a.ok);
  CHECK(a.devices.size() == 2);
  write(dir.path + "/diskstats", "7 3 loop3 14 0 4096 0 3 0 24 0 0 0 0\n7 4 loop4 21 0 6144 0 0 0 0 0 0 0 0\n");
  DeviceIoSnapshot b = m.snapshot();
  b.ns = a.ns + 2000000000;  // 2 s later
  DeviceIo d = m.delta(a, b);
  CHECK(d.source == "diskstats");
  CHECK(d.bytes_read == (2048 + 2048) * 512ULL);
  CHECK(d.bytes_written == 16 * 512ULL);
  CHECK(d.reads == 5);
  CHECK(d.writes == 2);
  REQUIRE(d.devices.size() == 2);
  CHECK(d.devices[0].name == "loop3");
  CHECK(d.devices[0].bytes_read == 2048 * 512ULL);
  CHECK(d.devices[1].bytes_read == 2048 * 512ULL);
  CHECK(d.interval_s == Approx(2.0));
  CHECK_FALSE(d.share_unclear());  // no idle window measured

  // The idle window: unchanged counters, rate 0.
  m.measure_idle(0.05);
  DeviceIo d2 = m.delta(a, b);
  CHECK(d2.idle_window_s == Approx(0.05).margin(0.04));
  CHECK(d2.idle_bytes_per_s_before == 0);
  CHECK_FALSE(d2.share_unclear());
  d2.idle_bytes_per_s_before = 1e6;  // 2 MB expected from others against 2 MiB counted
  CHECK(d2.share_unclear());

  // Counters unreadable: "not measurable" with the reason.
  DeviceIoMeter bad(plan, dir.path + "/missing");
  DeviceIoSnapshot s = bad.snapshot();
  CHECK_FALSE(s.ok);
  DeviceIo n = bad.delta(s, s);
  CHECK(n.source == "none");
  CHECK(n.reason.find("/missing/diskstats") != std::string::npos);
}

TEST_CASE("meter: NFS mount from a recorded mountstats", "[device_io]") {
  DeviceIoPlan plan;
  plan.source = "nfs-mountstats";
  plan.mount_point = "/mnt/data sets";
  plan.mount_source = "fileserver:/export/imagenet";
  DeviceIoMeter m(plan, kProc + "/nfs");
  DeviceIoSnapshot a = m.snapshot();
  REQUIRE(a.ok);
  DeviceIoSnapshot zero = a;
  zero.devices.begin()->second = IoCounters{};
  DeviceIo d = m.delta(zero, a);
  CHECK(d.source == "nfs-mountstats");
  CHECK(d.bytes_read == 1342177280ULL);
  REQUIRE(d.devices.size() == 1);
  CHECK(d.devices[0].name == "fileserver:/export/imagenet");
}

TEST_CASE("DeviceIo merge sums devices by name, totals and idle rates; none adds nothing", "[device_io]") {
  DeviceIo a;
  a.source = "diskstats";
  a.devices = {{"loop1", 100, 10, 1, 1}, {"loop0", 50, 0, 1, 0}};
  a.bytes_read = 150;
  a.bytes_written = 10;
  a.reads = 2;
  a.writes = 1;
  a.interval_s = 2;
  a.idle_bytes_per_s_before = 5;
  DeviceIo b;
  b.source = "diskstats";
  b.devices = {{"loop1", 1000, 0, 3, 0}, {"nvme0n1", 7, 0, 1, 0}};
  b.bytes_read = 1007;
  b.reads = 4;
  b.interval_s = 3;
  b.idle_bytes_per_s_before = 1;
  DeviceIo none;
  none.reason = "no block device: RAM (tmpfs)";

  DeviceIo m;  // default: none, no reason
  m.hosts = 0;
  m.merge(a);
  m.merge(b);
  m.merge(none);
  CHECK(m.source == "diskstats");
  CHECK(m.reason.empty());
  CHECK(m.bytes_read == 1157);
  CHECK(m.bytes_written == 10);
  CHECK(m.reads == 6);
  CHECK(m.interval_s == 3);
  CHECK(m.idle_bytes_per_s_before == 6);
  CHECK(m.hosts == 3);
  REQUIRE(m.devices.size() == 3);
  CHECK(m.devices[0].name == "loop0");
  CHECK(m.devices[1].name == "loop1");
  CHECK(m.devices[1].bytes_read == 1100);
  CHECK(m.devices[2].name == "nvme0n1");

  DeviceIo n = none;
  n.merge(none);
  CHECK(n.source == "none");
  CHECK(n.reason == "no block device: RAM (tmpfs)");
}

TEST_CASE("hosts summed: equal kernel names on two hosts stay two devices, named by host", "[device_io]") {
  DeviceIo h1;
  h1.source = "diskstats";
  h1.devices = {{"vda", 100, 0, 1, 0}};
  h1.bytes_read = 100;
  h1.reads = 1;
  h1.backing = BackingIo{.loop = "loop0", .backing_file = "/img", .direct_io = 0, .device = {"vda", 7, 0, 1, 0}};
  DeviceIo h2 = h1;
  h2.devices = {{"vda", 300, 0, 3, 0}};
  h2.bytes_read = 300;
  h2.reads = 3;
  h2.backing.reset();
  SECTION("one host keeps its names") {
    const DeviceIo one = sum_hosts_device_io({{"h1", h1}});
    REQUIRE(one.devices.size() == 1);
    CHECK(one.devices[0].name == "vda");
    REQUIRE(one.backing);
    CHECK(one.backing->loop == "loop0");
  }
  SECTION("two hosts: HOST:NAME, counters apart, totals and hosts added") {
    const DeviceIo two = sum_hosts_device_io({{"h1", h1}, {"h2", h2}});
    REQUIRE(two.devices.size() == 2);
    CHECK(two.devices[0].name == "h1:vda");
    CHECK(two.devices[0].bytes_read == 100);
    CHECK(two.devices[1].name == "h2:vda");
    CHECK(two.devices[1].bytes_read == 300);
    CHECK(two.bytes_read == 400);
    CHECK(two.reads == 4);
    CHECK(two.hosts == 2);
  }
  SECTION("named_for_host names the backing loop device and its disk too") {
    const DeviceIo n = named_for_host(h1, "h1");
    REQUIRE(n.backing);
    CHECK(n.backing->loop == "h1:loop0");
    CHECK(n.backing->device.name == "h1:vda");
  }
  SECTION("no host: nothing measured, and why") {
    const DeviceIo none = sum_hosts_device_io({});
    CHECK_FALSE(none.measured());
    CHECK_FALSE(none.reason.empty());
  }
}

TEST_CASE("bytes_source: device, page cache, mixed, unknown", "[device_io]") {
  DeviceIo io;
  CHECK(bytes_source(io, 100) == "unknown");
  io.source = "diskstats";
  io.bytes_read = 95;
  CHECK(bytes_source(io, 100) == "device");
  io.bytes_read = 5;
  CHECK(bytes_source(io, 100) == "page cache");
  io.bytes_read = 50;
  CHECK(bytes_source(io, 100) == "mixed");
  CHECK(bytes_source(io, 0) == "unknown");
}

TEST_CASE("bytes_source: a device shared with other traffic is 'unknown', never 'device'", "[device_io]") {
  // A warm run over resident files while another process reads the same disk: the devices read
  // 2.6 x what the run delivered, all of it the other reader's.
  DeviceIo io;
  io.source = "diskstats";
  io.bytes_read = 260 << 20;
  io.interval_s = 2;
  io.idle_window_s = 0.5;
  io.idle_bytes_per_s_before = 130e6;  // the other reader, measured before the run
  REQUIRE(io.share_unclear());
  CHECK(bytes_source(io, 100 << 20) == "unknown");
  io.idle_bytes_per_s_before = 0;  // a quiet device: the ratio stands
  CHECK(bytes_source(io, 100 << 20) == "device");
}

TEST_CASE("bytes_source: a memory filesystem's bytes come from RAM, not 'unknown'", "[device_io]") {
  DeviceIo io;  // tmpfs: no block device, nothing measured
  CHECK(bytes_source(io, 100, "tmpfs") == "RAM (tmpfs)");
  CHECK(bytes_source(io, 100, "ramfs") == "RAM (ramfs)");
  CHECK(bytes_source(io, 100, "ext4") == "unknown");
}

TEST_CASE("bytes_source: one vocabulary, the schema's, and every value the code gives is in it", "[device_io]") {
  std::ifstream f(std::string(IOPROBE_SOURCE_WORKLOADS) + "/../reports/result.schema.json");
  REQUIRE(f);
  const nlohmann::json schema = nlohmann::json::parse(f);
  const auto names = schema.at("$defs").at("bytes_source").at("enum").get<std::vector<std::string>>();
  CHECK(names == bytes_source_names());
  // Every bytes_source and served_from in the schema refers to that one enum.
  size_t refs = 0;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& j) {
    if (j.is_object()) {
      for (const auto& [k, v] : j.items()) {
        if ((k == "bytes_source" || k == "served_from") && v.is_object() && !v.contains("enum") &&
            !v.contains("properties")) {
          CHECK(v.value("$ref", "") == "#/$defs/bytes_source");
          ++refs;
        }
        walk(v);
      }
    } else if (j.is_array()) {
      for (const auto& v : j) walk(v);
    }
  };
  walk(schema);
  CHECK(refs >= 3);
  for (const char* fs : {"tmpfs", "ramfs", "ext4", ""}) {
    for (uint64_t read : {0ull, 5ull, 50ull, 100ull}) {
      DeviceIo m;
      m.bytes_read = read;
      m.source = "diskstats";
      for (uint64_t delivered : {0ull, 100ull}) {
        const std::string got = bytes_source(m, delivered, fs);
        INFO(fs << " " << read << " " << delivered << " -> " << got);
        CHECK(std::find(names.begin(), names.end(), got) != names.end());
      }
    }
  }
}
