// A DeviceIo (topology/device_io.hpp) as JSON with nothing lost, and back: what a process of a
// multi-host job sends of its device accounting to the one that merges. Documents show device I/O
// in their own form, with ratios and labels (report/device_io_report.hpp).
//
// {source, reason, devices [{name, bytes_read, bytes_written, reads, writes}], bytes_read,
//  bytes_written, reads, writes, interval_s, idle_window_s, idle_bytes_per_s_before, hosts,
//  start_unix_s (when taken), backing (a loop device target: {loop, backing_file, direct_io
//  (true, false, null unknown), device {name, bytes_read, ...}, idle_bytes_per_s_before})}
#pragma once

#include <nlohmann/json.hpp>

#include "topology/device_io.hpp"

namespace ioprobe {

/// nlohmann's hooks: `nlohmann::json j = io;` and `j.get<DeviceIo>()`. from_json is strict: a
/// missing or mistyped field throws UsageError naming its path ("device_io.devices[0].reads").
void to_json(nlohmann::json& j, const DeviceIoDevice& d);
void from_json(const nlohmann::json& j, DeviceIoDevice& d);
void to_json(nlohmann::json& j, const DeviceIo& io);
void from_json(const nlohmann::json& j, DeviceIo& io);
void to_json(nlohmann::json& j, const BackingIo& b);

/// One device's counters read back strictly (UsageError naming the field under `where`).
DeviceIoDevice device_io_device_from_wire(const nlohmann::json& j, const std::string& where);

/// A "backing" object read back strictly (UsageError naming the field under `where`).
BackingIo backing_io_from_wire(const nlohmann::json& j, const std::string& where);

/// from_json with the path of `j` given ("part.device_io").
DeviceIo device_io_from_wire(const nlohmann::json& j, const std::string& where);

}  // namespace ioprobe
