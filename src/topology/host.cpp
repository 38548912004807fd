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
uint64_t read_cgroup_memory_limit() {
  // cgroup v2: /proc/self/cgroup has "0::/path"; the limit is /sys/fs/cgroup/<path>/memory.max.
  std::ifstream cg("/proc/self/cgroup");
  std::string line;
  while (std::getline(cg, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    std::ifstream max("/sys/fs/cgroup" + line.substr(3) + "/memory.max");
    std::string v;
    if (max >> v && v != "max") {
      try {
        return std::stoull(v);
      } catch (...) {
        return 0;
      }
    }
  }
  return 0;
}
}  // namespace

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
  h.cgroup_memory_limit_bytes = read_cgroup_memory_limit();
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
