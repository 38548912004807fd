#include "report/device_io_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/page_cache.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe {

namespace {

nlohmann::json ratio(uint64_t bytes, uint64_t reference) {
  if (reference == 0) return nullptr;
  return static_cast<double>(bytes) / static_cast<double>(reference);
}

std::string names(const nlohmann::json& dio) {
  std::string s;
  if (dio.contains("devices"))
    for (const auto& d : dio["devices"]) s += (s.empty() ? "" : ", ") + d.value("name", "?");
  return s.empty() ? "no device" : s;
}

// "; under loop0: vda read 0 B for its backing file F (loop direct I/O off: ...)" for a device_io
// section with a backing part, else "".
std::string backing_summary(const nlohmann::json& dio) {
  if (!dio.contains("backing") || !dio["backing"].is_object()) return "";
  const nlohmann::json& b = dio["backing"];
  const nlohmann::json& d = b.contains("device") ? b["device"] : nlohmann::json::object();
  const nlohmann::json& dio_flag = b.contains("direct_io") ? b["direct_io"] : nlohmann::json();
  const std::string mode = dio_flag.is_boolean() && dio_flag.get<bool>()
                               ? "loop direct I/O on: it reads the file with O_DIRECT"
                           : dio_flag.is_boolean() ? "loop direct I/O off: it reads the file through the page cache"
                                                   : "loop direct I/O unknown";
  return fmt::format("; under {}: {} read {} in {} requests for its backing file {} ({}) [diskstats]",
                     b.value("loop", "the loop device"), d.value("name", "?"),
                     format_bytes(d.value("bytes_read", 0ULL)), format_count(d.value("reads", 0ULL)),
                     b.value("backing_file", "?"), mode);
}

}  // namespace

nlohmann::json device_io_json(const DeviceIo& io, DeviceRef ref, uint64_t reference_bytes) {
  nlohmann::json j = io;  // its fields (topology/device_io_json.hpp); the reason only when nothing was measured
  if (io.measured()) j.erase("reason");
  j["share_unclear"] = io.share_unclear();
  if (ref != DeviceRef::kNone) {
    j["reference_bytes"] = reference_bytes;
    if (ref == DeviceRef::kRead) {
      j["read_ratio"] = io.measured() ? ratio(io.bytes_read, reference_bytes) : nlohmann::json(nullptr);
      j["bytes_source"] = bytes_source(io, reference_bytes);
    } else {
      j["write_ratio"] = io.measured() ? ratio(io.bytes_written, reference_bytes) : nlohmann::json(nullptr);
    }
  }
  return j;
}

DeviceIo device_io_from_json(const nlohmann::json& j) {
  DeviceIo io;
  if (!j.is_object()) {
    io.reason = "not in the document";
    return io;
  }
  auto u = [&](const nlohmann::json& o, const char* k) {
    return o.contains(k) && o[k].is_number_unsigned() ? o[k].get<uint64_t>() : uint64_t{0};
  };
  auto d = [&](const nlohmann::json& o, const char* k) {
    return o.contains(k) && o[k].is_number() ? o[k].get<double>() : 0.0;
  };
  io.source = j.contains("source") && j["source"].is_string() ? j["source"].get<std::string>() : "none";
  io.reason = j.contains("reason") && j["reason"].is_string() ? j["reason"].get<std::string>() : "";
  if (j.contains("devices") && j["devices"].is_array())
    for (const auto& x : j["devices"])
      io.devices.push_back({x.contains("name") && x["name"].is_string() ? x["name"].get<std::string>() : "?",
                            u(x, "bytes_read"), u(x, "bytes_written"), u(x, "reads"), u(x, "writes")});
  io.bytes_read = u(j, "bytes_read");
  io.bytes_written = u(j, "bytes_written");
  io.reads = u(j, "reads");
  io.writes = u(j, "writes");
  io.interval_s = d(j, "interval_s");
  io.start_unix_s = j.contains("start_unix_s") ? d(j, "start_unix_s") : 0;
  io.idle_window_s = d(j, "idle_window_s");
  io.idle_bytes_per_s_before = d(j, "idle_bytes_per_s_before");
  io.hosts = j.contains("hosts") ? u(j, "hosts") : 1;
  if (j.contains("backing") && j["backing"].is_object()) {
    try {
      io.backing = backing_io_from_wire(j["backing"], "device_io.backing");
    } catch (const std::exception&) {  // a malformed backing part is left out, as a missing one
      io.backing.reset();
    }
  }
  return io;
}

