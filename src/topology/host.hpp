// Facts about the host that every report carries: CPUs this process may use, memory, kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ioprobe {

/// What the host offers this process.
struct HostInfo {
  std::string hostname;
  std::string kernel;              // uname -r, e.g. "6.1.0-18-amd64"
  int cpus_online = 0;             // sysconf(_SC_NPROCESSORS_ONLN)
  int cpus_allowed = 0;            // CPUs in sched_getaffinity(0): what this process may run on
  std::vector<int> allowed_cpu_list;
  uint64_t memory_bytes = 0;       // MemTotal from sysinfo(2), bytes
  uint64_t cgroup_memory_limit_bytes = 0;  // memory.max of this cgroup (v2), 0 when unlimited/unknown
};

/// Reads the host facts. Never throws; unknown fields stay empty/0.
HostInfo probe_host();

/// "0-3,8,10-11" from a sorted CPU list.
std::string cpu_list_string(const std::vector<int>& cpus);

}  // namespace ioprobe
