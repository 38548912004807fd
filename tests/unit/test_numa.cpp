#include <catch2/catch.hpp>

#include <thread>

#include "core/error.hpp"
#include "sysfs_fixtures.hpp"
#include "topology/numa.hpp"

using namespace ioprobe;

TEST_CASE("NUMA fixture: two sockets, NVMe and GPUs on node 1", "[numa]") {
  Topology t = discover(kTwoSocket);
  REQUIRE(t.nodes.size() == 2);
  CHECK(t.nodes[0].cpus == std::vector<int>{0, 1});
  CHECK(t.nodes[1].cpus == std::vector<int>{2, 3});
  CHECK(t.nodes[0].distances == std::vector<int>{10, 21});
  CHECK(t.nodes[1].distances == std::vector<int>{21, 10});
  CHECK(t.nodes[1].memory_bytes == 65536000ULL * 1024);
  CHECK(t.online_cpus == std::vector<int>{0, 1, 2, 3});
  // allowed = this process's affinity ∩ the fixture's CPUs: never outside the fixture.
  CHECK(intersect_cpus(t.allowed_cpus, t.online_cpus) == t.allowed_cpus);
  CHECK(t.node_of_cpu(3) == 1);
  CHECK(t.node_of_cpu(9) == -1);
  REQUIRE(t.pci.size() == 4);  // the ISA bridge (class 0x0601) is left out
  CHECK(t.common_node("gpu") == 1);
  CHECK(t.common_node("nvme") == 1);
  CHECK(t.common_node("nic") == 0);
  NumactlAdvice a = numactl_line(t, t.common_node("gpu"));
  CHECK(a.binding_needed);
  CHECK(a.command == "numactl --cpunodebind=1 --membind=1");
  CHECK_FALSE(numactl_line(t, 7).binding_needed);  // not a node of this machine
}

TEST_CASE("NUMA fixture: devices report numa_node -1 -> no binding", "[numa]") {
  Topology t = discover(kMinusOne);
  REQUIRE(t.nodes.size() == 1);
  CHECK(t.common_node("gpu") == -1);
  for (const auto& d : t.pci) CHECK(d.numa_node == -1);
  NumactlAdvice a = numactl_line(t, t.common_node("gpu"));
  CHECK_FALSE(a.binding_needed);
  CHECK(a.command.empty());
  CHECK(a.reason.find("no NUMA binding needed") != std::string::npos);
  CHECK(a.reason.find("--cpunodebind") == std::string::npos);
  // Even a valid node id on a single-node machine needs no binding.
  CHECK_FALSE(numactl_line(t, 0).binding_needed);
}

