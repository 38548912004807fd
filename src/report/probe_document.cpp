#include "report/probe_document.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "engine/engine_kind.hpp"
#include "report/document.hpp"
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

ProbeIoUring probe_io_uring_section(const UringAvailability& u) {
  ProbeIoUring s;
  s.available = u.available;
  s.cause = u.cause;
  s.errno_name = u.err ? errno_name(u.err) : "";
  s.syscall = u.syscall;
  s.io_uring_disabled = u.io_uring_disabled;
  if (u.memlock_limit_bytes != UINT64_MAX) s.memlock_limit_bytes = u.memlock_limit_bytes;
  if (u.memlock_hard_bytes != UINT64_MAX) s.memlock_hard_limit_bytes = u.memlock_hard_bytes;
  s.memlock_needed_bytes = u.memlock_needed_bytes;
  s.cap_ipc_lock = u.cap_ipc_lock;
  s.rings_charged_to_memlock = u.rings_charged;
  s.ring_locked_bytes = u.ring_bytes;
  s.memlock_allows = u.memlock_allows;
  s.message = u.message;
  return s;
}

ProbeEngineRow probe_engine_row(const EngineChoice& c, bool buffered, unsigned depth) {
  return {c.engine, c.reason, buffered, depth, c.fallback, c.warning};
}

ProbeDocument make_probe_document(RunHeader header, const TargetInfo& target, const Topology& topo,
                                  const UringAvailability& uring, const ProbeEngineRow& cold,
                                  const ProbeEngineRow& warm, const ProbeEngineRow& deep, const HostInfo& host,
                                  const std::string& file_probed) {
  ProbeDocument d;
  d.header = std::move(header);
  d.target = target_section(target);
  d.topology = topology_json(topo, target.device_numa_node);
  d.io_uring = probe_io_uring_section(uring);
  d.cold = cold;
  d.warm = warm;
  d.deep = deep;
  d.cache.ram_bytes = host.memory_bytes;
  d.cache.cgroup_memory_limit_bytes = host.cgroup_memory_limit_bytes;
  d.cache.cgroup_memory_limit_source = host.cgroup_memory_limit_source;
  d.cache.cache_budget_bytes = cache_budget_bytes(host, &d.cache.cache_budget_source);
  if (!file_probed.empty())
    d.warnings.push_back(fmt::format("--dir '{}' is a file, not a directory: this describes the filesystem and "
                                     "device that hold it (O_DIRECT read on the file itself); give the dataset's "
                                     "directory to probe where a run reads",
                                     escape_bytes(file_probed)));
  for (const auto& w : target.warnings) d.warnings.push_back(escape_bytes(w));
  if (!uring.available) d.warnings.push_back(uring.message);
  if (topo.live() && topo.allowed_cpus.size() < topo.online_cpus.size())
    d.warnings.push_back(fmt::format("this process may use {} of {} online CPUs ({}): size num_workers by the "
                                     "allowed CPUs, not os.cpu_count()",
                                     topo.allowed_cpus.size(), topo.online_cpus.size(),
                                     cpu_list_string(topo.allowed_cpus)));
  return d;
}

