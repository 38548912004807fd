// The typed capacity document (report/capacity_document.hpp) and the one codec of a capacity point
// (capacity/point_json.hpp): their JSON both ways, strict reading naming the field's path, and a
// document saved by `ioprobe capacity` (tests/fixtures/documents/) read back, written again byte
// for byte and rendered as the search did.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "capacity/point_json.hpp"
#include "cluster/gather.hpp"
#include "core/error.hpp"
#include "report/capacity_document.hpp"
#include "report/capacity_report.hpp"
#include "report/document.hpp"
#include "report/html_report.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

const std::string kCapacityDocs = std::string(IOPROBE_FIXTURES) + "/documents";

std::string capacity_file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A point measured across two hosts, with every optional field set.
CapacityPoint across_point(uint32_t gpus) {
  CapacityPoint p;
  p.gpus = gpus;
  p.au = 0.91;
  p.au_min = 0.875;
  p.samples_per_s = 1234.5;
  p.bytes_per_s = 1.25e8;
  p.repeats = 2;
  p.spread = 0.03;
  p.cpu_fraction = 0.4;
  p.decode_us_per_sample = 812.5;
  p.consumer_lag = 0.01;
  p.worker_runq_share = 0.2;
  p.client_bound = true;
  p.steady = false;
  p.note = "on host h2: the process used 95% of its CPUs";
  p.delivered_bytes = 123456789;
  p.client_host = "h2";
  for (int h = 0; h < 2; ++h) {
    CapacityHostRow r;
    r.hostname = h == 0 ? "h1" : "h2";
    r.host_index = h;
    r.mpi_ranks = {2 * h, 2 * h + 1};
    r.gpus = gpus / 2;
    r.cpus_allowed = 8;
    r.au = 0.9 + 0.01 * h;
    r.au_min = 0.8;
    r.samples_per_s = 600;
    r.bytes_per_s = 6e7;
    r.delivered_bytes = 60000000 + static_cast<uint64_t>(h);
    r.cpu_fraction = 0.5;
    r.consumer_lag = 0.02;
    r.client_bound = h == 1;
    r.note = h == 1 ? "the process used 95% of its CPUs" : "";
    p.hosts.push_back(r);
  }
  return p;
}

DeviceIo disk_io(uint64_t bytes) {
  DeviceIo io;
  io.source = "diskstats";
  io.devices = {{"vda", bytes, 4096, 10, 1}};
  io.bytes_read = bytes;
  io.bytes_written = 4096;
  io.reads = 10;
  io.writes = 1;
  io.interval_s = 4.5;
  io.idle_window_s = 0.5;
  io.start_unix_s = 1.7e9;
  return io;
}

// A document with every optional part: calibration (consumer model and effect), host rows,
// device accounting of the point and of each host, a cluster section and warnings.
CapacityDocument full_capacity_document() {
  CapacityDocument d;
  d.header.ioprobe_version = "0.1.0";
  d.header.command = {"ioprobe", "capacity", "--max-gpus", "4"};
  d.header.created_utc = "2026-12-07T06:00:00Z";
  d.header.host = {.hostname = "h1", .cpus_online = 8, .cpus_allowed = 8, .cpu_list = "0-7"};
  d.target.path = "/mnt/x";
  d.target.fs_type = "ext4";
  d.target.reading = TargetReadSetting{.direct = true};
  d.dataset.files = 400;
  d.dataset.bytes = 6553600;
  d.loader.num_workers = 2;
  d.loader.batch_size = 16;
  d.loader.prefetch_factor = 2;
  d.loader.engine = EngineKind::kIoUring;
  d.loader.direct = true;
  d.loader.shuffle = true;
  d.loader.cpu_per_sample_us = 12.5;
  d.loader.step_time_s = 0.32;
  d.loader.consumer.decode = "jpeg";
  d.loader.consumer.main_cpu_per_batch_us = 100;
  d.loader.consumer.calibration = RunCalibrationRef{"cal.json", "train.py", "make", "h", "2.1", 64, "2026-12-01"};
  d.demand = {.accelerator = "h100-sxm",
              .accelerator_name = "H100-SXM",
              .model = "resnet50",
              .rate_family = "training",
              .samples_per_s_per_gpu = 50,
              .source = "MLPerf",
              .sample_bytes = 16384,
              .au_target = 0.9};
  CapacitySectionInputs& in = d.capacity.in;
  in.accelerator = "h100-sxm";
  in.accelerator_name = "H100-SXM";
  in.model = "resnet50";
  in.au_target = 0.9;
  in.samples_per_s_per_gpu = 50;
  in.sample_bytes = 16384;
  in.point_s = 2;
  in.budget_s = 60;
  in.elapsed_s = 7.9;
  in.repeats = 2;
  in.max_gpus = 4;
  in.stop = CapacityStop::kCompleted;
  d.capacity.answer.gpus_fed = 2;
  d.capacity.answer.bound = "client-cpu";
  d.capacity.answer.boundary_measured = true;
  d.capacity.answer.text = "client-bound on host h2 at 2: add hosts";
  CapacityPoint one = across_point(2);
  one.client_bound = false;
  one.client_host.clear();
  one.worker_runq_share = -1;  // not measured: null
  one.decode_us_per_sample = 0;
  d.capacity.answer.points = {one, across_point(4)};
  d.capacity.device_io[2].all = disk_io(2 << 20);
  d.capacity.device_io[2].hosts[0] = disk_io(1 << 20);
  d.capacity.device_io[2].hosts[1] = disk_io(1 << 20);
  d.capacity.device_io[4].all.reason = "no block device: RAM (tmpfs)";  // not measured
  CalibrationEffect e;
  e.ranks = 2;
  e.num_workers = 2;
  e.batch_size = 16;
  e.cpus = 8;
  e.calibrated = {56, 82, 35000, 0, 24516, 24516, "CPUs"};
  e.uncalibrated = {0, 0, 0, 0, 0, 0, "none"};
  d.capacity.calibration_effect = e;
  d.partial = false;
  d.warnings = {"a warning"};
  d.cluster = CapacityClusterSection{.launcher = "OpenMPI mpirun",
                                     .hosts = 2,
                                     .hostnames = {"h1", "h2"},
                                     .mpi_ranks = 4,
                                     .dataset_placement = "shared",
                                     .dataset_placement_how = "one directory",
                                     .split = "evenly",
                                     .merge = "summed"};
  return d;
}

}  // namespace

