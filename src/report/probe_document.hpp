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
// render_probe_text() (report/probe_text.hpp) turns the whole document into text.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/engine_choice.hpp"
#include "topology/numa.hpp"

namespace ioprobe {

nlohmann::json topology_json(const Topology& topo, int target_device_node);
nlohmann::json io_uring_json(const UringAvailability& u);
nlohmann::json engine_choice_json(const EngineChoice& c, bool buffered, unsigned depth = 1);

}  // namespace ioprobe
