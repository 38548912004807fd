// Device accounting across hosts: one host's processes counted once (host_device_io), the hosts
// summed for the cluster (raw: cluster/raw_parts; checkpoint save: checkpoint/cluster_parts), the
// flag of a host whose cold read took nothing, or far less than it delivered, from its devices
// (cold_read_check, the host rows' cold_read_* fields, their text and the warnings naming the host).
#include <catch2/catch.hpp>

#include "cluster/gather.hpp"

#include "checkpoint/cluster_parts.hpp"
#include "cli/device_accounting.hpp"
#include "cluster/raw_parts.hpp"
#include "cluster/run_parts.hpp"
#include "report/checkpoint_cluster_json.hpp"
#include "report/cluster_json.hpp"
#include "report/device_io_report.hpp"
#include "report/raw_document.hpp"
#include "report/raw_report.hpp"

using namespace ioprobe;

namespace {

constexpr uint64_t MiB = 1ULL << 20;

DeviceIo disk(const std::string& dev, uint64_t read, uint64_t written = 0) {
  DeviceIo d;
  d.source = "diskstats";
  d.devices.push_back({dev, read, written, read / 4096, written / 4096});
  d.bytes_read = read;
  d.bytes_written = written;
  d.reads = read / 4096;
  d.writes = written / 4096;
  d.interval_s = 1;
  return d;
}

// A raw process part: `ios` reads of 4 KiB on host `host`, its host's devices as `io`.
cluster::RawProcessPart raw_part(int rank, int host, const std::string& name, uint64_t ios, const DeviceIo& io) {
  cluster::RawProcessPart p;
  p.rank = rank;
  p.host_index = host;
  p.hostname = name;
  p.filename = "/data/t.bin.rank" + std::to_string(rank);
  p.target = {{"fs_type", "ext4"}, {"device", "vda"}, {"memory_backed", false}};
  p.result.ios = ios;
  p.result.bytes = ios * 4096;
  p.result.elapsed_s = 1;
  for (uint64_t i = 0; i < ios; ++i) p.result.latency.record(10'000);
  p.device_io = io;
  return p;
}

// Whether one of `warnings` holds every one of `parts`.
bool has_warning(const std::vector<std::string>& warnings, std::initializer_list<std::string> parts) {
  for (const std::string& s : warnings) {
    bool all = true;
    for (const auto& p : parts) all = all && s.find(p) != std::string::npos;
    if (all) return true;
  }
  return false;
}

// A raw document of an O_DIRECT (`direct`) read across the hosts of `c`, before its device accounting.
RawDocument raw_cluster_doc(const cluster::ClusterRaw& c, bool direct) {
  RawDocument doc;
  doc.raw.rw = "randread";
  doc.raw.direct = direct;
  doc.raw.results.bytes = c.merged.bytes;
  add_raw_cluster(doc, c, "mpirun", static_cast<int>(c.hosts.size()), "one per process");
  return doc;
}

// Whether one of doc's warnings holds every one of `parts`.
bool has_warning(const nlohmann::json& doc, std::initializer_list<std::string> parts) {
  if (!doc.contains("warnings")) return false;
  for (const auto& w : doc["warnings"]) {
    const std::string s = w.get<std::string>();
    bool all = true;
    for (const auto& p : parts) all = all && s.find(p) != std::string::npos;
    if (all) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("host_device_io: a host's processes count once, by the widest window", "[device_io][hosts]") {
  // Each process measured from before the common start to its own end: the last one's window
  // holds every process's I/O, and its counters moved the most.
  const DeviceIo h = host_device_io({disk("loop5", 8 * MiB), disk("loop5", 12 * MiB), disk("loop5", 9 * MiB)});
  CHECK(h.bytes_read == 12 * MiB);
  CHECK(h.hosts == 1);
  // An unmeasured part is never preferred to a measured one; all unmeasured: the first.
  DeviceIo ram;
  ram.reason = "no block device: RAM (tmpfs)";
  CHECK(host_device_io({ram, disk("sda", 4096)}).bytes_read == 4096);
  CHECK(host_device_io({ram}).reason == "no block device: RAM (tmpfs)");
  CHECK_FALSE(host_device_io({}).measured());
  CHECK_FALSE(host_device_io({}).reason.empty());
}

TEST_CASE("cold_read_check: nothing at any size, far less from 16 MiB on", "[device_io][hosts]") {
  CHECK(cold_read_check(disk("sda", 0), 4096, true) == ColdRead::kNothing);
  CHECK(cold_read_check(disk("sda", 0), 4096, false) == ColdRead::kOk);  // warm: may come from the page cache
  CHECK(cold_read_check(disk("sda", 0), 0, true) == ColdRead::kOk);      // delivered nothing
  DeviceIo none;
  CHECK(cold_read_check(none, 64 * MiB, true) == ColdRead::kOk);  // not measured: no judgement
  CHECK(cold_read_check(disk("sda", 1 * MiB), 64 * MiB, true) == ColdRead::kFarLess);
  CHECK(cold_read_check(disk("sda", 31 * MiB), 64 * MiB, true) == ColdRead::kFarLess);
  CHECK(cold_read_check(disk("sda", 32 * MiB), 64 * MiB, true) == ColdRead::kOk);
  CHECK(cold_read_check(disk("sda", 1 * MiB), 8 * MiB, true) == ColdRead::kOk);  // small: readahead, metadata
  CHECK(cold_read_check(disk("sda", 65 * MiB), 64 * MiB, true) == ColdRead::kOk);
}

TEST_CASE("raw across hosts: each host's device I/O in its row, once per host, summed for the cluster",
          "[device_io][hosts][raw]") {
  // Two hosts x 2 processes; each host has its own loop device. h2's second process read the
  // host's devices over the wider window (it finished last there).
  std::vector<cluster::RawProcessPart> parts = {raw_part(0, 0, "h1", 1024, disk("loop5", 4 * MiB + 8192)),
                                                raw_part(1, 0, "h1", 1024, disk("loop5", 8 * MiB + 8192)),
                                                raw_part(2, 1, "h2", 1024, disk("loop6", 5 * MiB)),
                                                raw_part(3, 1, "h2", 1024, disk("loop6", 8 * MiB + 4096))};
  // The wire form keeps the accounting.
  const auto back = cluster::decode_gathered<cluster::RawProcessPart>(nlohmann::json(parts[3]).dump(), 3, "t");
  CHECK(back.device_io.bytes_read == 8 * MiB + 4096);
  CHECK(back.device_io.devices.at(0).name == "loop6");
  const cluster::ClusterRaw c = cluster::merge_raw_parts(parts, false);
  REQUIRE(c.hosts.size() == 2);
  CHECK(c.hosts[0].device_io.bytes_read == 8 * MiB + 8192);  // not 12 MiB: the two processes share loop5
  CHECK(c.hosts[1].device_io.bytes_read == 8 * MiB + 4096);
  CHECK(c.device_io.bytes_read == c.hosts[0].device_io.bytes_read + c.hosts[1].device_io.bytes_read);
  CHECK(c.device_io.hosts == 2);
  REQUIRE(c.device_io.devices.size() == 2);  // one entry per host's device, named by its host
  CHECK(c.device_io.devices[0].name == "h1:loop5");
  CHECK(c.device_io.devices[1].name == "h2:loop6");

  const std::vector<RawHostSection> hosts = raw_host_sections(c, false, true);
  CHECK(hosts[0].device_io.section.io.bytes_read == 8 * MiB + 8192);
  CHECK(hosts[0].device_io.section.reference_bytes == 8 * MiB);  // the host's 2 x 1024 x 4 KiB
  CHECK(hosts[0].device_io.section.ref == DeviceRef::kRead);
  CHECK(hosts[0].device_io.section.ratio.value_or(0) == Approx(1.001).epsilon(0.001));
  CHECK(!hosts[0].device_io.cold_read_nothing);
  CHECK(!hosts[0].device_io.cold_read_short);
  // A write run's rows compare bytes written.
  CHECK(raw_host_sections(c, true, false)[0].device_io.section.ref == DeviceRef::kWrite);
  CHECK(!raw_host_sections(c, true, false)[0].device_io.cold_read_short);

  // The document: the cluster's sum with its scope, a device line per host, no warning.
  RawDocument doc = raw_cluster_doc(c, true);
  cli::add_raw_device_io(doc, c.device_io, TargetInfo{});
  REQUIRE(doc.raw.results.device_io);
  const DeviceIoSection& d = *doc.raw.results.device_io;
  CHECK(d.io.bytes_read == 16 * MiB + 8192 + 4096);
  CHECK(d.reference_bytes == 16 * MiB);
  CHECK(d.io.hosts == 2);
  CHECK(d.scope.find("each host counted once") != std::string::npos);
  CHECK(doc.warnings.empty());
  const std::string text = render_raw_hosts_text(doc);
  CHECK(text.find("h1               device I/O loop5:") != std::string::npos);
  CHECK(text.find("h2               device I/O loop6:") != std::string::npos);
  CHECK(text.find("COLD RUN") == std::string::npos);
}

TEST_CASE("raw across hosts: a host whose cold read took nothing or far less from its devices is flagged by name",
          "[device_io][hosts][raw]") {
  // h2 read nothing from its devices for 4 MiB delivered (O_DIRECT: cold); h3 only 1 MiB for 32 MiB.
  std::vector<cluster::RawProcessPart> parts = {raw_part(0, 0, "h1", 8192, disk("loop5", 32 * MiB)),
                                                raw_part(1, 1, "h2", 1024, disk("loop6", 0)),
                                                raw_part(2, 2, "h3", 8192, disk("loop7", 1 * MiB))};
  const cluster::ClusterRaw c = cluster::merge_raw_parts(parts, false);
  const std::vector<RawHostSection> hosts = raw_host_sections(c, false, true);
  CHECK(!hosts[0].device_io.cold_read_short);
  CHECK(hosts[1].device_io.cold_read_nothing);
  CHECK(hosts[1].device_io.cold_read_short);
  CHECK(!hosts[2].device_io.cold_read_nothing);
  CHECK(hosts[2].device_io.cold_read_short);
  RawDocument doc = raw_cluster_doc(c, true);
  cli::add_raw_device_io(doc, c.device_io, TargetInfo{});
  CHECK(has_warning(doc.warnings,
                    {"host h2: its raw read was cold and delivered 4.00 MiB", "its devices (loop6) read nothing"}));
  CHECK(has_warning(doc.warnings, {"host h3: its raw read was cold and delivered 32.00 MiB",
                                   "its devices (loop7) read only 1.00 MiB", "(3%)"}));
  CHECK_FALSE(has_warning(doc.warnings, {"host h1"}));
  const std::string text = render_raw_hosts_text(doc);
  CHECK(text.find("COLD RUN READ NOTHING FROM ITS DEVICES") != std::string::npos);
  CHECK(text.find("COLD RUN READ FAR LESS THAN IT DELIVERED FROM ITS DEVICES") != std::string::npos);

  // Buffered (not cold): the page cache may serve it, no flag and no warning.
  RawDocument warm = raw_cluster_doc(c, false);
  cli::add_raw_device_io(warm, c.device_io, TargetInfo{});
  CHECK(warm.warnings.empty());
  CHECK(!warm.hosts[1].device_io.cold_read_nothing);
}

TEST_CASE("run across hosts: a host whose cold run read far less than it delivered is flagged by name",
          "[device_io][hosts][run]") {
  // Two hosts' parts as run's gather merges them, and their rows as it writes them.
  auto run_part = [](int rank, const std::string& host, const DeviceIo& io) {
    cluster::ProcessPart p;
    p.rank = rank;
    p.host_index = rank;
    p.hostname = host;
    p.memory_bytes = 1ULL << 30;
    TargetSection t;  // the run document's target section, as run sends it
    t.reading = TargetReadSetting{.cache = "cold"};
    p.target = target_section_json(t);
    RankStats rk;
    rk.samples = 64;
    rk.bytes = 64 * MiB;
    p.result = rank_result(rk, {}, 1'000'000'000, 1);
    p.device_io = io;
    return p;
  };
  const cluster::ClusterRun cr = cluster::merge_parts(
      {run_part(0, "h1", disk("sda", 64 * MiB)), run_part(1, "h2", disk("sdb", 2 * MiB))});
  nlohmann::json doc = {{"results", nlohmann::json::object()}, {"warnings", nlohmann::json::array()}};
  doc["hosts"] = run_hosts_json(run_host_rows(cr));
  CHECK(doc["hosts"][1]["device_io"]["cold_read_short"] == true);
  CHECK(doc["hosts"][1]["device_io"]["cold_read_nothing"] == false);
  LoaderResult lr;
  lr.bytes = 128 * MiB;
  cli::add_run_device_io(doc, lr, DeviceIo{}, {}, true, TargetInfo{}, &cr);
  // The cluster's 66 MiB for 128 MiB is above half: only the host's own flag catches h2.
  CHECK(doc["results"]["device_io"]["bytes_read"] == 66 * MiB);
  CHECK(
      has_warning(doc, {"host h2: its run was cold and delivered 64.00 MiB", "its devices (sdb) read only 2.00 MiB"}));
  CHECK_FALSE(has_warning(doc, {"host h1"}));
  // A host's target without its read setting is refused naming the host and the key, not read as warm.
  cluster::ClusterRun cut = cr;
  cut.hosts[1].target.erase("cache");
  CHECK_THROWS_WITH(run_host_rows(cut), Catch::Contains("host h2's target: missing key 'cache'"));
}

TEST_CASE("checkpoint save across hosts: each host's device writes once in its row, summed for the job",
          "[device_io][hosts][checkpoint]") {
  using namespace ioprobe::checkpoint;
  // Two hosts x 2 processes x 1 rank of 1 MiB (file 1 MiB + 4 KiB on disk).
  std::vector<CheckpointPart> parts;
  const char* names[] = {"h1", "h1", "h2", "h2"};
  const uint64_t written[] = {2 * MiB, 3 * MiB, 2 * MiB + 4096, 1 * MiB};
  for (int p = 0; p < 4; ++p) {
    CheckpointPart x;
    x.mpi_rank = p;
    x.host_index = p / 2;
    x.hostname = names[p];
    x.save.ok = true;
    x.save.durable_ns = 1'000'000;
    RankState st;
    st.rank = p;
    st.bytes = MiB;
    st.regions.push_back({TensorKind::kWeightsBf16, 0, MiB});
    x.state.push_back(st);
    RankSaveResult r;
    r.rank = p;
    r.logical_bytes = r.stored_bytes = r.written_bytes = MiB;
    r.total_ns = 1'000'000;
    x.save.ranks.push_back(r);
    x.file_bytes.push_back(MiB + 4096);
    x.save_device_io = disk(p < 2 ? "loop5" : "loop6", 0, written[p]);
    parts.push_back(x);
  }
  const CheckpointPart back = cluster::decode_gathered<CheckpointPart>(nlohmann::json(parts[1]).dump(), 0,
                                                                       "gather the results");
  REQUIRE(back.save_device_io);
  CHECK(back.save_device_io->bytes_written == 3 * MiB);
  const CheckpointCluster c = merge_checkpoint_parts(parts);
  REQUIRE(c.hosts.size() == 2);
  REQUIRE(c.hosts[0].save_device_io);
  CHECK(c.hosts[0].save_device_io->bytes_written == 3 * MiB);  // the widest window, not 5 MiB
  CHECK(c.hosts[1].save_device_io->bytes_written == 2 * MiB + 4096);
  CHECK(c.hosts[0].save_file_bytes == 2 * (MiB + 4096));
  REQUIRE(c.save_device_io);
  CHECK(c.save_device_io->bytes_written == 5 * MiB + 4096);
  CHECK(c.save_device_io->hosts == 2);
  const std::vector<CheckpointHostSection> hosts = checkpoint_host_sections(c);
  REQUIRE(hosts[0].save_device_io);
  CHECK(hosts[0].save_device_io->io.bytes_written == 3 * MiB);
  CHECK(hosts[0].save_device_io->reference_bytes == 2 * (MiB + 4096));
  CheckpointSection ck;
  ck.save.bytes_on_disk = 4 * (MiB + 4096);
  ck.save.logical_bytes = 4 * MiB;
  add_cluster_save_device_io(ck, c);
  REQUIRE(ck.save.device_io);
  CHECK(ck.save.device_io->section.io.bytes_written == 5 * MiB + 4096);
  CHECK(ck.save.device_io->section.reference_bytes == 4 * (MiB + 4096));
  CHECK(ck.save.device_io->written_over_logical.value_or(0) == Approx((5.0 * MiB + 4096) / (4.0 * MiB)));
  CHECK(ck.save.device_io->section.scope.find("every host") != std::string::npos);
  // The hosts' text rows carry each host's save line.
  const std::string text = render_checkpoint_hosts_text(CheckpointClusterSection{.hosts = 2}, hosts);
  CHECK(text.find("h1               save device I/O loop5:") != std::string::npos);
  CHECK(text.find("h2               save device I/O loop6:") != std::string::npos);
}
