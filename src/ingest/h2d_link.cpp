#include "ingest/h2d_link.hpp"

#include <algorithm>

namespace ioprobe {

std::vector<GpuLinkCeiling> gpu_link_ceilings(const Topology& topo, uint32_t ranks) {
  const std::vector<PciDevice> gpus = topo.gpus();
  std::vector<GpuLinkCeiling> out;
  if (gpus.empty()) return out;
  const size_t used = std::min<size_t>(gpus.size(), std::max<uint32_t>(1, ranks));
  for (size_t i = 0; i < used; ++i) {
    const PciDevice& g = gpus[i];
    GpuLinkCeiling c;
    c.pci_address = g.address;
    c.numa_node = g.numa_node;
    c.bytes_per_s_per_direction = g.link.bytes_per_s_per_direction;
    c.basis = g.link.describe();
    c.downtrained = g.link.downtrained();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ioprobe
