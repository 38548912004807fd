// raw/raw_results: RawResults::merge (sums, added histograms, longest elapsed, partial and
// descriptive fields), and cluster/raw_parts: a multi-host raw run's host rows, stragglers and
// the parts' round trip through their wire form.
#include <catch2/catch.hpp>

#include "cluster/gather.hpp"

#include "cluster/raw_parts.hpp"
#include "core/error.hpp"
#include "raw/raw_results.hpp"

using namespace ioprobe;
using namespace ioprobe::cluster;

namespace {

// `ios` requests of 4096 B, each taking `lat_ns`, over `elapsed_s`.
RawResults raw(uint64_t ios, double elapsed_s, uint64_t lat_ns) {
  RawResults r;
  r.ios = ios;
  r.bytes = ios * 4096;
  r.elapsed_s = elapsed_s;
  for (uint64_t i = 0; i < ios; ++i) r.latency.record(lat_ns);
  r.cpu_user_s = 0.25;
  r.cpu_sys_s = 0.5;
  r.stop = {.kind = RawStopKind::kRuntime};
  return r;
}

RawProcessPart part(int rank, int host, const std::string& name, uint64_t ios, double elapsed_s, uint64_t lat_ns) {
  RawProcessPart p;
  p.rank = rank;
  p.host_index = host;
  p.hostname = name;
  p.filename = "/data/t.bin.rank" + std::to_string(rank);
  p.target = {{"fs_type", "ext4"}, {"memory_backed", false}};
  p.result = raw(ios, elapsed_s, lat_ns);
  return p;
}

}  // namespace

