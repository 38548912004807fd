#include "topology/device_io.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/clock.hpp"

namespace ioprobe {

namespace {

constexpr uint64_t kSectorBytes = 512;  // diskstats sectors, whatever the device's block size

bool to_u64(const std::string& s, uint64_t& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno || *end) return false;
  out = v;
  return true;
}

// mountstats and mountinfo escape space, tab, newline and backslash as \ooo octal.
std::string unescape_octal(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && s.size() >= i + 4) {
      const std::string oct = s.substr(i + 1, 3);
      if (oct.find_first_not_of("01234567") == std::string::npos) {
        out.push_back(static_cast<char>(std::stoi(oct, nullptr, 8)));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool read_file(const std::string& path, std::string& text, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

uint64_t minus(uint64_t b, uint64_t a) { return b >= a ? b - a : 0; }

}  // namespace

std::map<std::string, IoCounters> parse_diskstats(const std::string& text) {
  std::map<std::string, IoCounters> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string tok; ls >> tok;) f.push_back(tok);
    if (f.size() < 10) continue;
    // 1 major, 2 minor, 3 name, 4 reads, 5 reads merged, 6 sectors read, 7 ms reading,
    // 8 writes, 9 writes merged, 10 sectors written, ...
    IoCounters c;
    uint64_t sr = 0, sw = 0;
    if (!to_u64(f[3], c.reads) || !to_u64(f[5], sr) || !to_u64(f[7], c.writes) || !to_u64(f[9], sw)) continue;
    c.bytes_read = sr * kSectorBytes;
    c.bytes_written = sw * kSectorBytes;
    out[f[2]] = c;
  }
  return out;
}

std::optional<IoCounters> parse_mountstats(const std::string& text, const std::string& mount_point) {
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  std::optional<IoCounters> found;
  while (std::getline(in, line)) {
    if (line.rfind("device ", 0) == 0) {
      if (found) return found;  // the block of our mount has ended
      // "device SRC mounted on MP with fstype nfs4 statvers=1.1"
      std::istringstream ls(line);
      std::string dev, src, mounted, on, mp, with, fstype_kw, fstype;
      ls >> dev >> src >> mounted >> on >> mp >> with >> fstype_kw >> fstype;
      inside = mounted == "mounted" && on == "on" && unescape_octal(mp) == mount_point && fstype.rfind("nfs", 0) == 0;
      continue;
    }
    if (!inside) continue;
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "bytes:") {
      std::vector<uint64_t> v;
      for (std::string tok; ls >> tok;) {
        uint64_t x = 0;
        if (!to_u64(tok, x)) break;
        v.push_back(x);
      }
      if (v.size() < 6) continue;
      IoCounters c = found.value_or(IoCounters{});
      c.bytes_read = v[4];     // serverreadbytes
      c.bytes_written = v[5];  // serverwritebytes
      found = c;
    } else if ((key == "READ:" || key == "WRITE:") && found) {
      uint64_t ops = 0;
      std::string tok;
      if (ls >> tok && to_u64(tok, ops)) (key == "READ:" ? found->reads : found->writes) = ops;
    }
  }
  return found;
}

bool DeviceIo::share_unclear() const {
  if (!measured() || idle_window_s <= 0) return false;
  const double other = expected_other_bytes();
  const double counted = static_cast<double>(bytes_read + bytes_written);
  return other >= 1048576.0 && other > 0.1 * counted;
}

bool BackingIo::share_unclear(double interval_s) const {
  const double other = idle_bytes_per_s_before * interval_s;
  const double counted = static_cast<double>(device.bytes_read + device.bytes_written);
  return other >= 1048576.0 && other > 0.1 * counted;
}