namespace {

nlohmann::json optional_bytes(const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::optional<uint64_t> optional_bytes_from(const nlohmann::json& j, const char* key, const std::string& where) {
  const nlohmann::json& v = json_at(j, key, where);
  if (v.is_null()) return std::nullopt;
  return json_field<uint64_t>(j, key, where);
}

nlohmann::json engine_row_json(const ProbeEngineRow& r) {
  return {{"engine", to_string(r.engine)}, {"reason", r.reason},  {"buffered", r.buffered}, {"depth", r.depth},
          {"fallback", r.fallback},        {"warning", r.warning}};
}

ProbeEngineRow engine_row_from_json(const nlohmann::json& j, const std::string& w) {
  ProbeEngineRow r;
  r.engine = engine_kind_field(j, "engine", w);
  r.reason = json_field<std::string>(j, "reason", w);
  r.buffered = json_field<bool>(j, "buffered", w);
  r.depth = json_field<unsigned>(j, "depth", w);
  r.fallback = json_field<bool>(j, "fallback", w);
  r.warning = json_field<std::string>(j, "warning", w);
  return r;
}

nlohmann::json io_uring_json(const ProbeIoUring& u) {
  return {{"available", u.available},
          {"cause", u.cause},
          {"errno", u.errno_name},
          {"syscall", u.syscall},
          {"io_uring_disabled", u.io_uring_disabled},
          {"memlock_limit_bytes", optional_bytes(u.memlock_limit_bytes)},
          {"memlock_needed_bytes", u.memlock_needed_bytes},
          {"memlock_hard_limit_bytes", optional_bytes(u.memlock_hard_limit_bytes)},
          {"cap_ipc_lock", u.cap_ipc_lock},
          {"rings_charged_to_memlock", u.rings_charged_to_memlock},
          {"ring_locked_bytes", u.ring_locked_bytes},
          {"memlock_allows", u.memlock_allows},
          {"message", u.message}};
}

ProbeIoUring io_uring_from_json(const nlohmann::json& j, const std::string& w) {
  ProbeIoUring u;
  u.available = json_field<bool>(j, "available", w);
  u.cause = json_field<std::string>(j, "cause", w);
  u.errno_name = json_field<std::string>(j, "errno", w);
  u.syscall = json_field<std::string>(j, "syscall", w);
  u.io_uring_disabled = json_field<int>(j, "io_uring_disabled", w);
  u.memlock_limit_bytes = optional_bytes_from(j, "memlock_limit_bytes", w);
  u.memlock_needed_bytes = json_field<uint64_t>(j, "memlock_needed_bytes", w);
  u.memlock_hard_limit_bytes = optional_bytes_from(j, "memlock_hard_limit_bytes", w);
  u.cap_ipc_lock = json_field<bool>(j, "cap_ipc_lock", w);
  u.rings_charged_to_memlock = json_field<bool>(j, "rings_charged_to_memlock", w);
  u.ring_locked_bytes = json_field<uint64_t>(j, "ring_locked_bytes", w);
  u.memlock_allows = json_field<std::string>(j, "memlock_allows", w);
  u.message = json_field<std::string>(j, "message", w);
  return u;
}

nlohmann::json cache_json(const ProbeCache& c) {
  return {{"ram_bytes", c.ram_bytes},
          {"cgroup_memory_limit_bytes", c.cgroup_memory_limit_bytes},
          {"cgroup_memory_limit_source", c.cgroup_memory_limit_source},
          {"cache_budget_bytes", c.cache_budget_bytes},
          {"cache_budget_source", c.cache_budget_source}};
}

ProbeCache cache_from_json(const nlohmann::json& j, const std::string& w) {
  ProbeCache c;
  c.ram_bytes = json_field<uint64_t>(j, "ram_bytes", w);
  c.cgroup_memory_limit_bytes = json_field<uint64_t>(j, "cgroup_memory_limit_bytes", w);
  c.cgroup_memory_limit_source = json_field<std::string>(j, "cgroup_memory_limit_source", w);
  c.cache_budget_bytes = json_field<uint64_t>(j, "cache_budget_bytes", w);
  c.cache_budget_source = json_field<std::string>(j, "cache_budget_source", w);
  return c;
}

}  // namespace

nlohmann::json probe_document_json(const ProbeDocument& doc) {
  nlohmann::json j = {{"target", target_section_json(doc.target)},
                      {"topology", doc.topology},
                      {"io_uring", io_uring_json(doc.io_uring)},
                      {"engine",
                       {{"cold", engine_row_json(doc.cold)},
                        {"warm", engine_row_json(doc.warm)},
                        {"deep", engine_row_json(doc.deep)}}},
                      {"cache", cache_json(doc.cache)},
                      {"partial", doc.partial},
                      {"warnings", doc.warnings}};
  j.update(header_json(doc.header, "probe"));
  return j;
}

void write_probe_document(const std::string& path, const ProbeDocument& doc) {
  write_json_file(path, probe_document_json(doc));
}

ProbeDocument probe_document_from_json(const nlohmann::json& j, const std::string& where) {
  ProbeDocument d;
  d.header = header_from_json(j, "probe", where);
  d.target = target_section_from_json(json_at(j, "target", where), json_path(where, "target"));
  d.topology = json_object_at(j, "topology", where);
  d.io_uring = io_uring_from_json(json_object_at(j, "io_uring", where), json_path(where, "io_uring"));
  const nlohmann::json& e = json_object_at(j, "engine", where);
  const std::string ew = json_path(where, "engine");
  d.cold = engine_row_from_json(json_object_at(e, "cold", ew), json_path(ew, "cold"));
  d.warm = engine_row_from_json(json_object_at(e, "warm", ew), json_path(ew, "warm"));
  d.deep = engine_row_from_json(json_object_at(e, "deep", ew), json_path(ew, "deep"));
  d.cache = cache_from_json(json_object_at(j, "cache", where), json_path(where, "cache"));
  d.partial = json_field<bool>(j, "partial", where);
  d.warnings = json_field<std::vector<std::string>>(j, "warnings", where);
  return d;
}

}  // namespace ioprobe
