// Facts about the host that every report carries: CPUs this process may use, memory, kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ioprobe {

/// What the host offers this process.
struct HostInfo {
  std::string hostname;
  std::string kernel;    // uname -r, e.g. "6.1.0-18-amd64"
  int cpus_online = 0;   // sysconf(_SC_NPROCESSORS_ONLN)
  int cpus_allowed = 0;  // CPUs in sched_getaffinity(0): what this process may run on
  std::vector<int> allowed_cpu_list;
  uint64_t memory_bytes = 0;               // MemTotal from sysinfo(2), bytes
  uint64_t cgroup_memory_limit_bytes = 0;  // this cgroup's memory limit (v1 or v2), 0 when unlimited/unknown
  std::string cgroup_memory_limit_source;  // "cgroup v2 memory.max of /a/b", "cgroup v1 ...", "" when none
};

/// The memory limit of this process's cgroup: the smallest limit on the path from its cgroup up
/// to the root (a parent's limit bounds its children), cgroup v2 (memory.max; "max" = none) and
/// cgroup v1 (memory.limit_in_bytes of the memory controller; values >= 2^62 mean none).
struct CgroupMemoryLimit {
  uint64_t bytes = 0;  // 0 when no limit applies or nothing could be read
  std::string source;  // which file set it, e.g. "cgroup v1 memory.limit_in_bytes of /docker/abc"
};

/// Reads /proc/self/cgroup and the limit files under /sys/fs/cgroup, both below `root` ("" = the
/// real tree; a fixture tree in tests). When the cgroup's own directory is absent (a container's
/// cgroup namespace shows "/" or a path the mount does not have), the mount's top directory is
/// read. Never throws.
CgroupMemoryLimit read_cgroup_memory_limit(const std::string& root = "");

/// Bytes the page cache can hold for this process: RAM, or the cgroup limit when smaller (page
/// cache pages are charged to the cgroup). `source` says which ("RAM", or the cgroup source).
uint64_t cache_budget_bytes(const HostInfo& host, std::string* source = nullptr);

/// Reads the host facts. Never throws; unknown fields stay empty/0.
HostInfo probe_host();

/// "0-3,8,10-11" from a sorted CPU list.
std::string cpu_list_string(const std::vector<int>& cpus);

}  // namespace ioprobe