void DeviceIo::merge(const DeviceIo& o) {
  if (!o.measured()) {
    if (!measured() && reason.empty()) reason = o.reason;
    hosts += o.hosts;
    return;
  }
  if (!measured()) {
    source = o.source;
    reason.clear();
    backing = o.backing;
  } else if (backing && o.backing && backing->device.name == o.backing->device.name) {
    DeviceIoDevice& b = backing->device;
    b.bytes_read += o.backing->device.bytes_read;
    b.bytes_written += o.backing->device.bytes_written;
    b.reads += o.backing->device.reads;
    b.writes += o.backing->device.writes;
    backing->idle_bytes_per_s_before += o.backing->idle_bytes_per_s_before;
  } else {
    backing.reset();
  }
  for (const auto& d : o.devices) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceIoDevice& x) { return x.name == d.name; });
    if (it == devices.end()) {
      devices.push_back(d);
      continue;
    }
    it->bytes_read += d.bytes_read;
    it->bytes_written += d.bytes_written;
    it->reads += d.reads;
    it->writes += d.writes;
  }
  std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  bytes_read += o.bytes_read;
  bytes_written += o.bytes_written;
  reads += o.reads;
  writes += o.writes;
  interval_s = std::max(interval_s, o.interval_s);
  if (o.start_unix_s > 0 && (start_unix_s <= 0 || o.start_unix_s < start_unix_s)) start_unix_s = o.start_unix_s;
  idle_window_s = std::max(idle_window_s, o.idle_window_s);
  idle_bytes_per_s_before += o.idle_bytes_per_s_before;
  hosts += o.hosts;
}

DeviceIoPlan accounting_devices(const TargetInfo& t) {
  DeviceIoPlan p;
  const std::string type = t.mount_fstype.empty() ? t.fs_type : t.mount_fstype;
  if (t.memory_backed) {
    p.reason = fmt::format("no block device: RAM ({})", t.fs_type);
    return p;
  }
  if (t.fs_type.rfind("nfs", 0) == 0 || t.mount_fstype.rfind("nfs", 0) == 0) {
    p.source = "nfs-mountstats";
    p.mount_point = t.mount_point;
    p.mount_source = t.mount_source;
    return p;
  }
  if (t.network) {
    p.reason = fmt::format("not measurable: {} is a network filesystem whose client exposes no byte counters to "
                           "read (the kernel has them for NFS only, in /proc/self/mountstats); the server's devices "
                           "are not visible from this host",
                           type);
    return p;
  }
  if (t.fs_type.rfind("fuse", 0) == 0) {
    p.reason = fmt::format("not measurable: {} is a FUSE filesystem; its daemon's reads are not attributed to a "
                           "block device of this mount",
                           type);
    return p;
  }
  if (!t.raid_members.empty()) {
    p.source = "diskstats";
    p.devices = t.raid_members;
    return p;
  }
  if (!t.device.empty()) {
    p.source = "diskstats";
    p.devices = {t.device};
    if (!t.backing_device.empty() && t.backing_device != t.device) {
      p.backing_device = t.backing_device;
      p.backing_loop = t.device;
      p.backing_file = t.backing_file;
      p.loop_direct_io = t.loop_direct_io;
    }
    return p;
  }
  p.reason = fmt::format("not measurable: no block device found for the mount of {} (source '{}', type {})",
                         t.mount_point, t.mount_source, type);
  return p;
}

DeviceIoMeter::DeviceIoMeter(DeviceIoPlan plan, std::string proc_root)
    : plan_(std::move(plan)), proc_root_(std::move(proc_root)) {}