TEST_CASE("capacity point codec: every field round-trips, host rows and client_host with them", "[capacity_document]") {
  const CapacityPoint p = across_point(4);
  const CapacityPoint back = capacity_point_from_json(json::parse(capacity_point_json(p).dump()), "p");
  CHECK(capacity_point_json(back) == capacity_point_json(p));
  CHECK(back.worker_runq_share == p.worker_runq_share);
  CHECK(back.decode_us_per_sample == p.decode_us_per_sample);
  CHECK(back.client_host == "h2");
  REQUIRE(back.hosts.size() == 2);
  CHECK(back.hosts[1].mpi_ranks == std::vector<int>{2, 3});
  CHECK(back.hosts[1].delivered_bytes == 60000001);
  // One host: no host rows, no client_host; runq not measured is null and reads back as -1.
  CapacityPoint lone = p;
  lone.hosts.clear();
  lone.client_host.clear();
  lone.worker_runq_share = -1;
  lone.decode_us_per_sample = 0;
  const json lj = capacity_point_json(lone);
  CHECK_FALSE(lj.contains("hosts"));
  CHECK_FALSE(lj.contains("client_host"));
  CHECK_FALSE(lj.contains("decode_us_per_sample"));
  CHECK(lj["worker_runq_share"].is_null());
  CHECK(capacity_point_from_json(lj, "p").worker_runq_share == -1);
  // The wire: what rank 0 hands the other processes is the same codec, through the gather's decoder.
  const CapacityPoint wire = cluster::decode_gathered<CapacityPoint>(json(p).dump(), 0, "capacity: share the point");
  CHECK(capacity_point_json(wire) == capacity_point_json(p));
  json bad = capacity_point_json(p);
  bad["hosts"][1].erase("cpus_allowed");
  CHECK_THROWS_WITH(capacity_point_from_json(bad, "p"), "p.hosts[1]: missing key 'cpus_allowed'");
  CHECK_THROWS_WITH(cluster::decode_gathered<CapacityPoint>(bad.dump(), 0, "capacity: share the point"),
                    Catch::Contains("rank 0") &&
                        Catch::Contains("capacity point.hosts[1]: missing key 'cpus_allowed'"));
}

TEST_CASE("capacity document: written and read back equal, every optional part included", "[capacity_document]") {
  const CapacityDocument d = full_capacity_document();
  const json j = capacity_document_json(d);
  const CapacityDocument back = capacity_document_from_json(json::parse(j.dump()), "'t.json'");
  CHECK(capacity_document_json(back) == j);
  CHECK(back.capacity.answer.gpus_fed == 2);
  REQUIRE(back.capacity.calibration_effect);
  CHECK(back.capacity.calibration_effect->calibrated.samples_per_s == 24516);
  CHECK(back.capacity.device_io.at(2).hosts.at(1).bytes_read == (1 << 20));
  CHECK(back.capacity.device_io.at(2).all.start_unix_s == 1.7e9);
  CHECK_FALSE(back.capacity.device_io.at(4).all.measured());
  // Derived figures are written from the typed values.
  CHECK(j["capacity"]["points"][1]["demand_samples_per_s"].get<double>() == 200);
  CHECK(j["capacity"]["points"][1]["passed"] == true);
  CHECK(j["capacity"]["points"][0]["hosts"][1]["device_io"]["read_ratio"].is_number());
  CHECK_FALSE(j["capacity"]["points"][1]["hosts"][0].contains("device_io"));
  // The typed value renders the same text as its JSON read back.
  CHECK(render_capacity_text(back) == render_capacity_text(d));
  CHECK_THAT(render_capacity_text(d), Catch::Contains("client-bound at 2 x H100-SXM: add hosts") &&
                                          Catch::Contains("hosts      2 (h1, h2), 4 MPI ranks"));
}

