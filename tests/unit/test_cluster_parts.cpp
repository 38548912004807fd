// cluster/run_parts: what rank 0 makes of the processes' results (merge rules, host rows,
// stragglers, RAM once per host), and the parts' round trip through their wire form.
#include <catch2/catch.hpp>

#include "cluster/gather.hpp"
#include "cluster/run_parts.hpp"
#include "comm/comm.hpp"
#include "core/error.hpp"
#include "loader/loader_result_json.hpp"
#include "report/cluster_json.hpp"

using namespace ioprobe;
using namespace ioprobe::cluster;

namespace {

// A process's part: `samples` samples of 1000 B, each read in `lat_ns`, over `elapsed_s`.
ProcessPart part(int rank, int host, const std::string& name, uint64_t samples, double elapsed_s, uint64_t lat_ns) {
  ProcessPart p;
  p.rank = rank;
  p.host_index = host;
  p.hostname = name;
  p.gpu_ranks = 1;
  p.first_rank = static_cast<uint32_t>(rank);
  p.cpus_allowed = 2;
  p.memory_bytes = 8ULL << 30;
  p.target = {{"fs_type", "ext4"}, {"direct", true}};
  RankStats rk;
  rk.rank = rank;
  rk.samples = samples;
  rk.bytes = samples * 1000;
  rk.batches = samples / 10;
  rk.elapsed_ns = static_cast<int64_t>(elapsed_s * 1e9);
  rk.nominal_compute_ns = rk.elapsed_ns / 2;
  rk.timeline = Timeline(0.5);
  WorkerStats w;
  w.rank = rank;
  w.files = samples;
  w.bytes = samples * 1000;
  for (uint64_t i = 0; i < samples; ++i) w.file_latency.record(lat_ns);
  p.result = rank_result(rk, {w}, rk.elapsed_ns, 1);
  p.result.stop = {.kind = LoaderStopKind::kCompleted};
  return p;
}

}  // namespace

