#include "topology/numa.hpp"
#include "topology/sysfs_dir.hpp"

#include <dirent.h>
#include <numa.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/host.hpp"

namespace ioprobe {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string s, line;
  while (std::getline(in, line)) s += line + "\n";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<int> cpus_or_empty(const std::string& text) {
  try {
    return parse_cpu_list(text);
  } catch (const UsageError&) {
    return {};
  }
}

// cgroup v2 cpuset of this process (cpuset.cpus.effective), empty when unknown.
std::vector<int> cgroup_cpuset() {
  std::ifstream cg("/proc/self/cgroup");
  std::string line;
  while (std::getline(cg, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    std::string t = read_text("/sys/fs/cgroup" + line.substr(3) + "/cpuset.cpus.effective");
    if (!t.empty()) return cpus_or_empty(t);
  }
  return {};
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text, const std::string& what) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string part;
  auto bad = [&] { return UsageError(fmt::format("{} '{}' is not a CPU list like '0-3,8'", what, text)); };
  while (std::getline(ss, part, ',')) {
    part.erase(std::remove_if(part.begin(), part.end(), ::isspace), part.end());
    if (part.empty()) continue;
    if (part.find_first_not_of("0123456789-") != std::string::npos) throw bad();  // decimal only: no '+', no 0x
    size_t dash = part.find('-');
    char* end = nullptr;
    long a = std::strtol(part.c_str(), &end, 10);
    if (end == part.c_str() || a < 0) throw bad();
    long b = a;
    if (dash != std::string::npos) {
      const char* s2 = part.c_str() + dash + 1;
      b = std::strtol(s2, &end, 10);
      if (end == s2 || b < a) throw bad();
    }
    if (*end != '\0' || b - a > 65536) throw bad();
    for (long c = a; c <= b; ++c) out.push_back(static_cast<int>(c));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> intersect_cpus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::string pci_kind(uint32_t c) {
  uint32_t base = c >> 16, sub = (c >> 8) & 0xff;
  if (base == 0x01 && sub == 0x08) return "nvme";
  if (base == 0x01) return "storage";
  if (base == 0x03 && (sub == 0x00 || sub == 0x02)) return "gpu";
  if (base == 0x12) return "gpu";  // processing accelerators (some AI accelerators)
  if (base == 0x02 && (sub == 0x00 || sub == 0x07)) return "nic";
  return "other";
}

int Topology::node_of_cpu(int cpu) const {
  for (const auto& n : nodes)
    if (std::binary_search(n.cpus.begin(), n.cpus.end(), cpu)) return n.id;
  return -1;
}

bool Topology::has_node(int node) const {
  for (const auto& n : nodes)
    if (n.id == node) return true;
  return false;
}

int Topology::common_node(const std::string& kind) const {
  int node = -2;
  for (const auto& d : pci) {
    if (d.kind != kind) continue;
    if (d.numa_node < 0) return -1;
    if (node == -2) node = d.numa_node;
    else if (node != d.numa_node) return -1;
  }
  return node < 0 ? -1 : node;
}

Topology discover(const std::string& sysfs_root) {
  Topology t;
  t.sysfs_root = sysfs_root;
  std::string node_dir = sysfs_root + "/devices/system/node";
  for (const auto& name : list_dir(node_dir)) {
    if (name.rfind("node", 0) != 0 || name.size() < 5 || !std::isdigit(static_cast<unsigned char>(name[4]))) continue;
    NumaNode n;
    n.id = std::atoi(name.c_str() + 4);
    n.cpus = cpus_or_empty(read_text(node_dir + "/" + name + "/cpulist"));
    std::stringstream ds(read_text(node_dir + "/" + name + "/distance"));
    for (int d; ds >> d;) n.distances.push_back(d);
    std::ifstream mi(node_dir + "/" + name + "/meminfo");
    std::string line;
    while (std::getline(mi, line)) {
      unsigned long long kb = 0;
      int id = 0;
      if (sscanf(line.c_str(), "Node %d MemTotal: %llu kB", &id, &kb) == 2) n.memory_bytes = kb * 1024ULL;
    }
    t.nodes.push_back(n);
  }
  std::sort(t.nodes.begin(), t.nodes.end(), [](auto& a, auto& b) { return a.id < b.id; });

  t.online_cpus = cpus_or_empty(read_text(sysfs_root + "/devices/system/cpu/online"));
  if (t.online_cpus.empty())
    for (const auto& n : t.nodes) t.online_cpus.insert(t.online_cpus.end(), n.cpus.begin(), n.cpus.end());
  std::sort(t.online_cpus.begin(), t.online_cpus.end());

  std::vector<int> affinity = current_thread_cpus();
  t.allowed_cpus = t.online_cpus.empty() ? affinity : intersect_cpus(t.online_cpus, affinity);
  if (t.live()) {
    std::vector<int> cpuset = cgroup_cpuset();
    if (!cpuset.empty()) t.allowed_cpus = intersect_cpus(t.allowed_cpus, cpuset);
  }

  std::string pci_dir = sysfs_root + "/bus/pci/devices";
  for (const auto& bdf : list_dir(pci_dir)) {
    std::string d = pci_dir + "/" + bdf;
    PciDevice p;
    p.address = bdf;
    p.class_code = static_cast<uint32_t>(std::strtoul(read_text(d + "/class").c_str(), nullptr, 16));
    p.kind = pci_kind(p.class_code);
    if (p.kind == "other") continue;
    std::string nn = read_text(d + "/numa_node");
    p.numa_node = nn.empty() ? -1 : std::atoi(nn.c_str());
    p.vendor = read_text(d + "/vendor");
    p.device = read_text(d + "/device");
    if (sysfs_exists(d + "/current_link_speed")) p.link = read_pcie_link(d);
    const std::string real = sysfs_resolve(d);
    if (!real.empty()) p.upstream = sysfs_base_name(sysfs_dir_name(real));
    t.pci.push_back(p);
  }
  return t;
}

std::vector<std::string> Topology::same_upstream(const PciDevice& dev) const {
  std::vector<std::string> out;
  for (const auto& d : pci)
    if (d.address != dev.address && d.kind != "gpu" && !dev.upstream.empty() && d.upstream == dev.upstream)
      out.push_back(d.address);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Topology::same_node_only(const PciDevice& dev) const {
  std::vector<std::string> out;
  for (const auto& d : pci)
    if (d.address != dev.address && d.kind != "gpu" && dev.numa_node >= 0 && d.numa_node == dev.numa_node &&
        (dev.upstream.empty() || d.upstream != dev.upstream))
      out.push_back(d.address);
  std::sort(out.begin(), out.end());
  return out;
}

std::string Placement::text() const {
  switch (kind) {
    case Kind::None:
      return "none";
    case Kind::Local:
      return "local";
    case Kind::Interleave:
      return "interleave";
    case Kind::Node:
      return fmt::format("node:{}", node);
  }
  return "none";
}

Placement parse_placement(const std::string& text) {
  Placement p;
  if (text == "none" || text.empty()) return p;
  if (text == "local") {
    p.kind = Placement::Kind::Local;
    return p;
  }
  if (text == "interleave") {
    p.kind = Placement::Kind::Interleave;
    return p;
  }
  if (text.rfind("node:", 0) == 0 && text.size() > 5 && text.size() < 10 &&
      text.find_first_not_of("0123456789", 5) == std::string::npos) {
    p.kind = Placement::Kind::Node;
    p.node = std::atoi(text.c_str() + 5);
    return p;
  }
  throw UsageError(fmt::format("--numa '{}' is not one of none, local, interleave, node:N (e.g. node:1)", text));
}

Placement resolve_local(const Placement& p, int device_node, const Topology& topo, std::string* why) {
  if (p.kind != Placement::Kind::Local) return p;
  Placement out;
  std::string reason;
  if (device_node < 0) {
    reason = "local: the target's device reports no NUMA node (numa_node -1 or no PCI device); not binding";
  } else if (topo.nodes.size() <= 1) {
    reason = fmt::format("local: single NUMA node; not binding");
  } else if (!topo.has_node(device_node)) {
    reason = fmt::format("local: device node {} is not among this machine's nodes; not binding", device_node);
  } else {
    out.kind = Placement::Kind::Node;
    out.node = device_node;
    reason = fmt::format("local: the target's device is on node {}", device_node);
  }
  if (why) *why = reason;
  return out;
}

std::vector<int> current_thread_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

BindResult bind_current_thread(const Placement& p, const Topology& topo) {
  BindResult r;
  auto finish = [&](std::string d) {
    r.description = std::move(d);
    r.cpus = current_thread_cpus();
    return r;
  };
  if (p.kind == Placement::Kind::None) return finish("not bound (--numa none)");
  if (p.kind == Placement::Kind::Local) return finish("not bound: placement 'local' was not resolved to a node");
  if (!topo.live()) return finish("not bound: topology read from fixture " + topo.sysfs_root);
  if (numa_available() < 0) return finish("not bound: libnuma reports NUMA unavailable on this kernel");
  if (p.kind == Placement::Kind::Interleave) {
    numa_set_interleave_mask(numa_all_nodes_ptr);
    r.bound = true;
    return finish(fmt::format("memory interleaved over nodes 0-{}; CPUs unbound", numa_max_node()));
  }
  if (!topo.has_node(p.node) || p.node > numa_max_node()) {
    r.err = EINVAL;
    return finish(fmt::format("not bound: node {} does not exist (nodes 0-{})", p.node, numa_max_node()));
  }
  errno = 0;
  if (numa_run_on_node(p.node) != 0) {
    r.err = errno ? errno : EINVAL;
    return finish(fmt::format("not bound: numa_run_on_node({}) failed: {}", p.node, errno_text(r.err)));
  }
  numa_set_preferred(p.node);
  r.bound = true;
  r.cpus = current_thread_cpus();
  r.description = fmt::format("node {}: CPUs {}, memory preferred on node {}", p.node, cpu_list_string(r.cpus), p.node);
  return r;
}

NumactlAdvice numactl_line(const Topology& topo, int node) {
  NumactlAdvice a;
  if (node < 0) {
    a.reason = "no NUMA binding needed: the device reports no NUMA node (numa_node -1)";
  } else if (topo.nodes.size() <= 1) {
    a.reason = "no NUMA binding needed: single NUMA node";
  } else if (!topo.has_node(node)) {
    a.reason = fmt::format("no NUMA binding advised: node {} is not among this machine's nodes", node);
  } else {
    a.binding_needed = true;
    a.command = fmt::format("numactl --cpunodebind={0} --membind={0}", node);
    a.reason = fmt::format("the device is on node {}; bind at launch so memory is first touched there", node);
  }
  return a;
}

std::vector<PciDevice> Topology::gpus() const {
  std::vector<PciDevice> out;
  for (const auto& d : pci)
    if (d.kind == "gpu") out.push_back(d);
  std::sort(out.begin(), out.end(), [](const PciDevice& a, const PciDevice& b) { return a.address < b.address; });
  return out;
}

GpuPlacementAdvice gpu_placement_advice(const Topology& topo, int data_node) {
  GpuPlacementAdvice a;
  for (const auto& g : topo.gpus()) {
    auto it = std::find_if(a.groups.begin(), a.groups.end(), [&](const auto& x) { return x.node == g.numa_node; });
    if (it == a.groups.end()) {
      a.groups.push_back({g.numa_node, {}, numactl_line(topo, g.numa_node)});
      it = a.groups.end() - 1;
    }
    it->gpus.push_back(g.address);
  }
  std::sort(a.groups.begin(), a.groups.end(), [](const auto& x, const auto& y) { return x.node < y.node; });
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
    return s;
  };
  if (a.groups.empty()) {
    a.reason = "no NUMA binding needed for GPUs: no GPU (PCI class 0x0300/0x0302) found";
    return a;
  }
  a.split = a.groups.size() > 1;
  if (!a.split) {
    const auto& g = a.groups.front();
    a.command = g.advice.command;
    a.reason =
        g.advice.binding_needed
            ? fmt::format("the GPUs ({}) are on node {}: bind the training processes and their DataLoader "
                          "workers there at launch, so pinned buffers are first touched next to the GPUs they feed",
                          join(g.gpus), g.node)
            : g.advice.reason;
  } else {
    std::string per;
    for (const auto& g : a.groups)
      per += fmt::format("{}{} for {}", per.empty() ? "" : "; ",
                         g.advice.binding_needed ? g.advice.command : fmt::format("no binding (node {})", g.node),
                         join(g.gpus));
    a.reason = fmt::format("GPUs on {} nodes: start one process (or one set of ranks) per node, each bound to the node "
                           "of the GPUs it feeds, with its workers: {}",
                           a.groups.size(), per);
  }
  if (data_node >= 0 && topo.nodes.size() > 1) {
    std::vector<std::string> far;
    for (const auto& g : a.groups)
      if (g.node >= 0 && g.node != data_node) far.insert(far.end(), g.gpus.begin(), g.gpus.end());
    if (!far.empty())
      a.data_note = fmt::format("the data's device is on node {} and GPU{} {} on another node: the bytes cross the "
                                "inter-socket link on their way to those GPUs; keep the workers on the GPUs' node (as "
                                "above) or put the data on a device local to them",
                                data_node, far.size() == 1 ? "" : "s", join(far));
  }
  return a;
}

}  // namespace ioprobe
