// JSON sections of the `ioprobe probe` document (kind "probe"), built from plain values:
//   target      target_json() (report/document.hpp)
//   topology    {sysfs_root, nodes [{id, cpus, distances, memory_bytes}], online_cpus, allowed_cpus,
//                allowed_cpu_count, pci [{address, kind, class, numa_node, vendor, device}],
//                gpus [{pci_address, vendor, vendor_name, device, numa_node, upstream,
//                       pcie {link_speed_gts, link_width, max_link_speed_gts, max_link_width,
//                             bytes_per_s_per_direction (payload ceiling, B/s; nominal), label},
//                       same_upstream [nvme/nic/storage addresses under the same switch or root port],
//                       same_node [those on the same NUMA node only]}] (null fields: sysfs does not say),
//                numactl {gpu: {binding_needed, command, reason, node}, target_device: {...}}}
//   io_uring    {available, cause, errno, syscall, io_uring_disabled, memlock_limit_bytes (null = unlimited),
//                memlock_needed_bytes, memlock_hard_limit_bytes (null = unlimited), cap_ipc_lock,
//                rings_charged_to_memlock, ring_locked_bytes (one 8-entry ring), memlock_allows, message}
//   engine      {cold: {engine, reason, buffered, fallback, warning}, warm: {...}}
//   cache       {ram_bytes, cgroup_memory_limit_bytes, cgroup_memory_limit_source, cache_budget_bytes,
//                cache_budget_source ("RAM" or the cgroup v1/v2 file that set it)}
//   warnings    [sentences]
// The document is a ProbeDocument: target (report/document_sections.hpp), io_uring, engine, cache and
// warnings typed; topology kept as the JSON written (topology_json).
// render_probe_text() (report/probe_text.hpp) turns the whole document into text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine_choice.hpp"
#include "report/document_sections.hpp"
#include "report/run_document.hpp"
#include "topology/host.hpp"
#include "topology/numa.hpp"
#include "topology/target.hpp"

namespace ioprobe {

nlohmann::json topology_json(const Topology& topo, int target_device_node);

/// The io_uring section: what probe_io_uring() found. Bytes in B; a limit of nullopt is unlimited.
struct ProbeIoUring {
  bool available = false;
  std::string cause;       // UringAvailability::cause
  std::string errno_name;  // "EPERM", "" when io_uring_setup succeeded
  std::string syscall;
  int io_uring_disabled = -1;  // the sysctl, -1 when the kernel has none (< 6.6)
  std::optional<uint64_t> memlock_limit_bytes, memlock_hard_limit_bytes;
  uint64_t memlock_needed_bytes = 0;
  bool cap_ipc_lock = false;
  bool rings_charged_to_memlock = true;
  uint64_t ring_locked_bytes = 0;  // one 8-entry ring
  std::string memlock_allows;      // what the limit allows, in words
  std::string message;
};
ProbeIoUring probe_io_uring_section(const UringAvailability& u);

/// One row of the engine section: the engine `--engine auto` would choose for reads through the
/// page cache or O_DIRECT (`buffered`) at queue depth `depth`, and why.
struct ProbeEngineRow {
  EngineKind engine = EngineKind::kPsync;
  std::string reason;
  bool buffered = true;
  unsigned depth = 1;
  bool fallback = false;
  std::string warning;
};
ProbeEngineRow probe_engine_row(const EngineChoice& c, bool buffered, unsigned depth = 1);

/// The page-cache budget (topology/host.hpp cache_budget_bytes): bytes in B, a cgroup limit of 0
/// is none.
struct ProbeCache {
  uint64_t ram_bytes = 0;
  uint64_t cgroup_memory_limit_bytes = 0;
  std::string cgroup_memory_limit_source;
  uint64_t cache_budget_bytes = 0;
  std::string cache_budget_source;  // "RAM" or the cgroup file that set it
};

/// An `ioprobe probe` document. `topology` is the JSON topology_json() wrote (not yet typed); the
/// rest is typed.
struct ProbeDocument {
  RunHeader header;  // kind "probe"
  TargetSection target;
  nlohmann::json topology;
  ProbeIoUring io_uring;
  ProbeEngineRow cold, warm, deep;  // deep: buffered reads at raw's queue depth
  ProbeCache cache;
  bool partial = false;  // always false: probe has nothing to interrupt; kept for the common header
  std::vector<std::string> warnings;
};

/// The document from what `probe` found: the warnings (--dir naming a file, `file_probed` its path
/// or ""; the target's; io_uring unavailable; fewer allowed CPUs than online ones) are worked out
/// here, before any rendering.
ProbeDocument make_probe_document(RunHeader header, const TargetInfo& target, const Topology& topo,
                                  const UringAvailability& uring, const ProbeEngineRow& cold,
                                  const ProbeEngineRow& warm, const ProbeEngineRow& deep, const HostInfo& host,
                                  const std::string& file_probed = "");

/// The document exactly as `ioprobe probe` writes it (the keys above).
nlohmann::json probe_document_json(const ProbeDocument& doc);

/// Writes probe_document_json(doc) to `path` as write_json_file does (atomically; its errors).
void write_probe_document(const std::string& path, const ProbeDocument& doc);

/// A saved probe document read back. Strict: a missing or mistyped field of a typed section is
/// refused with UsageError naming `where` and the field's path; topology must be a JSON object and
/// is taken as it is.
ProbeDocument probe_document_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace ioprobe
