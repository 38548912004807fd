#include "topology/device_class.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "topology/sysfs_dir.hpp"

namespace ioprobe {

namespace {

double parse_gts(const std::string& s) {  // "16.0 GT/s PCIe", "8 GT/s", "Unknown" -> 0
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() ? 0 : v;
}

int generation(double gts) {
  const double gens[] = {2.5, 5, 8, 16, 32, 64};
  for (int g = 0; g < 6; ++g)
    if (gts > gens[g] * 0.9 && gts < gens[g] * 1.1) return g + 1;
  return 0;
}

}  // namespace

double pcie_bytes_per_s(double gts, int lanes) {
  if (lanes <= 0) return 0;
  // Payload bits per transferred bit, by generation (see the header).
  const double efficiency[] = {0, 8.0 / 10, 8.0 / 10, 128.0 / 130, 128.0 / 130, 128.0 / 130, 242.0 / 256};
  const int g = generation(gts);
  if (g == 0) return 0;
  return gts * 1e9 * efficiency[g] / 8 * lanes;
}

bool PcieLink::downtrained() const {
  return max_speed_gts > 0 && max_width > 0 && speed_gts > 0 && width > 0 &&
         (max_speed_gts > speed_gts * 1.01 || max_width > width);
}

std::string PcieLink::describe() const {
  if (bytes_per_s_per_direction <= 0) return "no PCIe link facts in sysfs";
  std::string s = fmt::format("PCIe {:g} GT/s x{} (Gen{}): {:.2f} GB/s per direction, computed from the link's speed "
                              "and width (nominal)",
                              speed_gts, width, generation(speed_gts), bytes_per_s_per_direction / 1e9);
  if (downtrained()) s += fmt::format("; trained below its {:g} GT/s x{}", max_speed_gts, max_width);
  return s;
}

PcieLink read_pcie_link(const std::string& start) {
  PcieLink link;
  std::string dir = sysfs_resolve(start);
  while (!dir.empty() && dir != "/") {
    if (sysfs_exists(dir + "/current_link_speed")) {
      link.pci_address = sysfs_base_name(dir);
      link.speed_gts = parse_gts(read_sysfs_line(dir + "/current_link_speed"));
      link.width = static_cast<int>(read_sysfs_long(dir + "/current_link_width", 0));
      link.max_speed_gts = parse_gts(read_sysfs_line(dir + "/max_link_speed"));
      link.max_width = static_cast<int>(read_sysfs_long(dir + "/max_link_width", 0));
      link.bytes_per_s_per_direction = pcie_bytes_per_s(link.speed_gts, link.width);
      return link;
    }
    if (sysfs_base_name(dir) == "devices") break;  // top of /sys/devices
    dir = sysfs_dir_name(dir);
  }
  return link;
}

NominalSpeed nominal_device_speed(const std::string& disk, const std::string& sysfs_root) {
  NominalSpeed n;
  std::string dir = sysfs_resolve(sysfs_root + "/class/block/" + disk);
  if (dir.empty()) dir = sysfs_resolve(sysfs_root + "/block/" + disk);
  if (disk.rfind("loop", 0) == 0) {
    n.device_class = "loop device";
    n.basis = "a loop device reads its backing file: no interface speed of its own";
    return n;
  }
  if (disk.rfind("nvme", 0) == 0) {
    n.device_class = "NVMe";
    n.link = read_pcie_link(dir);
    const int g = generation(n.link.speed_gts);
    if (n.link.bytes_per_s_per_direction > 0) {
      n.bytes_per_s = n.link.bytes_per_s_per_direction;
      n.basis = fmt::format("PCIe {:g} GT/s x{} link (Gen{}): {:.2f} GB/s per direction, nominal", n.link.speed_gts,
                            n.link.width, g, n.bytes_per_s / 1e9);
      if (n.link.max_width > n.link.width || n.link.max_speed_gts > n.link.speed_gts)
        n.basis += fmt::format("; the device allows {:g} GT/s x{}: the link trained below it", n.link.max_speed_gts,
                               n.link.max_width);
    } else {
      n.basis = "NVMe, but sysfs shows no PCIe link speed (virtual or fabric-attached): no nominal ceiling";
    }
    return n;
  }
  if (dir.find("/ata") != std::string::npos) {
    n.device_class = "SATA";
    n.bytes_per_s = 600e6;
    n.basis = "SATA 6 Gb/s link, 8b/10b: 600 MB/s payload, nominal (the device may be slower)";
    return n;
  }
  if (disk.rfind("vd", 0) == 0 || disk.rfind("xvd", 0) == 0 || dir.find("/virtio") != std::string::npos) {
    n.device_class = "virtual disk";
    n.basis = "a virtual disk: its speed is the hypervisor's backing storage, no interface class applies";
    return n;
  }
  n.device_class = "unknown";
  n.basis = "interface class not told by sysfs";
  return n;
}

}  // namespace ioprobe
