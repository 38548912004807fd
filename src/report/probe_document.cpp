#include "report/probe_document.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/host.hpp"

namespace ioprobe {

namespace {
nlohmann::json advice_json(const NumactlAdvice& a, int node) {
  return {{"binding_needed", a.binding_needed}, {"command", a.command}, {"reason", a.reason}, {"node", node}};
}
}  // namespace

nlohmann::json topology_json(const Topology& topo, int target_device_node) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : topo.nodes)
    nodes.push_back({{"id", n.id},
                     {"cpus", cpu_list_string(n.cpus)},
                     {"distances", n.distances},
                     {"memory_bytes", n.memory_bytes}});
  nlohmann::json pci = nlohmann::json::array();
  for (const auto& d : topo.pci)
    pci.push_back({{"address", d.address},
                   {"kind", d.kind},
                   {"class", fmt::format("0x{:06x}", d.class_code)},
                   {"numa_node", d.numa_node},
                   {"vendor", d.vendor},
                   {"device", d.device}});
  nlohmann::json gpus_json = nlohmann::json::array();
  for (const auto& d : topo.pci) {
    if (d.kind != "gpu") continue;
    auto num = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
    gpus_json.push_back(
        {{"pci_address", d.address},
         {"vendor", d.vendor},
         {"vendor_name", d.vendor == "0x10de"   ? "NVIDIA"
                         : d.vendor == "0x1002" ? "AMD"
                                                : "other"},
         {"device", d.device},
         {"numa_node", d.numa_node},
         {"upstream", d.upstream},
         {"pcie",
          {{"link_speed_gts", num(d.link.speed_gts)},
           {"link_width", d.link.width > 0 ? nlohmann::json(d.link.width) : nlohmann::json(nullptr)},
           {"max_link_speed_gts", num(d.link.max_speed_gts)},
           {"max_link_width", d.link.max_width > 0 ? nlohmann::json(d.link.max_width) : nlohmann::json(nullptr)},
           {"bytes_per_s_per_direction", num(d.link.bytes_per_s_per_direction)},
           {"downtrained", d.link.downtrained()},
           {"label", "nominal link ceiling, computed from the link's speed and width"}}},
         {"same_upstream", topo.same_upstream(d)},
         {"same_node", topo.same_node_only(d)}});
  }
  const GpuPlacementAdvice gpa = gpu_placement_advice(topo, target_device_node);
  const int gpu = gpa.split || gpa.groups.empty() ? -1 : gpa.groups.front().node;
  nlohmann::json gpu_advice = advice_json({!gpa.command.empty(), gpa.command, gpa.reason}, gpu);
  nlohmann::json per_node = nlohmann::json::array();
  for (const auto& g : gpa.groups)
    per_node.push_back({{"node", g.node}, {"gpus", g.gpus}, {"command", g.advice.command}});
  gpu_advice["per_node"] = per_node;
  gpu_advice["split"] = gpa.split;
  gpu_advice["data_note"] = gpa.data_note;
  return {{"sysfs_root", topo.sysfs_root},
          {"nodes", nodes},
          {"online_cpus", cpu_list_string(topo.online_cpus)},
          {"allowed_cpus", cpu_list_string(topo.allowed_cpus)},
          {"allowed_cpu_count", topo.allowed_cpus.size()},
          {"pci", pci},
          {"gpus", gpus_json},
          {"numactl",
           {{"gpu", gpu_advice},
            {"target_device", advice_json(numactl_line(topo, target_device_node), target_device_node)}}}};
}

nlohmann::json io_uring_json(const UringAvailability& u) {
  return {{"available", u.available},
          {"cause", u.cause},
          {"errno", u.err ? errno_name(u.err) : ""},
          {"syscall", u.syscall},
          {"io_uring_disabled", u.io_uring_disabled},
          {"memlock_limit_bytes",
           u.memlock_limit_bytes == UINT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(u.memlock_limit_bytes)},
          {"memlock_needed_bytes", u.memlock_needed_bytes},
          {"memlock_hard_limit_bytes",
           u.memlock_hard_bytes == UINT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(u.memlock_hard_bytes)},
          {"cap_ipc_lock", u.cap_ipc_lock},
          {"rings_charged_to_memlock", u.rings_charged},
          {"ring_locked_bytes", u.ring_bytes},
          {"memlock_allows", u.memlock_allows},
          {"message", u.message}};
}

nlohmann::json engine_choice_json(const EngineChoice& c, bool buffered, unsigned depth) {
  return {{"engine", c.engine}, {"reason", c.reason},     {"buffered", buffered},
          {"depth", depth},     {"fallback", c.fallback}, {"warning", c.warning}};
}

}  // namespace ioprobe