DeviceIoSnapshot DeviceIoMeter::snapshot() const {
  DeviceIoSnapshot s;
  s.ns = now_ns();
  s.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
  if (plan_.source == "none") return s;
  std::string text;
  if (plan_.source == "diskstats") {
    if (!read_file(proc_root_ + "/diskstats", text, s.error)) return s;
    const auto all = parse_diskstats(text);
    for (const auto& d : plan_.devices) {
      auto it = all.find(d);
      if (it != all.end()) s.devices[d] = it->second;
    }
    if (!plan_.backing_device.empty()) {
      auto it = all.find(plan_.backing_device);
      if (it != all.end()) s.backing = it->second;
    }
    s.ok = !s.devices.empty();
    if (!s.ok)
      s.error = fmt::format("none of the devices ({}) is listed in {}/diskstats", fmt::join(plan_.devices, ", "),
                            proc_root_);
    return s;
  }
  if (!read_file(proc_root_ + "/self/mountstats", text, s.error)) return s;
  auto c = parse_mountstats(text, plan_.mount_point);
  if (!c) {
    s.error = fmt::format("{}/self/mountstats has no NFS byte counters for {}", proc_root_, plan_.mount_point);
    return s;
  }
  s.devices[plan_.mount_source.empty() ? plan_.mount_point : plan_.mount_source] = *c;
  s.ok = true;
  return s;
}

void DeviceIoMeter::measure_idle(double seconds) {
  if (plan_.source == "none" || seconds <= 0) return;
  const DeviceIoSnapshot a = snapshot();
  sleep_until_ns(a.ns + static_cast<int64_t>(seconds * 1e9));
  const DeviceIoSnapshot b = snapshot();
  if (!a.ok || !b.ok) return;
  const DeviceIo d = delta(a, b);
  idle_window_s_ = d.interval_s;
  idle_rate_ = d.interval_s > 0 ? static_cast<double>(d.bytes_read + d.bytes_written) / d.interval_s : 0;
  if (d.backing && d.interval_s > 0)
    backing_idle_rate_ = static_cast<double>(d.backing->device.bytes_read + d.backing->device.bytes_written) /
                         d.interval_s;
}

DeviceIo DeviceIoMeter::delta(const DeviceIoSnapshot& a, const DeviceIoSnapshot& b) const {
  DeviceIo io;
  io.interval_s = static_cast<double>(b.ns - a.ns) / 1e9;
  io.start_unix_s = static_cast<double>(a.wall_ns) / 1e9;
  if (plan_.source == "none") {
    io.reason = plan_.reason;
    return io;
  }
  if (!a.ok || !b.ok) {
    io.reason = "not measurable: " + (a.ok ? b.error : a.error);
    return io;
  }
  io.source = plan_.source;
  io.idle_window_s = idle_window_s_;
  io.idle_bytes_per_s_before = idle_rate_;
  for (const auto& [name, cb] : b.devices) {
    auto it = a.devices.find(name);
    if (it == a.devices.end()) continue;
    const IoCounters& ca = it->second;
    DeviceIoDevice d{name, minus(cb.bytes_read, ca.bytes_read), minus(cb.bytes_written, ca.bytes_written),
                     minus(cb.reads, ca.reads), minus(cb.writes, ca.writes)};
    io.bytes_read += d.bytes_read;
    io.bytes_written += d.bytes_written;
    io.reads += d.reads;
    io.writes += d.writes;
    io.devices.push_back(d);
  }
  if (a.backing && b.backing) {
    const IoCounters& ca = *a.backing;
    const IoCounters& cb = *b.backing;
    io.backing = BackingIo{plan_.backing_loop,
                           plan_.backing_file,
                           plan_.loop_direct_io,
                           {plan_.backing_device, minus(cb.bytes_read, ca.bytes_read),
                            minus(cb.bytes_written, ca.bytes_written), minus(cb.reads, ca.reads),
                            minus(cb.writes, ca.writes)},
                           backing_idle_rate_};
  }
  return io;
}

void DeviceIoRecorder::mark() {
  DeviceIoSnapshot s = meter_.snapshot();
  std::lock_guard<std::mutex> g(mu_);
  marks_.push_back(std::move(s));
}

void DeviceIoRecorder::clear() {
  std::lock_guard<std::mutex> g(mu_);
  marks_.clear();
}