nlohmann::json epochs_json(const LoaderResult& r, const std::vector<DeviceIo>& per_epoch) {
  nlohmann::json a = nlohmann::json::array();
  size_t n = std::max(r.epoch_samples.size(), per_epoch.size());
  // A stop (--duration, a signal, a stonewall, canceled reads) ends the epoch it came in: the
  // epochs from the first not completed on are cut short.
  const bool stopped = !r.stop_reason.empty() && r.stop_reason != "completed";
  // A stop that came as an epoch began leaves an epoch that delivered nothing: no row (its
  // device reads stay in the run's device_io).
  while (stopped && n > 0 && (n > r.epoch_samples.size() || r.epoch_samples[n - 1] == 0)) --n;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bytes = i < r.epoch_bytes.size() ? r.epoch_bytes[i] : 0;
    const uint64_t samples = i < r.epoch_samples.size() ? r.epoch_samples[i] : 0;
    nlohmann::json e = {{"epoch", i + 1}, {"samples", samples}, {"bytes", bytes}};
    // The epoch's own wall time (to the stop for an epoch cut short), and its rates over it.
    if (i < r.epoch_ns.size() && r.epoch_ns[i] > 0) {
      const double s = static_cast<double>(r.epoch_ns[i]) / 1e9;
      e["elapsed_s"] = s;
      e["samples_per_s"] = static_cast<double>(samples) / s;
      e["bytes_per_s"] = static_cast<double>(bytes) / s;
    }
    if (i < r.epoch_resident_fraction.size()) {
      e["residency"] = r.epoch_resident_fraction[i];
      e["residency_source"] = residency_source(r.epoch_resident_fraction[i]);
    } else {
      e["residency"] = nullptr;
    }
    DeviceIo none;
    none.reason = "not measured";
    const DeviceIo& io = i < per_epoch.size() ? per_epoch[i] : none;
    e["device_io"] = device_io_json(io, DeviceRef::kRead, bytes);
    if (stopped && i >= r.epochs_completed) {
      // Cut short: the devices also read what the workers had fetched ahead (prefetched batches,
      // readahead) and the stop discarded, so device bytes / delivered bytes overstates the
      // devices' share. The device figure is an upper bound of it: "page cache" (read <= 10%)
      // still holds, "device" and "mixed" cannot be told.
      e["partial"] = true;
      e["cut_by"] = r.stop_reason;
      nlohmann::json& d = e["device_io"];
      d["read_ratio"] = nullptr;
      if (d.value("bytes_source", "unknown") != "page cache") d["bytes_source"] = "unknown";
      d["ratio_note"] = "epoch cut short: the devices' reads include batches fetched ahead and never delivered, so no "
                        "ratio to the delivered bytes is given";
    }
    a.push_back(e);
  }
  return a;
}

void interrupted_run_device_io(nlohmann::json& dio, const nlohmann::json& epochs, const std::string& stop_reason) {
  if (!dio.is_object() || !dio.contains("read_ratio")) return;
  dio["read_ratio"] = nullptr;
  if (dio.value("bytes_source", "unknown") != "page cache") dio["bytes_source"] = "unknown";
  dio["ratio_note"] = fmt::format("{}: the devices' reads include batches fetched ahead and never delivered, so no "
                                  "ratio to the delivered bytes is given",
                                  stop_reason);
  if (dio.value("source", "none") == "none") return;
  // The whole epochs before the stop, when every one of them was measured: their own ratio.
  uint64_t read = 0, delivered = 0, whole = 0;
  for (const auto& e : epochs.is_array() ? epochs : nlohmann::json::array()) {
    if (e.value("partial", false)) continue;
    const nlohmann::json& d = e.contains("device_io") ? e["device_io"] : nlohmann::json();
    if (!d.is_object() || d.value("source", "none") == "none") return;
    read += d.value("bytes_read", 0ULL);
    delivered += e.value("bytes", 0ULL);
    ++whole;
  }
  if (whole == 0 || delivered == 0) return;
  dio["whole_epochs"] = whole;
  dio["whole_epochs_bytes"] = delivered;
  dio["whole_epochs_read_ratio"] = static_cast<double>(read) / static_cast<double>(delivered);
}

