// NUMA topology and thread placement.
//
// discover() reads a sysfs tree (the live "/sys", or a recorded fixture under tests/fixtures/sysfs/):
//   devices/system/node/nodeN/{cpulist,distance,meminfo}   nodes, their CPUs, SLIT distances
//   devices/system/cpu/online                               online CPUs
//   bus/pci/devices/<BDF>/{class,numa_node,vendor,device}   PCI functions and their node
// and intersects the CPUs this process may use (sched_getaffinity, and the cgroup v2 cpuset when
// the root is the live /sys) with the tree's online CPUs.
//
// Placement ("none" | "local" | "interleave" | "node:N") is what `--numa` asks for; the loader calls
// bind_current_thread() at the start of each worker thread, before it allocates its buffers, so
// first-touch puts them on the chosen node (binding later leaves memory behind; NVIDIA/TensorRT-LLM#18117).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/device_class.hpp"

namespace ioprobe {

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;       // from nodeN/cpulist
  std::vector<int> distances;  // nodeN/distance: SLIT distance to node i (10 = local), index = position in nodes
  uint64_t memory_bytes = 0;   // "Node N MemTotal" from nodeN/meminfo, 0 unknown
};

/// A PCI function of interest and the node its slot is attached to.
struct PciDevice {
  std::string address;      // "0000:81:00.0"
  uint32_t class_code = 0;  // 24-bit class from `class` (0x010802 NVMe, 0x030200 3D controller, ...)
  std::string kind;         // "nvme" | "gpu" | "nic" | "storage" | "other"
  int numa_node = -1;       // -1: firmware gave no locality (typical on VMs and single-socket boxes)
  std::string vendor;       // "0x10de"
  std::string device;       // "0x2330"
  PcieLink link;            // its own current/max link (topology/device_class.hpp); zeros when sysfs has none
  std::string upstream;     // the sysfs parent: the bridge or switch port above it ("0000:c0:01.0"), or the
                            // root complex ("pci0000:c0") when it sits directly on one
};

struct Topology {
  std::string sysfs_root;       // where it was read from
  std::vector<NumaNode> nodes;  // sorted by id; empty when the tree has no node directory
  std::vector<int> online_cpus;
  std::vector<int> allowed_cpus;  // online ∩ sched_getaffinity ∩ cpuset: what workers may use
  std::vector<PciDevice> pci;     // only kinds nvme, gpu, nic, storage
  bool live() const { return sysfs_root == "/sys"; }
  /// Node holding CPU `cpu`, -1 when none does.
  int node_of_cpu(int cpu) const;
  /// Whether `node` is one of `nodes`.
  bool has_node(int node) const;
  /// The node shared by every PCI device of `kind` ("gpu", "nvme", "nic"); -1 when there are none,
  /// they disagree, or any reports -1.
  int common_node(const std::string& kind) const;
  /// Devices of kinds nvme, nic and storage under the same upstream port as `dev` (a switch or
  /// root port: peer-to-peer traffic need not cross the CPU), and those on the same NUMA node
  /// (the same socket) but not under that port; addresses, sorted.
  std::vector<std::string> same_upstream(const PciDevice& dev) const;
  std::vector<std::string> same_node_only(const PciDevice& dev) const;
  /// The GPUs (kind "gpu"), sorted by PCI address (CUDA_DEVICE_ORDER=PCI_BUS_ID order).
  std::vector<PciDevice> gpus() const;
};

/// Reads the topology under `sysfs_root`. Never throws; missing files leave fields empty.
Topology discover(const std::string& sysfs_root = "/sys");

/// "0-3,8,10-11" -> {0,1,2,3,8,10,11}. Throws UsageError naming `what` on malformed text.
std::vector<int> parse_cpu_list(const std::string& text, const std::string& what = "cpu list");

/// Sorted intersection of two sorted CPU lists.
std::vector<int> intersect_cpus(const std::vector<int>& a, const std::vector<int>& b);

/// The PCI class code's kind: 0x0108xx nvme, 0x01xxxx storage, 0x0300xx/0x0302xx gpu,
/// 0x0200xx/0x0207xx nic (Ethernet, InfiniBand), else "other" (PCI Code and ID Assignment spec).
std::string pci_kind(uint32_t class_code);

/// What `--numa` asks for.
struct Placement {
  enum class Kind { None, Local, Interleave, Node };
  Kind kind = Kind::None;
  int node = -1;             // Kind::Node: the node; after resolve_local(): the device's node
  std::string text() const;  // "none", "local", "interleave", "node:1"
};

/// Parses "none|local|interleave|node:N". Throws UsageError naming --numa and the value.
Placement parse_placement(const std::string& text);

/// Turns Local into Node(device_node) when the topology has that node and more than one node,
/// else into None; `why` receives a sentence for the report. Other kinds pass through.
Placement resolve_local(const Placement& p, int device_node, const Topology& topo, std::string* why = nullptr);

/// The result of binding one thread.
struct BindResult {
  bool bound = false;       // a policy was applied
  int err = 0;              // errno when binding failed, else 0
  std::string description;  // "node 1: CPUs 2-3, memory preferred on node 1", "not bound: ..."
  std::vector<int> cpus;    // the thread's CPU mask after the call (sched_getaffinity)
};

/// Applies `p` to the calling thread with libnuma: Node -> numa_run_on_node(N) and
/// numa_set_preferred(N) (preferred, not strict membind, so a full node slows rather than
/// OOM-kills the run); Interleave -> numa_set_interleave_mask(all nodes); None -> nothing.
/// Local must be resolved first (resolve_local). Does nothing (bound=false, with the reason) when
/// libnuma reports NUMA unavailable or `topo` is a fixture tree. Never throws.
BindResult bind_current_thread(const Placement& p, const Topology& topo);

/// The calling thread's CPU mask (sched_getaffinity(0)), for "each worker's CPU set" in reports.
std::vector<int> current_thread_cpus();

/// Advice for launching the training job near a device.
struct NumactlAdvice {
  bool binding_needed = false;
  std::string command;  // "numactl --cpunodebind=1 --membind=1" when needed, else ""
  std::string reason;   // why, or why no binding is needed
};

/// numactl advice for a device on `node` (e.g. common_node("gpu")). Binding is advised only for a
/// real node (>= 0, present in `topo`) on a machine with more than one node; never --cpunodebind=-1.
NumactlAdvice numactl_line(const Topology& topo, int node);

/// The numactl advice for the processes feeding the GPUs: workers (and their pinned buffers) go on
/// the node of the GPUs they feed, whatever node the data comes from.
struct GpuPlacementAdvice {
  struct NodeGroup {
    int node = -1;                  // -1: these GPUs report no node
    std::vector<std::string> gpus;  // PCI addresses, sorted
    NumactlAdvice advice;           // numactl_line(topo, node)
  };
  std::vector<NodeGroup> groups;  // one per node holding GPUs, by node; empty without GPUs
  bool split = false;             // GPUs on more than one node: one process (or rank set) per node
  std::string command;            // the one numactl line when all GPUs share a bindable node, else ""
  std::string reason;             // one or two sentences: where to bind and why
  std::string data_note;          // when the data's device and (some) GPUs are on different nodes
};

/// Advice for the GPUs of `topo`, with the data's device on `data_node` (-1 unknown). Never throws.
GpuPlacementAdvice gpu_placement_advice(const Topology& topo, int data_node);

}  // namespace ioprobe