DeviceIo DeviceIoRecorder::whole() const {
  std::lock_guard<std::mutex> g(mu_);
  if (marks_.size() < 2) {
    DeviceIo io;
    io.reason = meter_.plan().source == "none" ? meter_.plan().reason : "not measurable: the run took no measurement";
    return io;
  }
  return meter_.delta(marks_.front(), marks_.back());
}

std::vector<DeviceIo> DeviceIoRecorder::intervals() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<DeviceIo> out;
  for (size_t i = 1; i < marks_.size(); ++i) out.push_back(meter_.delta(marks_[i - 1], marks_[i]));
  return out;
}

DeviceIo host_device_io(const std::vector<DeviceIo>& processes) {
  if (processes.empty()) {
    DeviceIo none;
    none.reason = "no process of the host sent its accounting";
    return none;
  }
  const DeviceIo* best = &processes.front();
  for (const auto& p : processes) {
    if (!p.measured()) continue;
    if (!best->measured() || p.bytes_read + p.bytes_written > best->bytes_read + best->bytes_written) best = &p;
  }
  return *best;
}

DeviceIo named_for_host(DeviceIo io, const std::string& host) {
  for (auto& d : io.devices) d.name = host + ":" + d.name;
  if (io.backing) {
    io.backing->loop = host + ":" + io.backing->loop;
    io.backing->device.name = host + ":" + io.backing->device.name;
  }
  return io;
}

DeviceIo sum_hosts_device_io(const std::vector<std::pair<std::string, DeviceIo>>& hosts) {
  if (hosts.empty()) {
    DeviceIo none;
    none.reason = "no host sent its accounting";
    return none;
  }
  if (hosts.size() == 1) return hosts.front().second;
  DeviceIo sum = named_for_host(hosts.front().second, hosts.front().first);
  for (size_t i = 1; i < hosts.size(); ++i) sum.merge(named_for_host(hosts[i].second, hosts[i].first));
  return sum;
}

ColdRead cold_read_check(const DeviceIo& io, uint64_t delivered, bool cold) {
  if (!cold || !io.measured() || delivered == 0) return ColdRead::kOk;
  if (io.bytes_read == 0) return ColdRead::kNothing;
  if (delivered >= kColdReadCheckedBytes &&
      static_cast<double>(io.bytes_read) < kColdReadMinRatio * static_cast<double>(delivered))
    return ColdRead::kFarLess;
  return ColdRead::kOk;
}

const std::vector<std::string>& bytes_source_names() {
  static const std::vector<std::string> names = {"device",      "page cache", "mixed",          "RAM (tmpfs)",
                                                 "RAM (ramfs)", "unknown",    kLoopBackingCache};
  return names;
}

std::string bytes_source(const DeviceIo& io, uint64_t delivered_bytes, const std::string& fs_type) {
  if (fs_type == "tmpfs" || fs_type == "ramfs") return "RAM (" + fs_type + ")";
  if (!io.measured() || delivered_bytes == 0) return "unknown";
  // Another process's traffic on the devices could account for the bytes read: which bytes were
  // this measurement's cannot be told apart, so neither "device" nor "page cache" can be said.
  if (io.share_unclear()) return "unknown";
  const double r = static_cast<double>(io.bytes_read) / static_cast<double>(delivered_bytes);
  std::string own = r >= 0.9 ? "device" : r <= 0.1 ? "page cache" : "mixed";
  if (own == "page cache" || !io.backing || io.backing->direct_io == 1) return own;
  // The loop device read what it delivered, but without direct I/O it read its backing file
  // through the page cache: what the device under that file read says where the bytes came from.
  const double rb = static_cast<double>(io.backing->device.bytes_read) / static_cast<double>(delivered_bytes);
  if (rb <= 0.1) return kLoopBackingCache;
  if (io.backing->share_unclear(io.interval_s)) return "unknown";
  return rb >= 0.9 ? own : "mixed";
}

}  // namespace ioprobe