std::string device_io_summary(const nlohmann::json& dio, const std::string& what) {
  if (!dio.is_object()) return "not measured";
  if (dio.value("source", "none") == "none") return "not measured: " + dio.value("reason", "");
  const uint64_t ref = dio.value("reference_bytes", 0ULL);
  std::string rr, wr;
  if (dio.contains("read_ratio") && dio["read_ratio"].is_number())
    rr = fmt::format(" ({:.2f} x the {} {}; bytes from: {})", dio["read_ratio"].get<double>(), format_bytes(ref), what,
                     dio.value("bytes_source", "unknown"));
  else if (dio.contains("ratio_note") && dio["ratio_note"].is_string())  // a run or epoch a stop cut short
    rr = fmt::format(" ({}{})", dio["ratio_note"].get<std::string>(),
                     dio.contains("whole_epochs_read_ratio") && dio["whole_epochs_read_ratio"].is_number()
                         ? fmt::format("; the {} whole epoch(s) before the stop: {:.2f} x their {} {}",
                                       dio.value("whole_epochs", 0ULL), dio["whole_epochs_read_ratio"].get<double>(),
                                       format_bytes(dio.value("whole_epochs_bytes", 0ULL)), what)
                         : "");
  if (dio.contains("write_ratio") && dio["write_ratio"].is_number())
    wr = fmt::format(" ({:.2f} x the {} {})", dio["write_ratio"].get<double>(), format_bytes(ref), what);
  std::string s = fmt::format("{}: {} read{} in {} requests, {} written{} in {} requests [{}]", names(dio),
                              format_bytes(dio.value("bytes_read", 0ULL)), rr, format_count(dio.value("reads", 0ULL)),
                              format_bytes(dio.value("bytes_written", 0ULL)), wr,
                              format_count(dio.value("writes", 0ULL)), dio.value("source", ""));
  if (dio.value("idle_window_s", 0.0) > 0)
    s += fmt::format("; other traffic before the run {} over {:.1f} s{}",
                     format_rate(dio.value("idle_bytes_per_s_before", 0.0)), dio.value("idle_window_s", 0.0),
                     dio.value("share_unclear", false) ? ": the run's own share cannot be told apart" : "");
  return s + backing_summary(dio);
}

std::string omitted_epochs_text(const nlohmann::json& epochs, size_t first, size_t end) {
  double lo = 0, hi = 0;
  bool rates = false;
  uint64_t samples = 0;
  for (size_t i = first; i < end && i < epochs.size(); ++i) {
    const auto& e = epochs[i];
    samples += e.value("samples", uint64_t{0});
    if (!e.contains("samples_per_s") || !e["samples_per_s"].is_number()) continue;
    const double v = e["samples_per_s"].get<double>();
    lo = rates ? std::min(lo, v) : v;
    hi = rates ? std::max(hi, v) : v;
    rates = true;
  }
  const size_t k = end - first;
  return fmt::format("... {} more epoch{} ({} to {}: {} samples{}); every epoch is in the JSON (--json FILE: "
                     "results.epochs)",
                     k, k == 1 ? "" : "s", first + 1, end, format_count(samples),
                     rates ? fmt::format(", {:.0f} to {:.0f} samples/s", lo, hi) : "");
}