TEST_CASE("capacity document: a missing or mistyped field is refused naming its path", "[capacity_document]") {
  const json good = capacity_document_json(full_capacity_document());
  auto refused = [&](const std::function<void(json&)>& edit) {
    json j = good;
    edit(j);
    try {
      capacity_document_from_json(j, "'t.json'");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused([](json& j) { j["capacity"]["points"][1].erase("au"); }) ==
        "'t.json'.capacity.points[1]: missing key 'au'");
  CHECK(refused([](json& j) { j["capacity"]["points"][0]["au_min"] = "high"; }) ==
        "'t.json'.capacity.points[0].au_min: expected a number, found \"high\"");
  CHECK(refused([](json& j) { j["capacity"]["gpus_fed"] = -1; }) ==
        "'t.json'.capacity.gpus_fed: expected a non-negative integer in range, found -1");
  CHECK(refused([](json& j) { j["capacity"]["points"][0]["passed"] = 1; }) ==
        "'t.json'.capacity.points[0].passed: expected true or false, found 1");
  CHECK(refused([](json& j) { j["capacity"]["points"][0]["device_io"].erase("bytes_read"); }) ==
        "'t.json'.capacity.points[0].device_io: missing key 'bytes_read'");
  CHECK(refused([](json& j) { j["capacity"]["points"][0]["hosts"][0]["device_io"]["read_ratio"] = "x"; }) ==
        "'t.json'.capacity.points[0].hosts[0].device_io.read_ratio: expected a number, found \"x\"");
  CHECK(refused([](json& j) { j["capacity"]["calibration_effect"]["setting"].erase("cpus"); }) ==
        "'t.json'.capacity.calibration_effect.setting: missing key 'cpus'");
  CHECK(refused([](json& j) { j["loader"].erase("num_workers"); }) == "'t.json'.loader: missing key 'num_workers'");
  CHECK(refused([](json& j) { j["demand"]["au_target"] = nullptr; }) ==
        "'t.json'.demand.au_target: expected a number, found null");
  CHECK(refused([](json& j) { j.erase("dataset"); }) == "'t.json': missing key 'dataset'");
  CHECK(refused([](json& j) { j["kind"] = "run"; }) == "'t.json'.kind: 'run' is not a capacity document");
  CHECK(refused([](json& j) { j["capacity"]["points"] = json::object(); }) ==
        "'t.json'.capacity.points: expected an array, found {}");
  CHECK(refused([](json& j) { j["cluster"]["hostnames"][1] = 2; }) ==
        "'t.json'.cluster.hostnames[1]: expected a string, found 2");
  CHECK(refused([](json& j) { j["cluster"].erase("split"); }) == "'t.json'.cluster: missing key 'split'");
  CHECK(refused([](json& j) { j["cluster"]["mpi_ranks"] = 4.5; }) ==
        "'t.json'.cluster.mpi_ranks: expected an integer in range, found 4.5");
}

TEST_CASE("capacity document: a document `ioprobe capacity` saved reads back, writes the same bytes and renders the "
          "same text",
          "[capacity_document]") {
  // Saved with `ioprobe capacity --json --calibration` before the document was typed, with the
  // text it printed.
  const std::string saved_text = capacity_file_text(kCapacityDocs + "/capacity_small.json");
  const json saved = json::parse(saved_text);
  const CapacityDocument doc = capacity_document_from_json(saved, "'capacity_small.json'");
  CHECK(doc.capacity.answer.points.size() == 2);
  CHECK(doc.capacity.calibration_effect.has_value());
  CHECK(doc.capacity.device_io.size() == 2);
  // Its points of one repeat wrote spread 0.0, read as such; written again, they have none (null),
  // and the text shows "-" for them.
  json expected = saved;
  for (auto& p : expected["capacity"]["points"]) {
    REQUIRE(p["repeats"] == 1);
    p["spread"] = nullptr;
  }
  CHECK(capacity_document_json(doc) == expected);
  CHECK(capacity_document_from_json(expected, "'capacity_small.json'").capacity.answer.points[0].spread == 0.0);
  CHECK(render_capacity_text(doc) == capacity_file_text(kCapacityDocs + "/capacity_small.txt"));
  CHECK_THAT(render_html_report({saved}), Catch::Contains("data-chart=\"capacity-au\""));
}
