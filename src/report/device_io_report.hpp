// The device_io parts of result documents (topology/device_io.hpp's DeviceIo), their reading
// back (to sum hosts), the per-epoch list of a run, and their text.
//
// device_io: {source: "diskstats" | "nfs-mountstats" | "none", reason (source "none"),
//             devices: [{name, bytes_read, bytes_written, reads, writes}], bytes_read, bytes_written,
//             reads, writes, interval_s, idle_window_s, idle_bytes_per_s_before, share_unclear,
//             hosts (summed documents: how many hosts it adds),
//             and, when a reference is given: reference_bytes, read_ratio (bytes_read / reference),
//             or write_ratio (bytes_written / reference), bytes_source ("device" | "page cache" |
//             "mixed" | "unknown", reads only)}
// results.epochs: [{epoch (1-based), samples, bytes, residency (0..1 or null), residency_source,
//                   device_io}]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/loader_result.hpp"
#include "topology/device_io.hpp"

namespace ioprobe {

/// What the ratio of a device_io section compares against.
enum class DeviceRef { kNone, kRead, kWrite };

/// The device_io section. With ref kRead: read_ratio = bytes_read / reference_bytes and
/// bytes_source; kWrite: write_ratio = bytes_written / reference_bytes. A ratio is null when the
/// reference is 0 or nothing was measured.
nlohmann::json device_io_json(const DeviceIo& io, DeviceRef ref = DeviceRef::kNone, uint64_t reference_bytes = 0);

/// Reads a device_io section back (missing keys read as 0 / "none"). Never throws.
DeviceIo device_io_from_json(const nlohmann::json& j);

/// results.epochs: one entry per epoch started, from the loader's per-epoch counts, its residency
/// before each epoch, and the device accounting between consecutive epoch marks (the lists may
/// differ in length: an entry gets what exists for it).
nlohmann::json epochs_json(const LoaderResult& r, const std::vector<DeviceIo>& per_epoch);

/// "loop0, loop1: 105 MB read (1.01 x the 104 MB delivered), 0 B written; 812 reads" style summary
/// of a device_io section (document form), or "not measured: REASON". `what` names the reference
/// ("delivered", "on disk", "shard bytes").
std::string device_io_summary(const nlohmann::json& dio, const std::string& what);

/// The text lines of a run's results.device_io and results.epochs ("  device I/O ...",
/// "  epoch 1 ..."), each led by a label padded to `width`; empty when the document has neither.
std::string render_device_io_text(const nlohmann::json& results, size_t width);

/// What a process of a multi-host run sends of its accounting: device_io_json(whole) with
/// "epochs": [device_io_json(epoch), ...].
nlohmann::json part_device_io_json(const DeviceIo& whole, const std::vector<DeviceIo>& epochs);

/// A host row's device_io (multi-host runs): the host's first process's accounting with its read
/// ratio to the host's delivered bytes, and cold_read_nothing: true when the host's run was cold
/// (target.cache "cold"), its devices were measured, it delivered bytes and its devices read none.
nlohmann::json host_device_io_json(const nlohmann::json& part_device_io, uint64_t host_bytes,
                                   const nlohmann::json& target);

/// The cluster's accounting: the host rows' device_io added (DeviceIo::merge; each host's own
/// devices), and per epoch the hosts' "epochs" entries added epoch by epoch.
struct ClusterDeviceIo {
  DeviceIo whole;
  std::vector<DeviceIo> epochs;
};
ClusterDeviceIo cluster_device_io(const nlohmann::json& hosts);

}  // namespace ioprobe