std::string render_device_io_text(const nlohmann::json& r, size_t width) {
  std::string o;
  auto line = [&](const std::string& k, const std::string& v) { o += fmt::format("  {:<{}} {}\n", k, width, v); };
  if (r.contains("device_io")) line("device I/O", device_io_summary(r["device_io"], "delivered"));
  if (r.contains("device_io") && r["device_io"].contains("merge_note"))
    line("", r["device_io"].value("merge_note", ""));
  if (r.contains("epochs") && r["epochs"].is_array() && !r["epochs"].empty()) {
    const nlohmann::json& all = r["epochs"];
    const size_t n = all.size();
    for (size_t i = 0; i < n; ++i) {
      // Many epochs (short ones under --duration): the first rows and the last (the one a stop
      // may have cut short), the others summed up in one line; every row stays in the JSON.
      if (n > kMaxEpochRows && i == kMaxEpochRows - 1 && i + 1 < n) {
        line("", omitted_epochs_text(all, i, n - 1));
        i = n - 1;
      }
      const auto& e = all[i];
      const auto& d = e.contains("device_io") ? e["device_io"] : nlohmann::json();
      std::string dev = "device reads not measured";
      if (d.is_object() && d.value("source", "none") != "none")
        dev = fmt::format("device read {}{}", format_bytes(d.value("bytes_read", 0ULL)),
                          d.contains("read_ratio") && d["read_ratio"].is_number()
                              ? fmt::format(" = {:.2f} x delivered: from {}", d["read_ratio"].get<double>(),
                                            d.value("bytes_source", "unknown"))
                              : "");
      if (e.value("partial", false) && d.is_object() && d.value("source", "none") != "none")
        dev =
            fmt::format("device read {} (cut short: includes batches fetched ahead and never delivered, so no ratio{})",
                        format_bytes(d.value("bytes_read", 0ULL)),
                        d.value("bytes_source", "") == "page cache" ? "; from page cache" : "");
      const bool cut = e.value("partial", false);
      std::string when;
      if (e.contains("elapsed_s") && e["elapsed_s"].is_number())
        when = fmt::format(" in {} ({:.0f} samples/s{})", format_seconds(e["elapsed_s"].get<double>()),
                           e.value("samples_per_s", 0.0), cut ? " over the time it ran" : "");
      line(fmt::format("epoch {}{}", e.value("epoch", 0), cut ? " (cut short)" : ""),
           fmt::format("{}{} samples, {} delivered{}; {}{}",
                       cut ? fmt::format("cut short by the stop ({}), not a whole epoch: ", e.value("cut_by", "?"))
                           : "",
                       format_count(e.value("samples", 0ULL)), format_bytes(e.value("bytes", 0ULL)), when, dev,
                       e.contains("residency") && e["residency"].is_number()
                           ? fmt::format("; {:.0f}% resident before", 100 * e["residency"].get<double>())
                           : ""));
    }
  }
  return o;
}

nlohmann::json host_device_io_json(const DeviceIo& io, const std::vector<DeviceIo>& epochs, uint64_t host_bytes,
                                   const nlohmann::json& target) {
  const bool cold = target.is_object() && target.value("cache", "") == "cold";
  nlohmann::json j = host_device_io_json(io, DeviceRef::kRead, host_bytes, cold);
  j["epochs"] = nlohmann::json::array();
  for (const auto& e : epochs) j["epochs"].push_back(device_io_json(e));
  return j;
}

nlohmann::json host_device_io_json(const DeviceIo& io, DeviceRef ref, uint64_t host_bytes, bool cold) {
  nlohmann::json j = device_io_json(io, ref, host_bytes);
  const ColdRead c = ref == DeviceRef::kRead ? cold_read_check(io, host_bytes, cold) : ColdRead::kOk;
  j["cold_read_nothing"] = c == ColdRead::kNothing;
  j["cold_read_short"] = c != ColdRead::kOk;
  return j;
}

std::string host_cold_read_flag_text(const nlohmann::json& d) {
  if (!d.is_object()) return "";
  if (d.value("cold_read_nothing", false)) return "  COLD RUN READ NOTHING FROM ITS DEVICES";
  if (d.value("cold_read_short", false)) return "  COLD RUN READ FAR LESS THAN IT DELIVERED FROM ITS DEVICES";
  return "";
}

std::string host_cold_read_warning(const std::string& host, const std::string& what, const DeviceIo& io,
                                   uint64_t delivered, bool cold) {
  const ColdRead c = cold_read_check(io, delivered, cold);
  if (c == ColdRead::kOk) return "";
  const std::string names = io.devices.empty() ? std::string("its devices") : [&] {
    std::string n;
    for (const auto& d : io.devices) n += (n.empty() ? "" : ", ") + d.name;
    return "its devices (" + n + ")";
  }();
  const std::string read = c == ColdRead::kNothing ? "read nothing"
                                                   : fmt::format("read only {} ({:.0f}%)", format_bytes(io.bytes_read),
                                                                 100.0 * static_cast<double>(io.bytes_read) /
                                                                     static_cast<double>(delivered));
  return fmt::format("host {}: its {} was cold and delivered {}, but {} {}: its bytes came from a cache (its page "
                     "cache was not dropped, a filesystem that did not honour O_DIRECT, the host of a virtual disk, or "
                     "an array or controller cache in front of its devices)",
                     host, what, format_bytes(delivered), names, read);
}

