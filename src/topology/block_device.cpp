#include "topology/block_device.hpp"
#include "topology/sysfs_dir.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

namespace ioprobe {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string read_line(const std::string& path) { return read_sysfs_line(path); }
long read_long(const std::string& path, long fallback) { return read_sysfs_long(path, fallback); }
bool exists(const std::string& path) { return sysfs_exists(path); }
std::string resolve(const std::string& path) { return sysfs_resolve(path); }
std::string base_name(const std::string& p) { return sysfs_base_name(p); }
std::string dir_name(const std::string& p) { return sysfs_dir_name(p); }

// The device's directory under /sys/devices (resolved), found via class/block (which also lists
// partitions) or block/.
std::string device_dir(const std::string& name, const std::string& root) {
  for (const std::string& p : {root + "/class/block/" + name, root + "/block/" + name}) {
    std::string r = resolve(p);
    if (!r.empty()) return r;
  }
  return "";
}

void describe_into(const std::string& name, const std::string& root, BlockDeviceInfo& info, int depth) {
  std::string dir = device_dir(name, root);
  if (dir.empty() || depth > 4) return;
  BlockLink link{name, "disk", ""};
  std::string disk_dir = dir;
  if (exists(dir + "/partition")) {
    link.kind = "partition";
    disk_dir = dir_name(dir);
  }
  std::string disk = base_name(disk_dir);
  if (depth == 0) info.disk = disk;

  if (exists(dir + "/loop")) {
    link.kind = "loop";
    link.detail = read_line(dir + "/loop/backing_file");
    if (depth == 0) info.backing_file = link.detail;
  } else if (exists(dir + "/md")) {
    link.kind = "md";
    link.detail = read_line(dir + "/md/level");
    if (depth == 0) info.raid_level = link.detail;
  } else if (exists(dir + "/dm")) {
    link.kind = "dm";
    link.detail = read_line(dir + "/dm/name");
  } else if (link.kind == "disk") {
    link.detail = read_line(disk_dir + "/device/model");
    if (dir.find("/devices/virtual/") != std::string::npos) link.kind = "virtual";
  }
  info.chain.push_back(link);
  if (link.kind == "partition") {
    BlockLink parent{disk, "disk", read_line(disk_dir + "/device/model")};
    info.chain.push_back(parent);
  }
  // md and dm sit on "slaves": the member devices (each possibly a partition).
  if (link.kind == "md" || link.kind == "dm") {
    std::vector<std::string> slaves = list_dir(dir + "/slaves");
    if (depth == 0) info.members = slaves;
    for (const auto& s : slaves) describe_into(s, root, info, depth + 1);
  }
}

}  // namespace

std::string selected_scheduler(const std::string& line) {
  size_t a = line.find('['), b = line.find(']');
  if (a != std::string::npos && b != std::string::npos && b > a) return line.substr(a + 1, b - a - 1);
  return trim(line);
}

int nearest_numa_node(const std::string& start) {
  std::string dir = resolve(start);
  while (!dir.empty() && dir != "/") {
    std::string f = dir + "/numa_node";
    if (exists(f)) return static_cast<int>(read_long(f, -1));
    if (base_name(dir) == "devices") break;  // top of /sys/devices
    dir = dir_name(dir);
  }
  return -1;
}

BlockDeviceInfo describe_block_device_named(const std::string& name, const std::string& sysfs_root) {
  BlockDeviceInfo info;
  std::string dir = device_dir(name, sysfs_root);
  if (dir.empty()) return info;
  info.name = name;
  describe_into(name, sysfs_root, info, 0);
  std::string disk_dir = exists(dir + "/partition") ? dir_name(dir) : dir;
  std::string q = disk_dir + "/queue/";
  info.rotational = static_cast<int>(read_long(q + "rotational", -1));
  info.logical_block_bytes = static_cast<uint32_t>(read_long(q + "logical_block_size", 0));
  info.physical_block_bytes = static_cast<uint32_t>(read_long(q + "physical_block_size", 0));
  info.nr_requests = static_cast<int>(read_long(q + "nr_requests", -1));
  info.scheduler = selected_scheduler(read_line(q + "scheduler"));
  info.model = read_line(disk_dir + "/device/model");
  info.nvme = info.disk.rfind("nvme", 0) == 0;
  info.numa_node = nearest_numa_node(disk_dir);
  return info;
}

std::optional<std::pair<unsigned, unsigned>> file_device(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(major(st.st_dev), minor(st.st_dev));
}

LoopBacking loop_backing(const std::string& name, const std::string& sysfs_root, const FileDeviceOf& device_of) {
  LoopBacking b;
  const std::string dir = device_dir(name, sysfs_root);
  if (dir.empty() || !exists(dir + "/loop")) return b;
  b.loop = name;
  b.backing_file = read_line(dir + "/loop/backing_file");
  b.direct_io = static_cast<int>(read_long(dir + "/loop/dio", -1));
  if (b.direct_io != 0 && b.direct_io != 1) b.direct_io = -1;
  // The kernel marks a backing file removed since with " (deleted)": nothing to stat then.
  if (b.backing_file.empty() || !device_of) return b;
  const auto dev = device_of(b.backing_file);
  if (!dev) return b;
  const std::string holder = resolve(fmt::format("{}/dev/block/{}:{}", sysfs_root, dev->first, dev->second));
  if (holder.empty()) return b;
  b.device = base_name(holder);
  b.disk = exists(holder + "/partition") ? base_name(dir_name(holder)) : b.device;
  return b;
}

BlockDeviceInfo describe_block_device(unsigned maj, unsigned min, const std::string& sysfs_root) {
  std::string dir = resolve(fmt::format("{}/dev/block/{}:{}", sysfs_root, maj, min));
  if (dir.empty()) return {};
  return describe_block_device_named(base_name(dir), sysfs_root);
}

}  // namespace ioprobe
