// Nominal speed classes of storage devices and PCIe links, read from sysfs: the figure a device's
// interface allows, never a measurement. `ioprobe scaling` prints it beside what was measured.
//
// Per-lane PCIe payload rates, per direction, after line encoding (PCI Express Base Specification:
// Gen1 2.5 GT/s and Gen2 5 GT/s use 8b/10b; Gen3 8 GT/s, Gen4 16 GT/s, Gen5 32 GT/s use
// 128b/130b; Gen6 64 GT/s PAM4 with FLIT encoding is counted at 242/256): 0.25, 0.5, 0.985, 1.969,
// 3.938 and 7.563 GB/s. SATA 3.x: 6 Gb/s line rate with 8b/10b = 600 MB/s payload (SATA-IO,
// Serial ATA Revision 3.0). Protocol overhead above the link (TLP headers, NVMe commands) is not
// subtracted: these are ceilings.
//
// Every function takes the sysfs root ("/sys" on a live system) so tests replay fixture trees.
// Nothing here throws; unknown facts stay at their documented "unknown" values.
#pragma once

#include <string>

namespace ioprobe {

/// A PCIe link as sysfs reports it (current_link_speed "16.0 GT/s PCIe", current_link_width "4").
struct PcieLink {
  std::string pci_address;               // "0000:81:00.0", "" when no PCI function was found
  double speed_gts = 0;                  // current link speed, GT/s per lane; 0 unknown
  int width = 0;                         // current link width, lanes; 0 unknown
  double max_speed_gts = 0;              // max_link_speed, 0 unknown
  int max_width = 0;                     // max_link_width, 0 unknown
  double bytes_per_s_per_direction = 0;  // payload ceiling of the current link, B/s; 0 unknown

  /// The link runs slower or narrower than the device's maximum (both known): it trained down
  /// (a riser, a dirty contact, a slot wired narrower, or power saving at idle: read it under load).
  bool downtrained() const;
  /// "PCIe 16 GT/s x8 (Gen4): 15.75 GB/s per direction, computed from the link's speed and width
  /// (nominal); trained below its 32 GT/s x16", or "no PCIe link facts in sysfs".
  std::string describe() const;
};

/// Payload bytes/s per direction of `lanes` lanes at `gts` GT/s (encoding per generation, above);
/// 0 for an unknown speed or lanes <= 0.
double pcie_bytes_per_s(double gts, int lanes);

/// The link of the nearest PCI function at or above sysfs directory `start` (resolved) that has
/// current_link_speed; an empty pci_address when none has one.
PcieLink read_pcie_link(const std::string& start);

/// The interface class of a whole disk and the nominal ceiling it implies.
struct NominalSpeed {
  std::string device_class;  // "NVMe", "SATA", "virtual disk", "loop device", "unknown"
  double bytes_per_s = 0;    // the interface's payload ceiling per direction, B/s; 0 when none applies
  std::string basis;         // e.g. "PCIe 16 GT/s x4 link (Gen4): 7.88 GB/s per direction, nominal"
  PcieLink link;             // NVMe: its PCIe link
};

/// Nominal class speed of disk `disk` ("nvme0n1", "sda", "vda", "loop0") under `sysfs_root`.
NominalSpeed nominal_device_speed(const std::string& disk, const std::string& sysfs_root = "/sys");

}  // namespace ioprobe
