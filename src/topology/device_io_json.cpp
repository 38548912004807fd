#include "topology/device_io_json.hpp"

#include "core/json_field.hpp"
#include "core/text.hpp"

namespace ioprobe {

DeviceIoDevice device_io_device_from_wire(const nlohmann::json& j, const std::string& w) {
  return {.name = json_field<std::string>(j, "name", w),
          .bytes_read = json_field<uint64_t>(j, "bytes_read", w),
          .bytes_written = json_field<uint64_t>(j, "bytes_written", w),
          .reads = json_field<uint64_t>(j, "reads", w),
          .writes = json_field<uint64_t>(j, "writes", w)};
}

void to_json(nlohmann::json& j, const DeviceIoDevice& d) {
  j = {{"name", d.name},
       {"bytes_read", d.bytes_read},
       {"bytes_written", d.bytes_written},
       {"reads", d.reads},
       {"writes", d.writes}};
}

void from_json(const nlohmann::json& j, DeviceIoDevice& d) { d = device_io_device_from_wire(j, "device"); }

void to_json(nlohmann::json& j, const DeviceIo& io) {
  j = {{"source", io.source},
       {"reason", io.reason},
       {"devices", io.devices},
       {"bytes_read", io.bytes_read},
       {"bytes_written", io.bytes_written},
       {"reads", io.reads},
       {"writes", io.writes},
       {"interval_s", io.interval_s},
       {"idle_window_s", io.idle_window_s},
       {"idle_bytes_per_s_before", io.idle_bytes_per_s_before},
       {"hosts", io.hosts}};
  if (io.start_unix_s > 0) j["start_unix_s"] = io.start_unix_s;  // written when the start was taken
  if (io.backing) j["backing"] = *io.backing;
}

void to_json(nlohmann::json& j, const BackingIo& b) {
  j = {{"loop", b.loop},
       {"backing_file", escape_bytes(b.backing_file)},
       {"direct_io", b.direct_io < 0 ? nlohmann::json(nullptr) : nlohmann::json(b.direct_io == 1)},
       {"device", b.device},
       {"idle_bytes_per_s_before", b.idle_bytes_per_s_before}};
}

BackingIo backing_io_from_wire(const nlohmann::json& j, const std::string& w) {
  BackingIo b;
  b.loop = json_field<std::string>(j, "loop", w);
  b.backing_file = json_field<std::string>(j, "backing_file", w);
  const nlohmann::json& dio = json_at(j, "direct_io", w);
  b.direct_io = dio.is_null() ? -1 : json_as<bool>(dio, json_path(w, "direct_io")) ? 1 : 0;
  b.device = device_io_device_from_wire(json_at(j, "device", w), json_path(w, "device"));
  b.idle_bytes_per_s_before = json_field<double>(j, "idle_bytes_per_s_before", w);
  return b;
}

DeviceIo device_io_from_wire(const nlohmann::json& j, const std::string& w) {
  DeviceIo io;
  io.source = json_field<std::string>(j, "source", w);
  io.reason = json_field<std::string>(j, "reason", w);
  const nlohmann::json& devices = json_array_at(j, "devices", w);
  for (size_t i = 0; i < devices.size(); ++i)
    io.devices.push_back(device_io_device_from_wire(devices[i], json_path(json_path(w, "devices"), i)));
  io.bytes_read = json_field<uint64_t>(j, "bytes_read", w);
  io.bytes_written = json_field<uint64_t>(j, "bytes_written", w);
  io.reads = json_field<uint64_t>(j, "reads", w);
  io.writes = json_field<uint64_t>(j, "writes", w);
  io.interval_s = json_field<double>(j, "interval_s", w);
  io.idle_window_s = json_field<double>(j, "idle_window_s", w);
  io.idle_bytes_per_s_before = json_field<double>(j, "idle_bytes_per_s_before", w);
  io.hosts = json_field<uint64_t>(j, "hosts", w);
  // Absent when the start was not taken (and from older senders): 0, no claim about overlap.
  io.start_unix_s = json_field_or<double>(j, "start_unix_s", w, 0);
  if (j.contains("backing")) io.backing = backing_io_from_wire(j["backing"], json_path(w, "backing"));
  return io;
}

void from_json(const nlohmann::json& j, DeviceIo& io) { io = device_io_from_wire(j, "device_io"); }

}  // namespace ioprobe
