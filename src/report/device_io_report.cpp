#include "report/device_io_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/page_cache.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe {

namespace {

std::optional<double> ratio(uint64_t bytes, uint64_t reference) {
  if (reference == 0) return std::nullopt;
  return static_cast<double>(bytes) / static_cast<double>(reference);
}

std::string names(const DeviceIo& io) {
  std::string s;
  for (const auto& d : io.devices) s += (s.empty() ? "" : ", ") + d.name;
  return s.empty() ? "no device" : s;
}

// "; under loop0: vda read 0 B for its backing file F (loop direct I/O off: ...)" for a device_io
// section with a backing part, else "".
std::string backing_summary(const DeviceIo& io) {
  if (!io.backing) return "";
  const BackingIo& b = *io.backing;
  const std::string mode = b.direct_io == 1   ? "loop direct I/O on: it reads the file with O_DIRECT"
                           : b.direct_io == 0 ? "loop direct I/O off: it reads the file through the page cache"
                                              : "loop direct I/O unknown";
  return fmt::format("; under {}: {} read {} in {} requests for its backing file {} ({}) [diskstats]", b.loop,
                     b.device.name, format_bytes(b.device.bytes_read), format_count(b.device.reads),
                     escape_bytes(b.backing_file), mode);
}

// A section's read ratio taken away (a stop cut its run or epoch short, see epochs_json): the
// source stays only when it is "page cache", else "unknown"; `note` says why.
void drop_read_ratio(DeviceIoSection& d, std::string note) {
  d.ratio.reset();
  if (d.bytes_source != "page cache") d.bytes_source = "unknown";
  d.ratio_note = std::move(note);
}

}  // namespace

DeviceIoSection device_io_section(const DeviceIo& io, DeviceRef ref, uint64_t reference_bytes) {
  DeviceIoSection s;
  s.io = io;
  s.share_unclear = io.share_unclear();
  s.ref = ref;
  if (ref == DeviceRef::kNone) return s;
  s.reference_bytes = reference_bytes;
  if (io.measured()) s.ratio = ratio(ref == DeviceRef::kRead ? io.bytes_read : io.bytes_written, reference_bytes);
  if (ref == DeviceRef::kRead) s.bytes_source = bytes_source(io, reference_bytes);
  return s;
}