namespace {

std::string merge_note(size_t docs, size_t hosts, size_t overlapped, size_t disjoint) {
  std::string n = fmt::format("{} documents from {} host(s): devices named HOST:NAME, the hosts' figures added", docs,
                              hosts);
  if (disjoint)
    n += fmt::format("; {} document(s) measured a host at another time than its other documents (disjoint "
                     "intervals): their figures added",
                     disjoint);
  if (overlapped)
    n += fmt::format("; {} document(s) shared a host with another at the same time: one host's devices measured over "
                     "overlapping intervals count each other's traffic, so the largest of those figures is taken, not "
                     "the sum",
                     overlapped);
  return n + "; idle_bytes_per_s_before is the sum of each host's own idle window before its run (not one moment)";
}

bool overlap(const DeviceIo& a, const DeviceIo& b) {
  return a.start_unix_s < b.start_unix_s + b.interval_s && b.start_unix_s < a.start_unix_s + a.interval_s;
}

// One host's documents merged by their intervals: those measured at overlapping times count each
// other's traffic (the largest is taken); those at disjoint times add. Without start times (older
// documents) every interval is taken to overlap.
DeviceIo merge_one_host(std::vector<DeviceIo> ios, size_t* overlapped, size_t* disjoint) {
  bool timed = true;
  for (const auto& io : ios) timed = timed && io.start_unix_s > 0;
  if (timed)
    std::sort(ios.begin(), ios.end(),
              [](const DeviceIo& a, const DeviceIo& b) { return a.start_unix_s < b.start_unix_s; });
  std::vector<std::vector<DeviceIo>> groups;  // runs of overlapping intervals
  for (auto& io : ios) {
    bool joins = !groups.empty() && !timed;
    if (timed && !groups.empty())
      for (const auto& g : groups.back()) joins = joins || overlap(g, io);
    if (joins) groups.back().push_back(std::move(io));
    else groups.push_back({std::move(io)});
  }
  DeviceIo out;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const DeviceIo* best = &groups[gi].front();
    for (const auto& io : groups[gi])
      if (io.measured() &&
          (!best->measured() || io.bytes_read + io.bytes_written > best->bytes_read + best->bytes_written))
        best = &io;
    *overlapped += groups[gi].size() - 1;
    if (gi == 0) {
      out = *best;
    } else {
      ++*disjoint;
      const uint64_t hosts = out.hosts;
      out.merge(*best);
      out.hosts = hosts;  // the same host again, later
    }
  }
  return out;
}

// The sections' DeviceIo merged as merge_device_io_json says; `note` describes it.
DeviceIo merge_sections(const std::vector<nlohmann::json>& sections, const std::vector<std::string>& hosts,
                        std::string* note, bool* any) {
  std::vector<std::pair<std::string, std::vector<DeviceIo>>> by_host;  // in first-seen order
  size_t docs = 0, overlapped = 0, disjoint = 0;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!sections[i].is_object()) continue;
    ++docs;
    const std::string host = i < hosts.size() && !hosts[i].empty() ? hosts[i] : fmt::format("document {}", i + 1);
    DeviceIo io = named_for_host(device_io_from_json(sections[i]), host);
    auto it = std::find_if(by_host.begin(), by_host.end(), [&](const auto& h) { return h.first == host; });
    if (it == by_host.end()) by_host.emplace_back(host, std::vector<DeviceIo>{io});
    else it->second.push_back(io);
  }
  *any = docs > 0;
  DeviceIo m;
  for (size_t i = 0; i < by_host.size(); ++i) {
    const DeviceIo h = merge_one_host(by_host[i].second, &overlapped, &disjoint);
    if (i == 0) m = h;
    else m.merge(h);
  }
  m.hosts = by_host.size();
  *note = merge_note(docs, by_host.size(), overlapped, disjoint);
  return m;
}

}  // namespace

