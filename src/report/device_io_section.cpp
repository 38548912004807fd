#include "report/device_io_section.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe {

namespace {

// The accounting's own keys (topology/device_io_json.hpp) of a section, strictly.
DeviceIo section_io(const nlohmann::json& j, const std::string& w) {
  DeviceIo io;
  io.source = json_field<std::string>(j, "source", w);
  // Written only when nothing was measured (source "none"), where it says why.
  io.reason = io.measured() ? json_field_or<std::string>(j, "reason", w, "") : json_field<std::string>(j, "reason", w);
  const nlohmann::json& devices = json_array_at(j, "devices", w);
  for (size_t i = 0; i < devices.size(); ++i)
    io.devices.push_back(device_io_device_from_wire(devices[i], json_path(json_path(w, "devices"), i)));
  io.bytes_read = json_field<uint64_t>(j, "bytes_read", w);
  io.bytes_written = json_field<uint64_t>(j, "bytes_written", w);
  io.reads = json_field<uint64_t>(j, "reads", w);
  io.writes = json_field<uint64_t>(j, "writes", w);
  io.interval_s = json_field<double>(j, "interval_s", w);
  io.start_unix_s = json_field_or<double>(j, "start_unix_s", w, 0);  // written when the start was taken
  io.idle_window_s = json_field<double>(j, "idle_window_s", w);
  io.idle_bytes_per_s_before = json_field<double>(j, "idle_bytes_per_s_before", w);
  io.hosts = json_field<uint64_t>(j, "hosts", w);
  if (j.contains("backing")) {  // a loop device target only
    io.backing = backing_io_from_wire(j["backing"], json_path(w, "backing"));
    io.backing->backing_file = unescape_bytes(io.backing->backing_file);  // written escaped
  }
  return io;
}

// A ratio written as null when there is none.
std::optional<double> ratio_at(const nlohmann::json& j, const char* key, const std::string& w) {
  const nlohmann::json& v = json_at(j, key, w);
  if (v.is_null()) return std::nullopt;
  return json_as<double>(v, json_path(w, key));
}

nlohmann::json ratio_json(const std::optional<double>& r) { return r ? nlohmann::json(*r) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json device_io_section_json(const DeviceIoSection& s) {
  nlohmann::json j = s.io;  // its fields (topology/device_io_json.hpp); the reason only when nothing was measured
  if (s.io.measured()) j.erase("reason");
  j["share_unclear"] = s.share_unclear;
  if (s.ref != DeviceRef::kNone) {
    j["reference_bytes"] = s.reference_bytes;
    if (s.ref == DeviceRef::kRead) {
      j["read_ratio"] = ratio_json(s.ratio);
      j["bytes_source"] = s.bytes_source;
    } else {
      j["write_ratio"] = ratio_json(s.ratio);
    }
  }
  if (!s.ratio_note.empty()) j["ratio_note"] = s.ratio_note;
  if (s.whole_epochs) {
    j["whole_epochs"] = s.whole_epochs->epochs;
    j["whole_epochs_bytes"] = s.whole_epochs->bytes;
    j["whole_epochs_read_ratio"] = s.whole_epochs->read_ratio;
  }
  if (!s.merge_note.empty()) j["merge_note"] = s.merge_note;
  if (!s.scope.empty()) j["scope"] = s.scope;
  return j;
}

DeviceIoSection device_io_section_from_json(const nlohmann::json& j, const std::string& w) {
  if (!j.is_object()) json_detail::throw_mistyped(j, w, "a JSON object");
  DeviceIoSection s;
  s.io = section_io(j, w);
  s.share_unclear = json_field<bool>(j, "share_unclear", w);
  if (j.contains("read_ratio")) {
    s.ref = DeviceRef::kRead;
    s.ratio = ratio_at(j, "read_ratio", w);
    s.bytes_source = json_field<std::string>(j, "bytes_source", w);
  } else if (j.contains("write_ratio")) {
    s.ref = DeviceRef::kWrite;
    s.ratio = ratio_at(j, "write_ratio", w);
  } else if (j.contains("reference_bytes")) {
    throw UsageError(fmt::format("{}: reference_bytes without read_ratio or write_ratio; the document was edited or "
                                 "damaged",
                                 w));
  }
  if (s.ref != DeviceRef::kNone) s.reference_bytes = json_field<uint64_t>(j, "reference_bytes", w);
  s.ratio_note = json_field_or<std::string>(j, "ratio_note", w, "");  // a stop cut the run or epoch short
  if (j.contains("whole_epochs_read_ratio"))  // with a ratio_note, when the whole epochs were measured
    s.whole_epochs = WholeEpochsRatio{.epochs = json_field<uint64_t>(j, "whole_epochs", w),
                                      .bytes = json_field<uint64_t>(j, "whole_epochs_bytes", w),
                                      .read_ratio = json_field<double>(j, "whole_epochs_read_ratio", w)};
  s.merge_note = json_field_or<std::string>(j, "merge_note", w, "");  // merged documents only
  s.scope = json_field_or<std::string>(j, "scope", w, "");            // across hosts only
  return s;
}

DeviceIoSection device_io_section_lenient(const nlohmann::json& j) {
  DeviceIoSection s;
  if (!j.is_object()) {
    s.io.reason = "not in the document";
    return s;
  }
  auto u = [&](const char* k) { return j.contains(k) && j[k].is_number_unsigned() ? j[k].get<uint64_t>() : 0; };
  auto str = [&](const char* k, const char* fallback) {
    return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string(fallback);
  };
  auto num = [&](const char* k) {
    return j.contains(k) && j[k].is_number() ? std::optional<double>(j[k].get<double>()) : std::nullopt;
  };
  s.io.source = str("source", "none");
  s.io.reason = str("reason", "");
  if (j.contains("devices") && j["devices"].is_array())
    for (const auto& x : j["devices"]) {
      auto xu = [&](const char* k) { return x.contains(k) && x[k].is_number_unsigned() ? x[k].get<uint64_t>() : 0; };
      s.io.devices.push_back({x.contains("name") && x["name"].is_string() ? x["name"].get<std::string>() : "?",
                              xu("bytes_read"), xu("bytes_written"), xu("reads"), xu("writes")});
    }
  s.io.bytes_read = u("bytes_read");
  s.io.bytes_written = u("bytes_written");
  s.io.reads = u("reads");
  s.io.writes = u("writes");
  s.io.interval_s = num("interval_s").value_or(0);
  s.io.start_unix_s = num("start_unix_s").value_or(0);
  s.io.idle_window_s = num("idle_window_s").value_or(0);
  s.io.idle_bytes_per_s_before = num("idle_bytes_per_s_before").value_or(0);
  s.io.hosts = j.contains("hosts") ? u("hosts") : 1;
  if (j.contains("backing") && j["backing"].is_object()) {
    try {
      s.io.backing = backing_io_from_wire(j["backing"], "device_io.backing");
      s.io.backing->backing_file = unescape_bytes(s.io.backing->backing_file);
    } catch (const std::exception&) {  // a malformed backing part is left out, as a missing one
      s.io.backing.reset();
    }
  }
  s.share_unclear = j.contains("share_unclear") && j["share_unclear"].is_boolean() && j["share_unclear"].get<bool>();
  if (j.contains("read_ratio")) {
    s.ref = DeviceRef::kRead;
    s.ratio = num("read_ratio");
    s.bytes_source = str("bytes_source", "unknown");
  } else if (j.contains("write_ratio")) {
    s.ref = DeviceRef::kWrite;
    s.ratio = num("write_ratio");
  }
  s.reference_bytes = u("reference_bytes");
  s.ratio_note = str("ratio_note", "");
  if (const auto r = num("whole_epochs_read_ratio"))
    s.whole_epochs = WholeEpochsRatio{.epochs = u("whole_epochs"), .bytes = u("whole_epochs_bytes"), .read_ratio = *r};
  s.merge_note = str("merge_note", "");
  s.scope = str("scope", "");
  return s;
}

nlohmann::json run_epochs_json(const std::vector<RunEpoch>& epochs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& e : epochs) {
    nlohmann::json j = {{"epoch", e.epoch}, {"samples", e.samples}, {"bytes", e.bytes}};
    if (e.elapsed_s) {
      j["elapsed_s"] = *e.elapsed_s;
      j["samples_per_s"] = e.samples_per_s;
      j["bytes_per_s"] = e.bytes_per_s;
    }
    j["residency"] = ratio_json(e.residency);
    if (e.residency) j["residency_source"] = e.residency_source;
    j["device_io"] = device_io_section_json(e.device_io);
    if (e.partial) {
      j["partial"] = true;
      if (e.cut_by.kind != LoaderStopKind::kNone) j["cut_by"] = to_string(e.cut_by);
    }
    a.push_back(std::move(j));
  }
  return a;
}

std::vector<RunEpoch> run_epochs_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) json_detail::throw_mistyped(j, where, "an array");
  std::vector<RunEpoch> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const nlohmann::json& x = j[i];
    const std::string w = json_path(where, i);
    if (!x.is_object()) json_detail::throw_mistyped(x, w, "a JSON object");
    RunEpoch e;
    e.epoch = json_field<uint64_t>(x, "epoch", w);
    e.samples = json_field<uint64_t>(x, "samples", w);
    e.bytes = json_field<uint64_t>(x, "bytes", w);
    if (x.contains("elapsed_s")) {  // written when the epoch was timed, with its rates
      e.elapsed_s = json_field<double>(x, "elapsed_s", w);
      e.samples_per_s = json_field<double>(x, "samples_per_s", w);
      e.bytes_per_s = json_field<double>(x, "bytes_per_s", w);
    }
    e.residency = ratio_at(x, "residency", w);
    if (e.residency) e.residency_source = json_field<std::string>(x, "residency_source", w);
    e.device_io = device_io_section_from_json(json_at(x, "device_io", w), json_path(w, "device_io"));
    e.partial = json_field_or<bool>(x, "partial", w, false);  // written only for an epoch cut short
    if (e.partial && x.contains("cut_by")) e.cut_by = loader_stop_field(x, "cut_by", w);  // absent: no input named it
    out.push_back(std::move(e));
  }
  return out;
}

nlohmann::json host_device_io_section_json(const HostDeviceIo& h) {
  nlohmann::json j = device_io_section_json(h.section);
  j["cold_read_nothing"] = h.cold_read_nothing;
  j["cold_read_short"] = h.cold_read_short;
  if (h.epochs) {
    j["epochs"] = nlohmann::json::array();
    for (const auto& e : *h.epochs) j["epochs"].push_back(device_io_section_json(e));
  }
  return j;
}

HostDeviceIo host_device_io_from_json(const nlohmann::json& j, const std::string& w) {
  HostDeviceIo h;
  h.section = device_io_section_from_json(j, w);
  h.cold_read_nothing = json_field<bool>(j, "cold_read_nothing", w);
  h.cold_read_short = json_field<bool>(j, "cold_read_short", w);
  if (j.contains("epochs")) {  // a run's host rows
    const nlohmann::json& a = json_array_at(j, "epochs", w);
    h.epochs.emplace();
    for (size_t i = 0; i < a.size(); ++i)
      h.epochs->push_back(device_io_section_from_json(a[i], json_path(json_path(w, "epochs"), i)));
  }
  return h;
}

}  // namespace ioprobe
