#include "report/probe_text.hpp"

#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/json_field.hpp"
#include "core/units.hpp"
#include "engine/engine_kind.hpp"

namespace ioprobe {

namespace {

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "unknown";
  const auto& v = j[key];
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.dump();
}

// A typed field as str() shows the JSON value: "-" for an empty string, "unknown" for null.
std::string str(const std::string& s) { return s.empty() ? "-" : s; }
template <class T>
std::string str(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "unknown";
}

std::string bytes(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return "unknown";
  return format_bytes(j[key].get<uint64_t>());
}

void line(std::string& out, const std::string& key, const std::string& value) {
  out += fmt::format("  {:<22} {}\n", key + ":", value);
}

void target_text(std::string& out, const TargetSection& t) {
  out += "Target\n";
  line(out, "path", str(t.path));
  line(out, "filesystem",
       fmt::format("{} (statfs magic {}; mountinfo type {})", str(t.fs_type), str(t.fs_magic), str(t.mount_fstype)));
  line(out, "mount", fmt::format("{} on {} ({})", str(t.mount_source), str(t.mount_point), str(t.mount_options)));
  if (t.network) line(out, "network filesystem", "yes");
  if (t.memory_backed) line(out, "memory backed", "yes (RAM, not a device)");
  std::string chain;
  for (const auto& l : t.device_chain) {
    if (!chain.empty()) chain += " -> ";
    chain += l.name + " (" + l.kind;
    if (!l.detail.empty()) chain += ": " + l.detail;
    chain += ")";
  }
  line(out, "device chain", chain.empty() ? "none (no block device)" : chain);
  const TargetRaid& r = t.raid;
  if (!r.kind.empty())
    line(out, "RAID",
         fmt::format("{} {} over {} members{}", r.kind, r.level, r.members.size(),
                     r.metadata_level.empty() ? "" : " (metadata " + r.metadata_level + ")"));
  if (!t.device.empty()) {
    line(out, "rotational", str(t.rotational));
    line(out, "block size",
         fmt::format("logical {} B, physical {} B", str(t.logical_block_bytes), str(t.physical_block_bytes)));
    line(out, "queue", fmt::format("nr_requests {}, scheduler {}", str(t.nr_requests), str(t.scheduler)));
    line(out, "model", fmt::format("{}{}", str(t.device_model), t.nvme ? " (NVMe)" : ""));
    const int node = t.device_numa_node;
    line(out, "device NUMA node", node < 0 ? "none (-1)" : std::to_string(node));
  }
  std::string od = str(t.o_direct);
  if (od == "refused") od += " (" + str(t.o_direct_errno) + ")";
  if (od != "not probed") od += ", probed on " + str(t.o_direct_probe_file);
  line(out, "O_DIRECT", od);
  line(out, "DIO alignment",
       !t.dio_mem_align_bytes
           ? std::string("not reported (statx STATX_DIOALIGN)")
           : fmt::format("memory {} B, offset {} B", str(t.dio_mem_align_bytes), str(t.dio_offset_align_bytes)));
  if (!t.free_bytes_known) line(out, "free", "not reported (the filesystem has no size limit, e.g. ramfs)");
  else line(out, "free", fmt::format("{}, {} inodes", format_bytes(t.free_bytes), format_count(t.free_inodes)));
}

// The topology section as probe wrote it (report/probe_document.hpp topology_json), read strictly:
// a missing or mistyped key is refused naming its path under `where`.
void topology_text(std::string& out, const nlohmann::json& topo, const std::string& where) {
  auto rows = [&](const char* key) { return std::pair{json_array_at(topo, key, where), json_path(where, key)}; };
  out += fmt::format("\nNUMA (sysfs {})\n", str(topo, "sysfs_root"));
  const auto [nodes, nw] = rows("nodes");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const nlohmann::json& n = nodes[i];
    const std::string w = json_path(nw, i);
    std::string d;
    for (const auto& x : json_array_at(n, "distances", w)) d += (d.empty() ? "" : " ") + x.dump();
    line(out, fmt::format("node {}", json_field<int>(n, "id", w)),
         fmt::format("CPUs {}, distances [{}], memory {}", json_field<std::string>(n, "cpus", w), d,
                     bytes(n, "memory_bytes")));
  }
  line(out, "online CPUs", str(topo, "online_cpus"));
  line(out, "allowed CPUs",
       fmt::format("{} ({} CPUs: sched_getaffinity and cpuset)", str(topo, "allowed_cpus"),
                   str(topo, "allowed_cpu_count")));
  const auto [pci, pw] = rows("pci");
  for (size_t i = 0; i < pci.size(); ++i) {
    const nlohmann::json& p = pci[i];
    const std::string w = json_path(pw, i);
    auto text = [&](const char* key) { return json_field<std::string>(p, key, w); };
    line(out, text("kind") + " " + text("address"),
         fmt::format("class {}, {}:{}, numa_node {}", text("class"), text("vendor"), text("device"),
                     json_field<int>(p, "numa_node", w)));
  }
  const auto [gpus, gw] = rows("gpus");
  for (size_t i = 0; i < gpus.size(); ++i) {
    const nlohmann::json& g = gpus[i];
    const std::string w = json_path(gw, i);
    const auto& l = g.at("pcie");
    std::string link = "no PCIe link facts in sysfs";
    if (!l.at("bytes_per_s_per_direction").is_null()) {
      link = fmt::format(
          "PCIe {:g} GT/s x{}: {:.1f} GB/s per direction (nominal: computed from the link's speed and width)",
          l.at("link_speed_gts").get<double>(), l.at("link_width").get<int>(),
          l.at("bytes_per_s_per_direction").get<double>() / 1e9);
      if (!l.at("max_link_speed_gts").is_null() && !l.at("max_link_width").is_null() &&
          (l.at("max_link_speed_gts").get<double>() > l.at("link_speed_gts").get<double>() ||
           l.at("max_link_width").get<int>() > l.at("link_width").get<int>()))
        link += fmt::format("; DOWNTRAINED: below its {:g} GT/s x{}", l.at("max_link_speed_gts").get<double>(),
                            l.at("max_link_width").get<int>());
    }
    std::string near;
    for (const char* k : {"same_upstream", "same_node"}) {
      std::string list;
      for (const auto& a : json_field<std::vector<std::string>>(g, k, w)) list += (list.empty() ? "" : " ") + a;
      if (!list.empty())
        near += fmt::format("; {} {}",
                            std::string(k) == "same_upstream" ? "same switch/root port:" : "same node:", list);
    }
    line(out, "GPU " + json_field<std::string>(g, "pci_address", w),
         fmt::format("{} {}, node {}, {}{}", json_field<std::string>(g, "vendor_name", w),
                     json_field<std::string>(g, "device", w), json_field<int>(g, "numa_node", w), link, near));
  }
  const nlohmann::json& adv = json_object_at(topo, "numactl", where);
  const std::string aw = json_path(where, "numactl");
  for (const char* k : {"gpu", "target_device"}) {
    if (!adv.contains(k)) continue;  // advice only for what the host has: GPUs, a target device
    const nlohmann::json& a = json_object_at(adv, k, aw);
    const std::string w = json_path(aw, k);
    const std::string reason = json_field<std::string>(a, "reason", w);
    line(out, std::string("launch near ") + (std::string(k) == "gpu" ? "GPUs" : "target"),
         json_field<bool>(a, "binding_needed", w) ? json_field<std::string>(a, "command", w) + "  (" + reason + ")"
                                                  : reason);
    // data_note: the GPUs' advice only (where the data lies against them); absent for the target's.
    if (a.contains("data_note") && !json_field<std::string>(a, "data_note", w).empty())
      line(out, "data vs GPUs", json_field<std::string>(a, "data_note", w));
  }
}

}  // namespace