std::string merge_time_warning(const std::vector<nlohmann::json>& sections, const std::vector<std::string>& names) {
  std::vector<std::pair<DeviceIo, std::string>> timed;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!sections[i].is_object()) continue;
    DeviceIo io = device_io_from_json(sections[i]);
    if (io.start_unix_s <= 0) return "";  // a document without a start time: no claim either way
    timed.emplace_back(std::move(io), i < names.size() ? names[i] : fmt::format("document {}", i + 1));
  }
  for (size_t a = 0; a < timed.size(); ++a)
    for (size_t b = a + 1; b < timed.size(); ++b)
      if (!overlap(timed[a].first, timed[b].first))
        return fmt::format("{} and {} did not run at the same time (their measurements do not overlap): the merged "
                           "rates add runs that did not load the storage together, so they measure no concurrent "
                           "load; merge documents of one run across hosts",
                           escape_bytes(timed[a].second), escape_bytes(timed[b].second));
  return "";
}

nlohmann::json merge_device_io_json(const std::vector<nlohmann::json>& sections, const std::vector<std::string>& hosts,
                                    DeviceRef ref, uint64_t reference_bytes) {
  std::string note;
  bool any = false;
  const DeviceIo m = merge_sections(sections, hosts, &note, &any);
  if (!any) return nullptr;
  nlohmann::json j = device_io_json(m, ref, reference_bytes);
  j["merge_note"] = note;
  return j;
}

nlohmann::json merge_epochs_json(const std::vector<nlohmann::json>& lists, const std::vector<std::string>& hosts) {
  size_t n = 0;
  bool any = false;
  for (const auto& l : lists)
    if (l.is_array()) {
      any = true;
      n = std::max(n, l.size());
    }
  if (!any) return nullptr;
  nlohmann::json out = nlohmann::json::array();
  for (size_t e = 0; e < n; ++e) {
    uint64_t samples = 0, bytes = 0;
    bool partial = false;
    double elapsed = 0;
    std::string cut_by;
    std::vector<nlohmann::json> sections(lists.size());
    for (size_t i = 0; i < lists.size(); ++i) {
      if (!lists[i].is_array() || e >= lists[i].size()) continue;
      const nlohmann::json& x = lists[i][e];
      samples += x.value("samples", uint64_t{0});
      bytes += x.value("bytes", uint64_t{0});
      partial = partial || x.value("partial", false);
      if (cut_by.empty() && x.contains("cut_by") && x["cut_by"].is_string()) cut_by = x["cut_by"].get<std::string>();
      if (x.contains("elapsed_s") && x["elapsed_s"].is_number())
        elapsed = std::max(elapsed, x["elapsed_s"].get<double>());
      if (x.contains("device_io")) sections[i] = x["device_io"];
    }
    nlohmann::json row = {{"epoch", e + 1}, {"samples", samples}, {"bytes", bytes}, {"residency", nullptr}};
    if (elapsed > 0) {  // the inputs' epochs ran at once: the longest is the merged epoch's time
      row["elapsed_s"] = elapsed;
      row["samples_per_s"] = static_cast<double>(samples) / elapsed;
      row["bytes_per_s"] = static_cast<double>(bytes) / elapsed;
    }
    nlohmann::json d = merge_device_io_json(sections, hosts, DeviceRef::kRead, bytes);
    if (d.is_null()) {
      DeviceIo none;
      none.reason = "not in the merged documents";
      d = device_io_json(none, DeviceRef::kRead, bytes);
    }
    if (partial) {
      row["partial"] = true;
      if (!cut_by.empty()) row["cut_by"] = cut_by;
      d["read_ratio"] = nullptr;
      if (d.value("bytes_source", "unknown") != "page cache") d["bytes_source"] = "unknown";
      d["ratio_note"] = "an input's epoch was cut short: the devices' reads include batches fetched ahead and never "
                        "delivered, so no ratio to the delivered bytes is given";
    }
    row["device_io"] = d;
    out.push_back(row);
  }
  return out;
}

}  // namespace ioprobe