nlohmann::json device_io_json(const DeviceIo& io, DeviceRef ref, uint64_t reference_bytes) {
  return device_io_section_json(device_io_section(io, ref, reference_bytes));
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

std::vector<RunEpoch> run_epochs(const LoaderResult& r, const std::vector<DeviceIo>& per_epoch) {
  std::vector<RunEpoch> a;
  size_t n = std::max(r.epoch_samples.size(), per_epoch.size());
  // A stop (--duration, a signal, a stonewall, canceled reads) ends the epoch it came in: the
  // epochs from the first not completed on are cut short.
  const bool stopped = r.stop.kind != LoaderStopKind::kNone && !r.stop.completed();
  // A stop that came as an epoch began leaves an epoch that delivered nothing: no row (its
  // device reads stay in the run's device_io).
  while (stopped && n > 0 && (n > r.epoch_samples.size() || r.epoch_samples[n - 1] == 0)) --n;
  for (size_t i = 0; i < n; ++i) {
    RunEpoch e;
    e.epoch = i + 1;
    e.bytes = i < r.epoch_bytes.size() ? r.epoch_bytes[i] : 0;
    e.samples = i < r.epoch_samples.size() ? r.epoch_samples[i] : 0;
    // The epoch's own wall time (to the stop for an epoch cut short), and its rates over it.
    if (i < r.epoch_ns.size() && r.epoch_ns[i] > 0) {
      const double s = static_cast<double>(r.epoch_ns[i]) / 1e9;
      e.elapsed_s = s;
      e.samples_per_s = static_cast<double>(e.samples) / s;
      e.bytes_per_s = static_cast<double>(e.bytes) / s;
    }
    if (i < r.epoch_resident_fraction.size()) {
      e.residency = r.epoch_resident_fraction[i];
      e.residency_source = residency_source(r.epoch_resident_fraction[i]);
    }
    DeviceIo none;
    none.reason = "not measured";
    e.device_io = device_io_section(i < per_epoch.size() ? per_epoch[i] : none, DeviceRef::kRead, e.bytes);
    if (stopped && i >= r.epochs_completed) {
      // Cut short: the devices also read what the workers had fetched ahead (prefetched batches,
      // readahead) and the stop discarded, so device bytes / delivered bytes overstates the
      // devices' share. The device figure is an upper bound of it: "page cache" (read <= 10%)
      // still holds, "device" and "mixed" cannot be told.
      e.partial = true;
      e.cut_by = r.stop;
      drop_read_ratio(e.device_io, "epoch cut short: the devices' reads include batches fetched ahead and never "
                                   "delivered, so no ratio to the delivered bytes is given");
    }
    a.push_back(std::move(e));
  }
  return a;
}

nlohmann::json epochs_json(const LoaderResult& r, const std::vector<DeviceIo>& per_epoch) {
  return run_epochs_json(run_epochs(r, per_epoch));
}

void interrupted_run_device_io(DeviceIoSection& dio, const std::vector<RunEpoch>& epochs, const LoaderStop& stop) {
  if (dio.ref != DeviceRef::kRead) return;
  drop_read_ratio(dio, fmt::format("{}: the devices' reads include batches fetched ahead and never delivered, so no "
                                   "ratio to the delivered bytes is given",
                                   to_string(stop)));
  if (!dio.io.measured()) return;
  // The whole epochs before the stop, when every one of them was measured: their own ratio.
  uint64_t read = 0, delivered = 0, whole = 0;
  for (const auto& e : epochs) {
    if (e.partial) continue;
    if (!e.device_io.io.measured()) return;
    read += e.device_io.io.bytes_read;
    delivered += e.bytes;
    ++whole;
  }
  if (whole == 0 || delivered == 0) return;
  dio.whole_epochs = WholeEpochsRatio{.epochs = whole,
                                      .bytes = delivered,
                                      .read_ratio = static_cast<double>(read) / static_cast<double>(delivered)};
}

std::string device_io_summary(const DeviceIoSection& dio, const std::string& what) {
  const DeviceIo& io = dio.io;
  if (!io.measured()) return "not measured: " + io.reason;
  std::string rr, wr;
  if (dio.ref == DeviceRef::kRead && dio.ratio)
    rr = fmt::format(" ({:.2f} x the {} {}; bytes from: {})", *dio.ratio, format_bytes(dio.reference_bytes), what,
                     dio.bytes_source);
  else if (!dio.ratio_note.empty())  // a run or epoch a stop cut short
    rr = fmt::format(" ({}{})", dio.ratio_note,
                     dio.whole_epochs ? fmt::format("; the {} whole epoch(s) before the stop: {:.2f} x their {} {}",
                                                    dio.whole_epochs->epochs, dio.whole_epochs->read_ratio,
                                                    format_bytes(dio.whole_epochs->bytes), what)
                                      : "");
  if (dio.ref == DeviceRef::kWrite && dio.ratio)
    wr = fmt::format(" ({:.2f} x the {} {})", *dio.ratio, format_bytes(dio.reference_bytes), what);
  std::string s = fmt::format("{}: {} read{} in {} requests, {} written{} in {} requests [{}]", names(io),
                              format_bytes(io.bytes_read), rr, format_count(io.reads), format_bytes(io.bytes_written),
                              wr, format_count(io.writes), io.source);
  if (io.idle_window_s > 0)
    s += fmt::format("; other traffic before the run {} over {:.1f} s{}", format_rate(io.idle_bytes_per_s_before),
                     io.idle_window_s, dio.share_unclear ? ": the run's own share cannot be told apart" : "");
  return s + backing_summary(io);
}

std::string device_io_summary(const nlohmann::json& dio, const std::string& what) {
  if (!dio.is_object()) return "not measured";
  return device_io_summary(device_io_section_lenient(dio), what);
}

std::string omitted_epochs_text(const std::vector<RunEpoch>& epochs, size_t first, size_t end) {
  double lo = 0, hi = 0;
  bool rates = false;
  uint64_t samples = 0;
  for (size_t i = first; i < end && i < epochs.size(); ++i) {
    const RunEpoch& e = epochs[i];
    samples += e.samples;
    if (!e.elapsed_s) continue;
    const double v = e.samples_per_s;
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

std::string render_device_io_text(const std::optional<DeviceIoSection>& device_io, const std::vector<RunEpoch>& epochs,
                                  size_t width) {
  std::string o;
  auto line = [&](const std::string& k, const std::string& v) { o += fmt::format("  {:<{}} {}\n", k, width, v); };
  if (device_io) line("device I/O", device_io_summary(*device_io, "delivered"));
  if (device_io && !device_io->merge_note.empty()) line("", device_io->merge_note);
  const size_t n = epochs.size();
  for (size_t i = 0; i < n; ++i) {
    // Many epochs (short ones under --duration): the first rows and the last (the one a stop
    // may have cut short), the others summed up in one line; every row stays in the JSON.
    if (n > kMaxEpochRows && i == kMaxEpochRows - 1 && i + 1 < n) {
      line("", omitted_epochs_text(epochs, i, n - 1));
      i = n - 1;
    }
    const RunEpoch& e = epochs[i];
    const DeviceIoSection& d = e.device_io;
    std::string dev = "device reads not measured";
    if (d.io.measured())
      dev = fmt::format("device read {}{}", format_bytes(d.io.bytes_read),
                        d.ratio ? fmt::format(" = {:.2f} x delivered: from {}", *d.ratio,
                                              d.bytes_source.empty() ? "unknown" : d.bytes_source)
                                : "");
    if (e.partial && d.io.measured())
      dev = fmt::format("device read {} (cut short: includes batches fetched ahead and never delivered, so no ratio{})",
                        format_bytes(d.io.bytes_read), d.bytes_source == "page cache" ? "; from page cache" : "");
    const bool cut = e.partial;
    std::string when;
    if (e.elapsed_s)
      when = fmt::format(" in {} ({:.0f} samples/s{})", format_seconds(*e.elapsed_s), e.samples_per_s,
                         cut ? " over the time it ran" : "");
    line(fmt::format("epoch {}{}", e.epoch, cut ? " (cut short)" : ""),
         fmt::format("{}{} samples, {} delivered{}; {}{}",
                     cut ? fmt::format("cut short by the stop ({}), not a whole epoch: ",
                                       e.cut_by.kind == LoaderStopKind::kNone ? "?" : to_string(e.cut_by))
                         : "",
                     format_count(e.samples), format_bytes(e.bytes), when, dev,
                     e.residency ? fmt::format("; {:.0f}% resident before", 100 * *e.residency) : ""));
  }
  return o;
}

HostDeviceIo host_device_io(const DeviceIo& io, const std::vector<DeviceIo>& epochs, uint64_t host_bytes, bool cold) {
  HostDeviceIo h = host_device_io(io, DeviceRef::kRead, host_bytes, cold);
  h.epochs.emplace();
  for (const auto& e : epochs) h.epochs->push_back(device_io_section(e));
  return h;
}

HostDeviceIo host_device_io(const DeviceIo& io, DeviceRef ref, uint64_t host_bytes, bool cold) {
  HostDeviceIo h;
  h.section = device_io_section(io, ref, host_bytes);
  const ColdRead c = ref == DeviceRef::kRead ? cold_read_check(io, host_bytes, cold) : ColdRead::kOk;
  h.cold_read_nothing = c == ColdRead::kNothing;
  h.cold_read_short = c != ColdRead::kOk;
  return h;
}

namespace {
std::string cold_read_flag_text(bool nothing, bool short_read) {
  if (nothing) return "  COLD RUN READ NOTHING FROM ITS DEVICES";
  if (short_read) return "  COLD RUN READ FAR LESS THAN IT DELIVERED FROM ITS DEVICES";
  return "";
}
}  // namespace

std::string host_cold_read_flag_text(const HostDeviceIo& d) {
  return cold_read_flag_text(d.cold_read_nothing, d.cold_read_short);
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

// The sections' DeviceIo merged as merge_device_io says; `note` describes it.
DeviceIo merge_sections(const std::vector<std::optional<DeviceIo>>& sections, const std::vector<std::string>& hosts,
                        std::string* note, bool* any) {
  std::vector<std::pair<std::string, std::vector<DeviceIo>>> by_host;  // in first-seen order
  size_t docs = 0, overlapped = 0, disjoint = 0;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!sections[i]) continue;
    ++docs;
    const std::string host = i < hosts.size() && !hosts[i].empty() ? hosts[i] : fmt::format("document {}", i + 1);
    DeviceIo io = named_for_host(*sections[i], host);
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

std::string merge_time_warning(const std::vector<std::optional<DeviceIo>>& sections,
                               const std::vector<std::string>& names) {
  std::vector<std::pair<DeviceIo, std::string>> timed;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!sections[i]) continue;
    if (sections[i]->start_unix_s <= 0) return "";  // a document without a start time: no claim either way
    timed.emplace_back(*sections[i], i < names.size() ? names[i] : fmt::format("document {}", i + 1));
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

std::optional<DeviceIoSection> merge_device_io(const std::vector<std::optional<DeviceIo>>& sections,
                                               const std::vector<std::string>& hosts, DeviceRef ref,
                                               uint64_t reference_bytes) {
  std::string note;
  bool any = false;
  const DeviceIo m = merge_sections(sections, hosts, &note, &any);
  if (!any) return std::nullopt;
  DeviceIoSection s = device_io_section(m, ref, reference_bytes);
  s.merge_note = note;
  return s;
}

std::optional<std::vector<RunEpoch>> merge_epochs(const std::vector<std::optional<std::vector<RunEpoch>>>& lists,
                                                  const std::vector<std::string>& hosts) {
  size_t n = 0;
  bool any = false;
  for (const auto& l : lists)
    if (l) {
      any = true;
      n = std::max(n, l->size());
    }
  if (!any) return std::nullopt;
  std::vector<RunEpoch> out;
  for (size_t e = 0; e < n; ++e) {
    RunEpoch row;
    row.epoch = e + 1;
    double elapsed = 0;
    std::vector<std::optional<DeviceIo>> sections(lists.size());
    for (size_t i = 0; i < lists.size(); ++i) {
      if (!lists[i] || e >= lists[i]->size()) continue;
      const RunEpoch& x = (*lists[i])[e];
      row.samples += x.samples;
      row.bytes += x.bytes;
      row.partial = row.partial || x.partial;
      if (row.cut_by.kind == LoaderStopKind::kNone) row.cut_by = x.cut_by;
      if (x.elapsed_s) elapsed = std::max(elapsed, *x.elapsed_s);
      sections[i] = x.device_io.io;
    }
    if (elapsed > 0) {  // the inputs' epochs ran at once: the longest is the merged epoch's time
      row.elapsed_s = elapsed;
      row.samples_per_s = static_cast<double>(row.samples) / elapsed;
      row.bytes_per_s = static_cast<double>(row.bytes) / elapsed;
    }
    std::optional<DeviceIoSection> d = merge_device_io(sections, hosts, DeviceRef::kRead, row.bytes);
    if (!d) {
      DeviceIo none;
      none.reason = "not in the merged documents";
      d = device_io_section(none, DeviceRef::kRead, row.bytes);
    }
    if (row.partial)
      drop_read_ratio(*d, "an input's epoch was cut short: the devices' reads include batches fetched ahead and never "
                          "delivered, so no ratio to the delivered bytes is given");
    row.device_io = std::move(*d);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace ioprobe