std::string render_probe_text(const ProbeDocument& doc) {
  std::string out;
  target_text(out, doc.target);
  topology_text(out, doc.topology, "probe document.topology");
  out += "\nio_uring\n";
  line(out, "available", doc.io_uring.available ? "yes" : "no");
  line(out, "detail", doc.io_uring.message.empty() ? "-" : doc.io_uring.message);
  if (!doc.io_uring.memlock_allows.empty()) line(out, "locked memory", doc.io_uring.memlock_allows);
  out += "\nEngine ioprobe would choose (--engine auto; loader workers read at queue depth 1, raw at --iodepth)\n";
  for (const auto& [name, e] :
       {std::pair<const char*, const ProbeEngineRow&>{"cold", doc.cold}, {"warm", doc.warm}, {"deep", doc.deep}})
    line(out,
         std::string(name) + (e.buffered ? " (buffered" : " (O_DIRECT") +
             (e.depth > 1 ? fmt::format(", depth {})", e.depth) : std::string(")")),
         std::string(to_string(e.engine)) + ": " + e.reason);
  out += "\nPage cache\n";
  const std::string& src = doc.cache.cache_budget_source;
  line(out, "cache budget",
       format_bytes(doc.cache.cache_budget_bytes) + " (smaller of RAM and the cgroup memory limit" +
           (src.empty() ? std::string(")") : "; set by " + src + ")"));
  if (!doc.warnings.empty()) {
    out += "\nWarnings\n";
    for (const auto& x : doc.warnings) out += "  - " + x + "\n";
  }
  return out;
}

}  // namespace ioprobe
