// The last hop to the GPU on recorded sysfs trees: GPUs on both sockets, Gen4
// and Gen5 links, a downtrained link; the host-to-device verdict and the numactl advice by the
// GPUs' node.
#include <catch2/catch.hpp>

#include "ingest/analysis.hpp"
#include "ingest/h2d_link.hpp"
#include "report/probe_document.hpp"
#include "report/run_document.hpp"
#include "report/run_text.hpp"
#include "topology/numa.hpp"
#include "tune/recommend.hpp"

using namespace ioprobe;

namespace {
const std::string kBoth = std::string(IOPROBE_FIXTURES) + "/sysfs/two-socket-gpus-both-nodes";
const std::string kNode1 = std::string(IOPROBE_FIXTURES) + "/sysfs/two-socket-nvme-gpu-node1";

// A run that fed its GPUs (AU 95%): only the link can make the verdict something else.
LoaderResult fed_run(double sample_bytes) {
  LoaderResult r;
  r.elapsed_ns = 10'000'000'000LL;
  r.samples = 10000;
  r.bytes = static_cast<uint64_t>(sample_bytes * 10000);
  RankStats rk;
  rk.nominal_compute_ns = rk.compute_ns = 9'500'000'000LL;
  rk.elapsed_ns = r.elapsed_ns;
  rk.samples = r.samples;
  r.ranks.push_back(rk);
  WorkerStats w;
  w.busy_ns = 2'000'000'000LL;
  r.workers.push_back(w);
  r.file_latency.record(1000000);
  r.open_latency.record(1000);
  return r;
}

TunePoint point(uint32_t w, double rate, const std::string& numa) {
  TunePoint p;
  p.num_workers = w;
  p.prefetch_factor = 2;
  p.numa = numa;
  for (double f : {1.0, 1.01}) {
    TuneSample s;
    s.samples_per_s = rate * f;
    s.bytes_per_s = rate * f * 1e5;
    s.au = 0.5;
    s.cpu_used = 1;
    s.steady = true;
    p.runs.push_back(s);
  }
  summarize_point(p);
  return p;
}
}  // namespace

TEST_CASE("GPU topology: GPUs on both nodes, Gen4 and Gen5 links, one downtrained", "[topology][gpu]") {
  const Topology t = discover(kBoth);
  REQUIRE(t.nodes.size() == 2);
  const auto gpus = t.gpus();
  REQUIRE(gpus.size() == 3);
  CHECK(gpus[0].address == "0000:41:00.0");
  CHECK(gpus[0].numa_node == 0);
  CHECK(gpus[0].link.bytes_per_s_per_direction == Approx(31.51e9).epsilon(1e-3));  // Gen4 x16
  CHECK_FALSE(gpus[0].link.downtrained());
  CHECK(gpus[1].numa_node == 1);
  CHECK(gpus[1].link.bytes_per_s_per_direction == Approx(63.02e9).epsilon(1e-3));  // Gen5 x16
  CHECK_FALSE(gpus[1].link.downtrained());
  CHECK(gpus[2].link.downtrained());  // 16 GT/s x16 on a 32 GT/s x16 device
  CHECK(gpus[2].link.bytes_per_s_per_direction == Approx(31.51e9).epsilon(1e-3));
  CHECK_THAT(gpus[2].link.describe(), Catch::Contains("computed from the link's speed and width (nominal)") &&
                                          Catch::Contains("trained below its 32 GT/s x16"));
  CHECK(t.common_node("gpu") == -1);

  // The probe document: per-GPU downtrained flag and per-node advice.
  const nlohmann::json j = topology_json(t, 0);
  CHECK(j["gpus"][2]["pcie"]["downtrained"] == true);
  CHECK(j["gpus"][0]["pcie"]["downtrained"] == false);
  CHECK(j["numactl"]["gpu"]["split"] == true);
  CHECK(j["numactl"]["gpu"]["per_node"].size() == 2);
  CHECK_THAT(j["numactl"]["gpu"]["data_note"].get<std::string>(), Catch::Contains("0000:81:00.0 0000:82:00.0"));
}