TEST_CASE("RawResults::merge sums counts, adds histograms, keeps the longest elapsed", "[raw][merge]") {
  RawResults a = raw(1000, 2.0, 10'000);
  a.engine_notes = {"fixed buffers"};
  a.fixed_buffers = true;
  RawResults b = raw(3000, 2.5, 1'000'000);
  a.merge(b);
  CHECK(a.ios == 4000);
  CHECK(a.bytes == 4000 * 4096ULL);
  CHECK(a.elapsed_s == 2.5);
  CHECK(a.latency.count() == 4000);
  CHECK(a.cpu_user_s == 0.5);
  CHECK(a.cpu_sys_s == 1.0);
  // Aggregate rates from the merged totals over the longest part, not a sum of the parts' rates
  // (1000/2 + 3000/2.5 = 1700 would be wrong).
  CHECK(a.iops() == Approx(4000 / 2.5));
  CHECK(a.bytes_per_s() == Approx(4000 * 4096.0 / 2.5));
  // Percentiles from the added buckets: 3/4 of the I/Os took 1 ms, so p50 is there, and p10 at
  // 10 µs; an average of the parts' p50 (505 µs) would be neither.
  CHECK(a.latency.percentile(50) == Approx(1'000'000).epsilon(0.02));
  CHECK(a.latency.percentile(10) == Approx(10'000).epsilon(0.02));
  // Descriptive fields stay the first's.
  CHECK(a.engine_notes == std::vector<std::string>{"fixed buffers"});
  CHECK(a.fixed_buffers);
  CHECK_FALSE(a.partial);
}

TEST_CASE("RawResults::merge: a partial or failing part marks the whole", "[raw][merge]") {
  RawResults a = raw(10, 1.0, 1000);
  RawResults b = raw(5, 0.5, 1000);
  b.partial = true;
  b.errors = 2;
  b.first_error = ErrorRecord{.err = EIO, .op = "read of 4096 B at offset 0"};
  b.stop = {.kind = RawStopKind::kErrors};
  a.merge(b);
  CHECK(a.partial);
  CHECK(a.errors == 2);
  CHECK(a.first_error.same_failure(b.first_error));
  CHECK(a.stop.kind == RawStopKind::kErrors);
  CHECK(a.elapsed_s == 1.0);
  // Merging into an empty result is the identity.
  RawResults e;
  e.merge(a);
  CHECK(e.ios == a.ios);
  CHECK(e.latency.count() == a.latency.count());
  CHECK(e.stop == a.stop);
}

TEST_CASE("merge_raw_parts: host rows add up to the cluster, stragglers by rate or finish", "[raw][cluster]") {
  std::vector<RawProcessPart> parts = {part(3, 1, "h2", 500, 2.0, 50'000), part(0, 0, "h1", 1000, 2.0, 10'000),
                                       part(1, 0, "h1", 1000, 2.01, 10'000), part(2, 1, "h2", 400, 2.02, 50'000)};
  ClusterRaw c = merge_raw_parts(parts, /*time_based=*/true);
  CHECK(c.mpi_ranks == 4);
  CHECK(c.merged.ios == 2900);
  CHECK(c.merged.latency.count() == 2900);
  CHECK(c.merged.elapsed_s == 2.02);
  REQUIRE(c.hosts.size() == 2);
  CHECK(c.hosts[0].hostname == "h1");
  CHECK(c.hosts[0].mpi_ranks == std::vector<int>{0, 1});
  CHECK(c.hosts[0].files == std::vector<std::string>{"/data/t.bin.rank0", "/data/t.bin.rank1"});
  CHECK(c.hosts[0].result.ios + c.hosts[1].result.ios == c.merged.ios);
  CHECK(c.hosts[1].first_done_s == 2.0);
  CHECK(c.hosts[1].last_done_s == 2.02);
  // h2 delivered 900 I/Os in 2.02 s against h1's 2000 in 2.01 s: a straggler (time-based run).
  CHECK_FALSE(c.hosts[0].straggler);
  CHECK(c.hosts[1].straggler);
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("straggler: host h2") != std::string::npos);
  // A one-pass run judges by finish time: equal finishes, no straggler despite the rates.
  ClusterRaw d = merge_raw_parts(parts, /*time_based=*/false);
  CHECK_FALSE(d.hosts[1].straggler);
  // One pass: h2 finishing at 3 s against h1's 2.01 s is a straggler; in a run of milliseconds
  // (0.02 s against 0.01 s) the same ratio is noise, below kRawStragglerMinLagS.
  parts[0].result.elapsed_s = 3.0;
  CHECK(merge_raw_parts(parts, false).hosts[1].straggler);
  for (auto& p : parts) p.result.elapsed_s = p.hostname == "h1" ? 0.01 : 0.02;
  CHECK_FALSE(merge_raw_parts(parts, false).hosts[1].straggler);
}

TEST_CASE("merge_raw_parts: a host's target without a key is refused naming the host and the key", "[raw][cluster]") {
  std::vector<RawProcessPart> parts = {part(0, 0, "h1", 10, 1.0, 1000), part(1, 1, "h2", 10, 1.0, 1000)};
  CHECK_NOTHROW(merge_raw_parts(parts, false));
  parts[1].target.erase("memory_backed");  // read as not memory-backed before, so the targets seemed alike
  CHECK_THROWS_WITH(merge_raw_parts(parts, false), Catch::Contains("host h2's target: missing key 'memory_backed'"));
}

TEST_CASE("raw parts round-trip their wire form exactly; a foreign text is refused", "[raw][cluster]") {
  RawProcessPart p = part(1, 0, "h1", 777, 1.5, 123'456);
  p.start_skew_s = 0.001;
  p.result.engine_notes = {"registered files"};
  const RawProcessPart q = decode_gathered<RawProcessPart>(nlohmann::json(p).dump(), 1, "gather the raw results");
  CHECK(q.rank == 1);
  CHECK(q.hostname == "h1");
  CHECK(q.filename == p.filename);
  CHECK(q.start_skew_s == 0.001);
  CHECK(q.result.ios == 777);
  CHECK(q.result.latency.count() == 777);
  CHECK(q.result.latency.percentile(99) == p.result.latency.percentile(99));
  CHECK(q.result.latency.max() == p.result.latency.max());
  CHECK(q.result.engine_notes == p.result.engine_notes);
  CHECK_THROWS_AS(decode_gathered<RawProcessPart>("{\"rank\": 1}", 1, "gather the raw results"), Error);
  nlohmann::json bad = p;
  bad["device_io"]["reads"] = "many";
  CHECK_THROWS_WITH(decode_gathered<RawProcessPart>(bad.dump(), 1, "gather the raw results"),
                    Catch::Contains("raw part.device_io.reads: expected a non-negative integer"));
}