TEST_CASE("merge_parts: totals add, duration is the max, RAM once per host, host rows add up", "[cluster]") {
  std::vector<ProcessPart> parts = {part(0, 0, "a", 100, 2.0, 1000), part(1, 0, "a", 100, 2.1, 1000),
                                    part(2, 1, "b", 100, 2.05, 9000)};
  const ClusterRun c = merge_parts(parts);
  CHECK(c.mpi_ranks == 3);
  CHECK(c.merged.samples == 300);
  CHECK(c.merged.bytes == 300000);
  CHECK(c.merged.elapsed_ns == 2'100'000'000);
  CHECK(c.merged.file_latency.count() == 300);
  // p99 of the merged histogram: a third of the reads took 9 µs.
  CHECK(c.merged.file_latency.percentile(99) > 8800);
  REQUIRE(c.hosts.size() == 2);
  CHECK(c.hosts[0].hostname == "a");
  CHECK(c.hosts[0].mpi_ranks == std::vector<int>{0, 1});
  CHECK(c.hosts[0].samples == 200);
  CHECK(c.hosts[0].first_done_s == Approx(2.0));
  CHECK(c.hosts[0].last_done_s == Approx(2.1));
  CHECK(c.hosts[1].samples == 100);
  CHECK(c.hosts[0].samples + c.hosts[1].samples == c.merged.samples);
  CHECK(c.memory_bytes == 2 * (8ULL << 30));  // two hosts, not three processes
  CHECK(c.cpus_allowed == 4);
  CHECK_FALSE(c.hosts[0].straggler);
  CHECK_FALSE(c.hosts[1].straggler);
  CHECK(c.hosts[1].au_min == Approx(0.5).epsilon(0.01));
}

TEST_CASE("merge_parts flags a host that finished more than 10% after the first, and duplicate names", "[cluster]") {
  const ClusterRun c = merge_parts(
      {part(0, 0, "a", 100, 2.0, 1000), part(1, 1, "b", 100, 2.5, 1000), part(2, 2, "b", 100, 2.1, 1000)});
  REQUIRE(c.hosts.size() == 3);
  CHECK_FALSE(c.hosts[0].straggler);
  CHECK(c.hosts[1].straggler);
  CHECK_FALSE(c.hosts[2].straggler);
  bool dup = false, strag = false;
  for (const auto& w : c.warnings) {
    dup |= w.find("hostname 'b'") != std::string::npos;
    strag |= w.find("straggler: host b") != std::string::npos;
  }
  CHECK(dup);
  CHECK(strag);
}

TEST_CASE("a part survives its wire form", "[cluster]") {
  const ProcessPart p = part(3, 1, "h2", 57, 1.25, 4321);
  comm::LocalComm comm;
  const std::vector<ProcessPart> got = gather_parts(comm, p, "gather the results", 1);
  REQUIRE(got.size() == 1);
  const ProcessPart& q = got[0];
  CHECK(q.rank == 3);
  CHECK(q.host_index == 1);
  CHECK(q.hostname == "h2");
  CHECK(q.result.samples == 57);
  CHECK(q.result.file_latency.count() == 57);
  CHECK(q.result.file_latency.percentile(50) == p.result.file_latency.percentile(50));
  CHECK(q.result.elapsed_ns == p.result.elapsed_ns);
  CHECK(q.target.value("fs_type", "") == "ext4");
  CHECK(q.device_io.source == "none");
  const std::vector<LoaderResult> all = allgather_parts(comm, p.result, "tune: merge a run's results", 1);
  REQUIRE(all.size() == 1);
  CHECK(all[0].samples == 57);
  CHECK(all[0].file_latency.percentile(50) == p.result.file_latency.percentile(50));
  CHECK_THROWS_AS(decode_gathered<ProcessPart>("{\"rank\": 1}", 1, "gather the results"), Error);
  CHECK_THROWS_WITH(decode_gathered<ProcessPart>("{\"rank\": 1}", 1, "gather the results"),
                    Catch::Contains("rank 1") && Catch::Contains("part: missing key 'host_index'"));
  nlohmann::json bad = p;
  bad["result"]["samples"] = -3;
  CHECK_THROWS_WITH(decode_gathered<ProcessPart>(bad.dump(), 2, "gather the results"),
                    Catch::Contains("part.result.samples: expected a non-negative integer"));
  CHECK_THROWS_AS(decode_gathered<ProcessPart>("not json", 0, "gather the results"), Error);
}

TEST_CASE("the cluster's device accounting: each host's devices once, the hosts added, epoch by epoch",
          "[cluster][device_io]") {
  auto io = [](const std::string& dev, uint64_t read) {
    DeviceIo d;
    d.source = "diskstats";
    d.devices = {{dev, read, 0, read / 4096, 0}};
    d.bytes_read = read;
    d.reads = read / 4096;
    d.interval_s = 1;
    return d;
  };
  std::vector<ProcessPart> parts = {part(0, 0, "a", 100, 2.0, 1000), part(1, 0, "a", 100, 2.0, 1000),
                                    part(2, 1, "b", 100, 2.0, 1000)};
  parts[0].device_io = io("sda", 8 << 20);  // both processes of host a count the same device
  parts[1].device_io = io("sda", 8 << 20);
  parts[2].device_io = io("sdb", 2 << 20);
  parts[0].device_io_epochs = {io("sda", 5 << 20), io("sda", 3 << 20)};
  parts[1].device_io_epochs = parts[0].device_io_epochs;
  parts[2].device_io_epochs = {io("sdb", 2 << 20)};
  comm::LocalComm comm;
  const ProcessPart back = gather_parts(comm, parts[0], "t", 1).at(0);  // the wire form keeps it
  REQUIRE(back.device_io_epochs.size() == 2);
  CHECK(back.device_io_epochs[1].bytes_read == 3 << 20);
  CHECK(back.device_io.devices.at(0).name == "sda");
  const ClusterRun c = merge_parts(parts);
  CHECK(c.device_io.bytes_read == 10 << 20);
  CHECK(c.device_io.hosts == 2);
  REQUIRE(c.device_io_epochs.size() == 2);
  CHECK(c.device_io_epochs[0].bytes_read == 7 << 20);
  CHECK(c.device_io_epochs[1].bytes_read == 3 << 20);
  CHECK(c.hosts.at(1).device_io.bytes_read == 2 << 20);
}
