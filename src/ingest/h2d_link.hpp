// The last hop to the GPU: the host-to-device PCIe link each GPU rank's batches cross, as a
// ceiling for the ingest verdict (ingest/analysis.hpp names "host-to-device link" when the demand
// per GPU exceeds it).
//
// The ceiling is nominal: computed from the link's current speed and width in sysfs with the
// per-generation payload rates of topology/device_class.hpp (PCI Express Base Specification), one
// direction, before TLP/DMA overhead, so a GPU's measured copy rate is lower.
#pragma once

#include <cstdint>
#include <vector>

#include "ingest/analysis.hpp"
#include "topology/numa.hpp"

namespace ioprobe {

/// The links of the GPUs `ranks` ranks on this host feed: rank i uses the i-th GPU in PCI address
/// order (CUDA_DEVICE_ORDER=PCI_BUS_ID), modulo the GPU count; each GPU listed once. Empty when the
/// topology has no GPU (the verdict then has no link to check).
std::vector<GpuLinkCeiling> gpu_link_ceilings(const Topology& topo, uint32_t ranks);

}  // namespace ioprobe