TEST_CASE("parse_cpu_list and intersect_cpus", "[numa]") {
  CHECK(parse_cpu_list("0-3,8,10-11") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  CHECK(parse_cpu_list("5") == std::vector<int>{5});
  CHECK(parse_cpu_list("").empty());
  CHECK_THROWS_AS(parse_cpu_list("3-1"), UsageError);
  CHECK_THROWS_AS(parse_cpu_list("a"), UsageError);
  CHECK_THROWS_AS(parse_cpu_list("1-x"), UsageError);
  // Decimal only, as every other number: no sign, no base prefix; sysfs's trailing newline is fine.
  CHECK(parse_cpu_list("0-1\n") == std::vector<int>{0, 1});
  for (const char* bad : {"+1", "0-+3", "0x1", "-1", "1--2", "1-2-3"}) CHECK_THROWS_AS(parse_cpu_list(bad), UsageError);
  CHECK(intersect_cpus({0, 1, 2, 3}, {1, 3, 5}) == std::vector<int>{1, 3});
}

TEST_CASE("pci_kind from the class code", "[numa]") {
  CHECK(pci_kind(0x010802) == "nvme");
  CHECK(pci_kind(0x010601) == "storage");
  CHECK(pci_kind(0x030200) == "gpu");
  CHECK(pci_kind(0x030000) == "gpu");
  CHECK(pci_kind(0x020000) == "nic");
  CHECK(pci_kind(0x020700) == "nic");
  CHECK(pci_kind(0x060000) == "other");
}

TEST_CASE("Placement parsing and local resolution", "[numa]") {
  CHECK(parse_placement("none").kind == Placement::Kind::None);
  CHECK(parse_placement("interleave").kind == Placement::Kind::Interleave);
  Placement p = parse_placement("node:1");
  CHECK(p.kind == Placement::Kind::Node);
  CHECK(p.node == 1);
  CHECK(p.text() == "node:1");
  CHECK_THROWS_AS(parse_placement("node:"), UsageError);
  CHECK_THROWS_AS(parse_placement("node:-1"), UsageError);
  CHECK_THROWS_AS(parse_placement("socket1"), UsageError);

  Topology two = discover(kTwoSocket), one = discover(kMinusOne);
  std::string why;
  Placement local = parse_placement("local");
  Placement r = resolve_local(local, 1, two, &why);
  CHECK(r.kind == Placement::Kind::Node);
  CHECK(r.node == 1);
  CHECK(resolve_local(local, -1, two, &why).kind == Placement::Kind::None);
  CHECK(why.find("-1") != std::string::npos);
  CHECK(resolve_local(local, 0, one, &why).kind == Placement::Kind::None);
  CHECK(why.find("single NUMA node") != std::string::npos);
}

TEST_CASE("bind_current_thread: fixture topologies are never applied to the live machine", "[numa]") {
  Topology two = discover(kTwoSocket);
  BindResult r = bind_current_thread(parse_placement("node:1"), two);
  CHECK_FALSE(r.bound);
  CHECK(r.description.find("fixture") != std::string::npos);
  CHECK_FALSE(r.cpus.empty());
}

TEST_CASE("bind_current_thread: node 0 on the live machine pins the thread to node 0's CPUs", "[numa]") {
  Topology live = discover();
  if (live.nodes.empty()) {
    WARN("no /sys/devices/system/node on this machine; skipping");
    return;
  }
  int node = live.nodes.front().id;
  BindResult r;
  std::thread th([&] { r = bind_current_thread(parse_placement("node:" + std::to_string(node)), live); });
  th.join();
  if (!r.bound) {
    WARN("binding not possible here: " << r.description);
    return;
  }
  std::vector<int> expect = intersect_cpus(live.nodes.front().cpus, live.allowed_cpus);
  CHECK(r.cpus == expect);
  CHECK(r.err == 0);
  BindResult none = bind_current_thread(parse_placement("none"), live);
  CHECK_FALSE(none.bound);
}

TEST_CASE("GPU PCIe links and their neighbours on the two-socket fixture", "[numa][topology]") {
  Topology t = discover(kTwoSocket);
  std::vector<const PciDevice*> gpus;
  for (const auto& d : t.pci)
    if (d.kind == "gpu") gpus.push_back(&d);
  REQUIRE(gpus.size() == 2);
  const PciDevice& a = *gpus[0];  // 0000:c1:00.0: Gen5 x16 as built
  CHECK(a.address == "0000:c1:00.0");
  CHECK(a.link.speed_gts == 32.0);
  CHECK(a.link.width == 16);
  CHECK(a.link.bytes_per_s_per_direction == Approx(63.0e9).epsilon(0.001));
  CHECK(a.upstream == "pci0000:c0");
  const PciDevice& b = *gpus[1];  // 0000:c2:00.0: trained down to Gen4 x8
  CHECK(b.link.speed_gts == 16.0);
  CHECK(b.link.width == 8);
  CHECK(b.link.max_speed_gts == 32.0);
  CHECK(b.link.max_width == 16);
  CHECK(b.link.bytes_per_s_per_direction == Approx(15.75e9).epsilon(0.001));
  // The NVMe drive is on the GPUs' node but under another root complex; the NIC is on node 0.
  CHECK(t.same_upstream(a).empty());
  CHECK(t.same_node_only(a) == std::vector<std::string>{"0000:81:00.0"});
  // A device without link attributes has none (zeros), not a guess.
  for (const auto& d : t.pci)
    if (d.kind == "nic") CHECK(d.link.width == 0);
}
