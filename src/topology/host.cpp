#include "topology/host.hpp"

#include <sched.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <fmt/format.h>

namespace ioprobe {

namespace {

// A limit file's value: 0 for "max", unreadable or v1's "unlimited" (PAGE_COUNTER_MAX pages,
// 9223372036854771712 on x86-64: anything >= 2^62).
uint64_t read_limit_file(const std::string& path) {
  std::ifstream in(path);
  std::string v;
  if (!(in >> v) || v == "max") return 0;
  try {
    const uint64_t b = std::stoull(v);
    return b >= (uint64_t{1} << 62) ? 0 : b;
  } catch (...) {
    return 0;
  }
}

bool readable(const std::string& path) { return std::ifstream(path).good(); }

// Smallest limit from `dir` + cgroup path up to `dir`, reading `file` in each directory.
void walk_limits(const std::string& mount, std::string cg, const std::string& file, const std::string& version,
                 CgroupMemoryLimit& out) {
  if (cg.empty() || cg[0] != '/') cg = "/" + cg;
  while (cg.size() > 1 && cg.back() == '/') cg.pop_back();
  // In a cgroup namespace the path may not exist under the mount: the mount's top is our cgroup.
  if (!readable(mount + (cg == "/" ? "" : cg) + "/" + file)) cg = "/";
  for (;;) {
    const std::string dir = mount + (cg == "/" ? "" : cg);
    const uint64_t b = read_limit_file(dir + "/" + file);
    if (b && (out.bytes == 0 || b < out.bytes)) {
      out.bytes = b;
      out.source = fmt::format("cgroup {} {} of {}", version, file, cg);
    }
    if (cg == "/") break;
    const size_t slash = cg.rfind('/');
    cg = slash == 0 ? "/" : cg.substr(0, slash);
  }
}

}  // namespace

CgroupMemoryLimit read_cgroup_memory_limit(const std::string& root) {
  CgroupMemoryLimit out;
  std::ifstream cg(root + "/proc/self/cgroup");
  std::string line;
  while (std::getline(cg, line)) {
    // "hierarchy-ID:controller-list:cgroup-path" (cgroups(7)); v2 is "0::/path".
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, 3, "0::") == 0) {
      walk_limits(root + "/sys/fs/cgroup", path, "memory.max", "v2", out);
      continue;
    }
    bool memory = false;
    size_t p = 0;
    while (p <= controllers.size()) {
      const size_t q = std::min(controllers.find(',', p), controllers.size());
      if (controllers.compare(p, q - p, "memory") == 0) memory = true;
      p = q + 1;
    }
    if (memory) walk_limits(root + "/sys/fs/cgroup/memory", path, "memory.limit_in_bytes", "v1", out);
  }
  return out;
}

uint64_t cache_budget_bytes(const HostInfo& h, std::string* source) {
  if (h.cgroup_memory_limit_bytes && (h.memory_bytes == 0 || h.cgroup_memory_limit_bytes < h.memory_bytes)) {
    if (source) *source = h.cgroup_memory_limit_source;
    return h.cgroup_memory_limit_bytes;
  }
  if (source) *source = "RAM";
  return h.memory_bytes;
}

HostInfo probe_host() {
  HostInfo h;
  utsname u{};
  if (uname(&u) == 0) {
    h.kernel = u.release;
    h.hostname = u.nodename;
  }
  h.cpus_online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) h.allowed_cpu_list.push_back(c);
  }
  h.cpus_allowed = static_cast<int>(h.allowed_cpu_list.size());
  struct sysinfo si {};
  if (sysinfo(&si) == 0) h.memory_bytes = static_cast<uint64_t>(si.totalram) * si.mem_unit;
  const CgroupMemoryLimit cg = read_cgroup_memory_limit();
  h.cgroup_memory_limit_bytes = cg.bytes;
  h.cgroup_memory_limit_source = cg.source;
  return h;
}

std::string cpu_list_string(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += (j == i) ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace ioprobe