TEST_CASE("numactl advice follows the GPUs' node and says when the data is elsewhere", "[topology][gpu][numa]") {
  const Topology both = discover(kBoth);
  GpuPlacementAdvice a = gpu_placement_advice(both, 0);
  CHECK(a.split);
  CHECK(a.command.empty());
  REQUIRE(a.groups.size() == 2);
  CHECK(a.groups[0].gpus == std::vector<std::string>{"0000:41:00.0"});
  CHECK(a.groups[1].gpus == std::vector<std::string>{"0000:81:00.0", "0000:82:00.0"});
  CHECK_THAT(a.reason, Catch::Contains("numactl --cpunodebind=0 --membind=0 for 0000:41:00.0") &&
                           Catch::Contains("numactl --cpunodebind=1 --membind=1 for 0000:81:00.0 0000:82:00.0"));
  CHECK_THAT(a.data_note,
             Catch::Contains("node 0") && Catch::Contains("0000:81:00.0") && !Catch::Contains("0000:41:00.0"));

  const Topology one = discover(kNode1);
  GpuPlacementAdvice b = gpu_placement_advice(one, 1);  // data and GPUs both on node 1
  CHECK_FALSE(b.split);
  CHECK(b.command == "numactl --cpunodebind=1 --membind=1");
  CHECK(b.data_note.empty());
  CHECK_THAT(gpu_placement_advice(one, 0).data_note, Catch::Contains("data's device is on node 0"));
  CHECK(gpu_placement_advice(Topology{}, 0).groups.empty());
}

TEST_CASE("tune's numactl line binds to the GPUs' node, not the fastest read node", "[tune][gpu][numa]") {
  RecommendInputs in;
  in.required_samples_per_s = 1e6;
  in.cpus_allowed = 4;
  // Reads are fastest bound to node 0 (the data's drive), the GPUs are on node 1.
  std::vector<TunePoint> t = {point(4, 3000, "none"), point(4, 4000, "node:0"), point(4, 2500, "node:1")};
  Recommendation r = recommend(t, in, discover(kNode1));
  CHECK(r.binding_helped);
  CHECK(r.numactl == "numactl --cpunodebind=1 --membind=1 python train.py");
  CHECK_THAT(r.numa_reason, Catch::Contains("different nodes") && Catch::Contains("GPUs are on node 1"));
  // GPUs on both nodes: one process per node, no single line.
  Recommendation s = recommend(t, in, discover(kBoth));
  CHECK(s.numactl.empty());
  CHECK_THAT(s.numa_reason, Catch::Contains("GPUs on 2 nodes"));
}

TEST_CASE("verdict: host-to-device link when the demand per GPU exceeds its link's ceiling", "[ingest][gpu]") {
  const Topology both = discover(kBoth);
  CHECK(gpu_link_ceilings(both, 1).size() == 1);
  CHECK(gpu_link_ceilings(both, 2)[1].pci_address == "0000:81:00.0");
  CHECK(gpu_link_ceilings(both, 16).size() == 3);
  CHECK(gpu_link_ceilings(Topology{}, 4).empty());

  Demand d;
  d.samples_per_s_per_gpu = 1000;
  d.gpus = 2;
  d.au_target = 0.9;
  AnalysisInputs in;
  in.cpus_allowed = 64;
  in.gpu_links = gpu_link_ceilings(both, 2);  // Gen4 x16 (31.5 GB/s) and Gen5 x16 (63 GB/s)

  in.sample_bytes = 20e6;  // 20 GB/s per GPU: both links carry it
  IngestResult ok = analyze_ingest(fed_run(in.sample_bytes), d, in);
  CHECK(ok.verdict == "none");
  CHECK(ok.h2d_limiting == -1);
  CHECK(ok.demand_bytes_per_s_per_gpu == Approx(20e9));

  in.sample_bytes = 40e6;  // 40 GB/s per GPU: over the Gen4 link, under the Gen5 one
  IngestResult over = analyze_ingest(fed_run(in.sample_bytes), d, in);
  CHECK(over.verdict == "host-to-device link");
  CHECK(over.gpus_fed == 0);
  CHECK_THAT(over.verdict_text, Catch::Contains("0000:41:00.0") && Catch::Contains("31.51 GB/s per direction") &&
                                    Catch::Contains("computed from the link's speed and width (nominal)") &&
                                    Catch::Contains("40.00 GB/s"));

  // The downtrained Gen4 x8 link of the other fixture (15.75 GB/s) is named as such.
  in.gpu_links = gpu_link_ceilings(discover(kNode1), 2);
  in.sample_bytes = 20e6;
  IngestResult slow = analyze_ingest(fed_run(in.sample_bytes), d, in);
  CHECK(slow.verdict == "host-to-device link");
  CHECK_THAT(slow.verdict_text, Catch::Contains("0000:c2:00.0") && Catch::Contains("DOWNTRAINED"));

  // No GPU in the topology: nothing to check, the verdict is the loader's.
  in.gpu_links.clear();
  CHECK(analyze_ingest(fed_run(in.sample_bytes), d, in).verdict == "none");

  // The document and its text carry the ceilings, labelled.
  const nlohmann::json ij = ingest_json(slow, 20e6);
  CHECK(ij["host_to_device"]["limiting"] == "0000:c2:00.0");
  CHECK(ij["host_to_device"]["gpus"][1]["downtrained"] == true);
}
