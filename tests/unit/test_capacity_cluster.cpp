// Capacity across hosts: the per-host split of a point's accelerators, the merge of one repeat's
// per-process parts (cluster/capacity_point), the client judged per host and named
// (capacity/capacity_across), the search's and the text's wording, and the deliveries that the
// merging host needs for completion-time rates surviving the wire form.
#include <catch2/catch.hpp>

#include <numeric>

#include "capacity/capacity_across.hpp"
#include "capacity/search.hpp"
#include "cli/device_accounting.hpp"
#include "cluster/capacity_point.hpp"
#include "cluster/gather.hpp"
#include "core/error.hpp"
#include "loader/loader_result_json.hpp"
#include "report/capacity_document.hpp"
#include "report/capacity_report.hpp"

using namespace ioprobe;
using namespace ioprobe::cluster;

namespace {

uint32_t sum(const std::vector<uint32_t>& v) { return std::accumulate(v.begin(), v.end(), 0u); }

// One process's part: `gpus` GPU ranks from `first`, each delivering `batches` batches of 10
// samples of 1000 B, one every 0.1 s, over `elapsed_s`, its CPU `cpu_s`.
PointPart part(int rank, int host, const std::string& name, uint32_t point, uint32_t gpus, uint32_t first,
               double elapsed_s, double cpu_s, uint64_t lat_ns) {
  PointPart p;
  p.rank = rank;
  p.host_index = host;
  p.hostname = name;
  p.cpus_allowed = 2;
  p.point_gpus = point;
  p.gpu_ranks = gpus;
  for (uint32_t g = 0; g < gpus; ++g) {
    RankStats rk;
    rk.rank = static_cast<int>(first + g);
    rk.elapsed_ns = static_cast<int64_t>(elapsed_s * 1e9);
    rk.timeline = Timeline(0.5);
    for (int b = 1; b <= 30; ++b) {
      rk.deliveries.push_back({b * 100'000'000LL, 10, 10'000, 0});
      rk.timeline.add(b * 100'000'000LL, 10, 10'000, 0);
      rk.samples += 10;
      rk.bytes += 10'000;
      ++rk.batches;
    }
    rk.nominal_compute_ns = rk.elapsed_ns - 100'000'000;
    WorkerStats w;
    w.rank = rk.rank;
    w.files = rk.samples;
    for (uint64_t i = 0; i < rk.samples; ++i) w.file_latency.record(lat_ns);
    p.result.merge(rank_result(rk, {w}, rk.elapsed_ns, 1));
  }
  p.result.cpu_user_s = cpu_s;
  return p;
}

}  // namespace

TEST_CASE("split_gpus: evenly over hosts, then over each host's processes; the sums are the point",
          "[capacity][cluster]") {
  // 2 hosts x 2 processes (ranks 0,1 on host 0; 2,3 on host 1).
  const std::vector<int> two_by_two{0, 0, 1, 1};
  CHECK(split_gpus(1, two_by_two) == std::vector<uint32_t>{1, 0, 0, 0});
  CHECK(split_gpus(2, two_by_two) == std::vector<uint32_t>{1, 0, 1, 0});
  CHECK(split_gpus(3, two_by_two) == std::vector<uint32_t>{1, 1, 1, 0});
  CHECK(split_gpus(5, two_by_two) == std::vector<uint32_t>{2, 1, 1, 1});
  CHECK(split_gpus(8, two_by_two) == std::vector<uint32_t>{2, 2, 2, 2});
  // Hosts interleaved by rank (mpirun --map-by node) and of unequal size.
  const std::vector<int> odd{0, 1, 0, 2, 0};
  CHECK(split_gpus(7, odd) == std::vector<uint32_t>{1, 2, 1, 2, 1});
  for (uint32_t n = 0; n <= 40; ++n) {
    CHECK(sum(split_gpus(n, two_by_two)) == n);
    CHECK(sum(split_gpus(n, odd)) == n);
  }
  CHECK(first_gpu_ranks({2, 1, 0, 1}) == std::vector<uint32_t>{0, 2, 3, 3});
  CHECK_THROWS_AS(split_gpus(4, {}), Error);
  CHECK_THROWS_AS(split_gpus(4, {0, 2}), Error);  // host index 1 has no rank
}

TEST_CASE("merge_point_parts: sums, duration max, histograms added, every GPU rank kept, one row per host",
          "[capacity][cluster]") {
  std::vector<PointPart> parts{part(2, 1, "h2", 3, 1, 2, 3.4, 0.5, 2000), part(0, 0, "h1", 3, 1, 0, 3.1, 0.4, 1000),
                               part(1, 0, "h1", 3, 1, 1, 3.2, 0.3, 1000), part(3, 1, "h2", 3, 0, 3, 0, 0, 0)};
  const PointMerge m = merge_point_parts(parts);
  CHECK(m.gpus == 3);
  CHECK(m.merged.samples == 900);
  CHECK(m.merged.bytes == 900'000);
  CHECK(m.merged.elapsed_ns == 3'400'000'000);
  CHECK(m.merged.file_latency.count() == 900);
  CHECK(m.merged.ranks.size() == 3);
  CHECK(m.cpus_allowed == 4);
  REQUIRE(m.hosts.size() == 2);
  CHECK(m.hosts[0].hostname == "h1");
  CHECK(m.hosts[0].mpi_ranks == std::vector<int>{0, 1});
  CHECK(m.hosts[0].gpu_ranks == 2);
  CHECK(m.hosts[0].result.samples == 600);
  CHECK(m.hosts[1].mpi_ranks == std::vector<int>{2, 3});
  CHECK(m.hosts[1].gpu_ranks == 1);
  CHECK(m.hosts[1].result.elapsed_ns == 3'400'000'000);
  CHECK(m.hosts[1].result.file_latency.percentile(99) > m.hosts[0].result.file_latency.percentile(99));
  // A process that ran another point left the common sequence: named, not merged.
  parts.push_back(part(4, 1, "h2", 4, 1, 4, 3, 0, 1000));
  try {
    merge_point_parts(parts);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("rank 4 on host h2 ran 4 accelerators"));
  }
  // Shares that do not add up to the point.
  CHECK_THROWS_AS(merge_point_parts({part(0, 0, "h1", 3, 1, 0, 3, 0, 1), part(1, 1, "h2", 3, 1, 1, 3, 0, 1)}), Error);
}

TEST_CASE("capacity across hosts: rates from completion times, the client judged per host and named",
          "[capacity][cluster]") {
  LoaderConfig c;
  c.batch_size = 10;
  c.step_time_s = 0.09;
  // h1 busy (1.9 CPU s per s on 2 CPUs = 95%), h2 idle.
  const PointMerge m = merge_point_parts(
      {part(0, 0, "h1", 2, 1, 0, 3.0, 5.7, 1000), part(1, 1, "h2", 2, 1, 1, 3.0, 0.3, 1000)});
  const RepeatAcross r = repeat_across(m, c);
  // Each rank: 10 samples per 0.1 s in the steady window = 100 samples/s, two ranks.
  CHECK(r.cluster.samples_per_s == Approx(200).epsilon(0.01));
  REQUIRE(r.hosts.size() == 2);
  CHECK(r.hosts[0].samples_per_s == Approx(100).epsilon(0.01));
  CHECK(r.hosts[0].cpu_fraction == Approx(0.95));
  CHECK(r.hosts[1].cpu_fraction == Approx(0.05));
  CHECK(r.cluster.cpu_fraction == Approx(0.5));  // 6 CPU s / 3 s / 4 CPUs: not client-bound as one figure
  const CapacityPoint p = summarize_across(2, {m, m}, {r, r});
  CHECK(p.client_bound);
  CHECK(p.client_host == "h1");
  CHECK_THAT(p.note, Catch::Contains("on host h1: the process used 95%"));
  REQUIRE(p.hosts.size() == 2);
  CHECK(p.hosts[0].client_bound);
  CHECK_FALSE(p.hosts[1].client_bound);
  CHECK(p.hosts[0].gpus + p.hosts[1].gpus == 2);
  CHECK(p.delivered_bytes == 2 * 600'000);
  CHECK(p.hosts[1].delivered_bytes == 2 * 300'000);

  // The search's answer and the text say which host to relieve.
  std::map<uint32_t, CapacityPoint> table;
  table[1].au = 0.99;
  table[1].samples_per_s = 100;
  table[2] = p;
  table[2].au = 0.5;
  CapacitySearchOptions so;
  const CapacityAnswer a = search_capacity([&](uint32_t g) -> std::optional<CapacityPoint> { return table.at(g); }, so);
  CHECK(a.bound == "client-cpu");
  CHECK_THAT(a.text, Catch::Contains("client-bound on host h1 at 1: add hosts"));
  CapacitySectionInputs in;
  in.accelerator_name = "H100";
  CapacityDocument doc;
  doc.header.ioprobe_version = "t";
  doc.target.path = "/d";
  doc.dataset.files = 10;
  doc.dataset.bytes = 100;
  doc.header.host.cpus_allowed = 2;
  doc.cluster = CapacityClusterSection{.launcher = "OpenMPI mpirun",
                                       .hosts = 2,
                                       .hostnames = {"h1", "h2"},
                                       .mpi_ranks = 2,
                                       .dataset_placement = "shared",
                                       .dataset_placement_how = "one directory",
                                       .split = "evenly",
                                       .merge = "summed"};
  doc.capacity.in = in;
  doc.capacity.answer = a;
  const std::string text = render_capacity_text(doc);
  CHECK_THAT(text, Catch::Contains("client-bound on host h1 at 1 x H100: add hosts"));
  CHECK_THAT(text, Catch::Contains("hosts      2 (h1, h2)"));
  CHECK_THAT(text, Catch::Contains("h2"));
  CHECK(capacity_document_json(doc)["capacity"]["points"][1]["hosts"].size() == 2);
}

TEST_CASE("a loader result's recorded deliveries survive the wire form", "[capacity][cluster]") {
  const PointPart p = part(0, 0, "h1", 1, 1, 0, 3.0, 1.0, 1000);
  const LoaderResult back = loader_result_from_json(nlohmann::json::parse(loader_result_to_json(p.result).dump()));
  REQUIRE(back.ranks.size() == 1);
  REQUIRE(back.ranks[0].deliveries.size() == 30);
  CHECK(back.ranks[0].deliveries[4].t_ns == 500'000'000);
  CHECK(back.ranks[0].deliveries[4].samples == 10);
  CHECK(back.ranks[0].deliveries[4].bytes == 10'000);
  // A result recorded without deliveries writes none (run's parts stay as they were).
  LoaderResult plain = p.result;
  plain.ranks[0].deliveries.clear();
  CHECK_FALSE(loader_result_to_json(plain)["ranks"][0].contains("deliveries"));
  // The whole part through the gather's codec, its host's device accounting with it.
  PointPart q = p;
  q.device_io.source = "diskstats";
  q.device_io.bytes_read = 4096;
  const PointPart got = decode_gathered<PointPart>(nlohmann::json(q).dump(), 0, "capacity: gather a point's results");
  CHECK(got.point_gpus == q.point_gpus);
  CHECK(got.result.ranks.at(0).deliveries.size() == 30);
  CHECK(got.device_io.bytes_read == 4096);
  nlohmann::json bad = q;
  bad.erase("point_gpus");
  CHECK_THROWS_WITH(decode_gathered<PointPart>(bad.dump(), 1, "capacity: gather a point's results"),
                    Catch::Contains("rank 1") && Catch::Contains("point part: missing key 'point_gpus'"));
}

TEST_CASE("capacity device I/O: a host's repeats add, the point's is the hosts' sum, ratios to delivered bytes",
          "[capacity][cluster]") {
  TargetInfo t;
  t.fs_type = "tmpfs";  // nothing to sleep an idle window over
  cli::CapacityDeviceIo d(t);
  DeviceIo a;
  a.source = "diskstats";
  a.devices = {{"sda", 1000, 0, 10, 0}};
  a.bytes_read = 1000;
  a.reads = 10;
  a.interval_s = 2;
  d.add(2, 0, "h1", a);
  d.add(2, 0, "h1", a);  // two repeats on host 0, one after the other
  DeviceIo b = a;
  b.devices = {{"sda", 3000, 0, 5, 0}};  // the other host's own sda
  b.bytes_read = 3000;
  d.add(2, 1, "h2", b);
  CapacityDocument doc;
  doc.capacity.answer.points.resize(2);
  CapacityPoint& two = doc.capacity.answer.points[0];
  two.gpus = 2;
  two.delivered_bytes = 5000;
  two.hosts.resize(2);
  two.hosts[0].host_index = 0;
  two.hosts[0].delivered_bytes = 2500;
  two.hosts[1].host_index = 1;
  two.hosts[1].delivered_bytes = 2500;
  doc.capacity.answer.points[1].gpus = 4;
  doc.capacity.answer.points[1].delivered_bytes = 1;
  doc.capacity.device_io = d.points();
  const nlohmann::json points = capacity_document_json(doc)["capacity"]["points"];
  const auto& p = points[0]["device_io"];
  CHECK(p["bytes_read"] == 5000);
  CHECK(p["read_ratio"].get<double>() == Approx(1.0));
  CHECK(p["hosts"] == 2);
  // Each host's sda is its own: two devices, named by host, never one sda of 5,000 B.
  REQUIRE(p["devices"].size() == 2);
  CHECK(p["devices"][0]["name"] == "h1:sda");
  CHECK(p["devices"][0]["bytes_read"] == 2000);
  CHECK(p["devices"][1]["name"] == "h2:sda");
  CHECK(p["devices"][1]["bytes_read"] == 3000);
  const auto& h0 = points[0]["hosts"][0]["device_io"];
  CHECK(h0["bytes_read"] == 2000);
  CHECK(h0["interval_s"].get<double>() == Approx(4));
  CHECK(h0["read_ratio"].get<double>() == Approx(0.8));
  CHECK(points[0]["hosts"][1]["device_io"]["read_ratio"].get<double>() == Approx(1.2));
  CHECK_FALSE(points[1].contains("device_io"));  // no repeat accounted at 4
}

// 64 MiB read in 2 s on vda with a quiet device before, and the same beside another reader of
// 100 MB/s (200 MB over the 2 s, for 64 MiB counted): what the other-traffic warning is about.
namespace {
std::pair<DeviceIo, DeviceIo> quiet_and_shared() {
  DeviceIo quiet;
  quiet.source = "diskstats";
  quiet.devices = {{"vda", 64 << 20, 0, 100, 0}};
  quiet.bytes_read = 64 << 20;
  quiet.interval_s = 2;
  quiet.idle_window_s = 0.5;
  quiet.idle_bytes_per_s_before = 0;
  DeviceIo shared = quiet;
  shared.idle_bytes_per_s_before = 100e6;
  return {quiet, shared};
}
}  // namespace

TEST_CASE("capacity device I/O: a point on a shared device gets run's other-traffic warning", "[capacity][cluster]") {
  TargetInfo t;
  t.fs_type = "tmpfs";  // nothing to sleep an idle window over
  cli::CapacityDeviceIo d(t);
  const auto [quiet, shared] = quiet_and_shared();
  d.add(1, 0, "h1", quiet);
  d.add(2, 0, "h1", shared);
  CapacityDocument doc;
  doc.capacity.answer.points.resize(2);
  for (uint32_t i = 0; i < 2; ++i) {
    doc.capacity.answer.points[i].gpus = i + 1;
    doc.capacity.answer.points[i].delivered_bytes = 64 << 20;
  }
  doc.capacity.device_io = d.points();
  const nlohmann::json points = capacity_document_json(doc)["capacity"]["points"];
  const std::vector<std::string> w = d.warnings(doc.capacity.answer.points, false, t);
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::StartsWith("capacity's point at 2 GPU(s): other traffic on vda before the run"));
  CHECK_THAT(w[0], Catch::Contains("the run's own share cannot be told apart"));
  CHECK(points[1]["device_io"]["share_unclear"] == true);
}

TEST_CASE("tune device I/O: a setting on a shared device gets run's other-traffic warning", "[tune][cluster]") {
  TargetInfo t;
  t.fs_type = "tmpfs";  // nothing to sleep an idle window over
  cli::TuneDeviceIo d(t);
  const auto [quiet, shared] = quiet_and_shared();
  d.add(4, 2, "none", quiet);
  d.add(8, 2, "none", shared);
  const std::vector<std::string> w = d.warnings();
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::StartsWith("tune's setting 8/2/none (workers/prefetch_factor/numa): other traffic on vda"));
  CHECK_THAT(w[0], Catch::Contains("the run's own share cannot be told apart"));
}
