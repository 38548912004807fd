#include "cli/device_accounting.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "report/device_io_report.hpp"
#include "report/raw_report.hpp"

namespace ioprobe::cli {

std::unique_ptr<DeviceIoRecorder> device_recorder(const TargetInfo& t, double idle_s) {
  auto r = std::make_unique<DeviceIoRecorder>(DeviceIoMeter(accounting_devices(t)));
  r->meter().measure_idle(idle_s);
  return r;
}

std::vector<std::string> device_read_warnings(const DeviceIo& io, uint64_t delivered, bool cold, const TargetInfo& t,
                                              const std::string& what) {
  std::vector<std::string> w;
  if (!io.measured()) return w;
  if (delivered >= kColdReadCheckedBytes && cold_read_check(io, delivered, cold) != ColdRead::kOk) {
    std::string causes;
    if (t.o_direct != 1)
      causes = fmt::format("the filesystem ({}) did not take O_DIRECT, so the page cache served reads; ", t.fs_type);
    causes += "the host of a virtual disk caches it (virtio-blk/qemu cache=writeback), or an array or controller "
              "cache served the reads; a filesystem that ignores O_DIRECT (some FUSE and network filesystems) "
              "reads through its own cache";
    w.push_back(fmt::format("{} was cold but its devices read only {} for {} delivered ({:.0f}%): the bytes came from "
                            "another cache. Likely: {}",
                            what, format_bytes(io.bytes_read), format_bytes(delivered),
                            100.0 * static_cast<double>(io.bytes_read) / static_cast<double>(delivered), causes));
  }
  if (cold && io.backing && bytes_source(io, delivered) == kLoopBackingCache)
    w.push_back(fmt::format("{} was cold, but {} reads its backing file {} through the page cache (loop direct I/O "
                            "off) and {} under that file read only {} for {} delivered: the bytes came from the page "
                            "cache of the backing file, not a disk. For a cold read of the disk, set the loop "
                            "device's direct I/O (losetup --direct-io=on {}) or drop the file's pages first",
                            what, io.backing->loop, escape_bytes(io.backing->backing_file), io.backing->device.name,
                            format_bytes(io.backing->device.bytes_read), format_bytes(delivered),
                            "/dev/" + io.backing->loop));
  if (io.share_unclear()) w.push_back(other_traffic_warning(io, what));
  return w;
}

std::string other_traffic_warning(const DeviceIo& io, const std::string& what) {
  return fmt::format("{}: other traffic on {} before the run ({}) would account for {} of the {} the devices "
                     "moved: the run's own share cannot be told apart; measure on a quiet device",
                     what,
                     io.devices.empty() ? "the devices"
                                        : io.devices.front().name + (io.devices.size() > 1 ? " and the others" : ""),
                     format_rate(io.idle_bytes_per_s_before),
                     format_bytes(static_cast<uint64_t>(io.expected_other_bytes())),
                     format_bytes(io.bytes_read + io.bytes_written));
}

namespace {
std::string point_key(uint64_t w, uint64_t pf, const std::string& numa) { return fmt::format("{}/{}/{}", w, pf, numa); }
}  // namespace

void TuneDeviceIo::on_run(uint32_t num_workers, uint32_t prefetch_factor, const std::string& numa, bool done) {
  if (!done) {
    rec_->clear();
    rec_->mark();
    return;
  }
  rec_->mark();
  add(num_workers, prefetch_factor, numa, rec_->whole());
}

void TuneDeviceIo::add(uint32_t num_workers, uint32_t prefetch_factor, const std::string& numa, const DeviceIo& io) {
  const std::string key = point_key(num_workers, prefetch_factor, numa);
  for (auto& [k, v] : points_)
    if (k == key) {
      // The runs of a setting follow one another on the same host: their intervals add (merge
      // takes the longest, as for parts measured at once) and the idle rate is the one window's.
      const double interval = v.interval_s + io.interval_s;
      v.merge(io);
      v.interval_s = interval;
      v.hosts = io.hosts;
      v.idle_bytes_per_s_before = io.idle_bytes_per_s_before;
      return;
    }
  points_.emplace_back(key, io);
}

void TuneDeviceIo::add_to(std::vector<TunePointEntry>& points) const {
  for (auto& e : points) {
    const TunePoint& p = e.point;
    const std::string key = point_key(p.num_workers, p.prefetch_factor, p.numa);
    for (const auto& [k, io] : points_) {
      if (k != key) continue;
      TunePointDeviceIo d{.section = device_io_section(io)};
      d.device_read_bytes_per_s = io.interval_s > 0 ? static_cast<double>(io.bytes_read) / io.interval_s : 0;
      // A setting the sweep never finished has no bytes_per_s ("not measured"): no ratio.
      const double bps = tune_point_measured(e) ? p.bytes_per_s : 0;
      if (io.measured() && bps > 0) d.read_rate_ratio = d.device_read_bytes_per_s / bps;
      e.device_io = d;
    }
  }
}

std::vector<std::string> TuneDeviceIo::warnings() const {
  std::vector<std::string> out;
  for (const auto& [key, io] : points_)
    if (io.measured() && io.share_unclear())
      out.push_back(other_traffic_warning(io, fmt::format("tune's setting {} (workers/prefetch_factor/numa)", key)));
  return out;
}

void CapacityDeviceIo::before_run() {
  rec_->clear();
  rec_->mark();
}

DeviceIo CapacityDeviceIo::after_run() {
  rec_->mark();
  return rec_->whole();
}

void CapacityDeviceIo::add(uint32_t gpus, int host_index, const std::string& hostname, const DeviceIo& io) {
  hostnames_[host_index] = hostname;
  auto& hosts = points_[gpus];
  auto it = hosts.find(host_index);
  if (it == hosts.end()) {
    hosts.emplace(host_index, io);
    return;
  }
  // As tune's runs of one setting: one after another on the same host, so their intervals add.
  DeviceIo& v = it->second;
  const double interval = v.interval_s + io.interval_s;
  v.merge(io);
  v.interval_s = interval;
  v.hosts = io.hosts;
  v.idle_bytes_per_s_before = io.idle_bytes_per_s_before;
}

std::vector<std::string> CapacityDeviceIo::warnings(const std::vector<CapacityPoint>& points, bool cold,
                                                    const TargetInfo& t) const {
  std::vector<std::string> out;
  const std::map<uint32_t, CapacityPointDeviceIo> all = this->points();
  for (const auto& p : points) {
    const auto it = all.find(p.gpus);
    if (it == all.end()) continue;
    for (auto& w : device_read_warnings(it->second.all, p.delivered_bytes, cold, t,
                                        fmt::format("capacity's point at {} GPU(s)", p.gpus)))
      out.push_back(std::move(w));
  }
  return out;
}

std::map<uint32_t, CapacityPointDeviceIo> CapacityDeviceIo::points() const {
  std::map<uint32_t, CapacityPointDeviceIo> out;
  for (const auto& [gpus, hosts] : points_) {
    CapacityPointDeviceIo& d = out[gpus];
    std::vector<std::pair<std::string, DeviceIo>> named;
    for (const auto& [h, io] : hosts) {
      const auto name = hostnames_.find(h);
      named.emplace_back(name != hostnames_.end() ? name->second : fmt::format("host {}", h), io);
    }
    d.all = sum_hosts_device_io(named);
    d.hosts = hosts;
  }
  return out;
}

std::unique_ptr<DeviceIoRecorder> raw_device_recorder(const TargetInfo& t, const std::string& block_path) {
  struct stat st {};
  if (block_path.empty() || ::stat(block_path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return device_recorder(t);
  TargetInfo dev;
  dev.device = describe_block_device(major(st.st_rdev), minor(st.st_rdev)).name;
  if (dev.device.empty()) dev.mount_source = block_path;
  return device_recorder(dev);
}

std::string add_raw_device_io(RawDocument& doc, const DeviceIo& io, const TargetInfo& t) {
  const bool write = raw_document_writes(doc);
  const uint64_t bytes = doc.raw.results.bytes;
  DeviceIoSection section = device_io_section(io, write ? DeviceRef::kWrite : DeviceRef::kRead, bytes);
  const bool cold = !write && doc.raw.direct;
  if (doc.cluster) {
    section
        .scope = "every host's own devices, added, each host counted once (the processes of a host share its devices)";
    for (const auto& h : doc.hosts) {
      const std::string w = host_cold_read_warning(h.hostname, "raw read", h.device_io.section.io, h.bytes, cold);
      if (!w.empty()) doc.warnings.push_back(w);
    }
  }
  // Buffered reads: where the devices' accounting says the bytes came from, when it could tell.
  if (!write && !doc.raw.direct) {
    const std::string& measured = section.bytes_source;
    if (!measured.empty() && measured != "unknown") doc.raw.reads_from = measured;
  }
  doc.raw.results.device_io = std::move(section);
  for (auto& w : device_read_warnings(io, bytes, cold, t, write ? "the raw write" : "the raw read"))
    doc.warnings.push_back(std::move(w));
  return raw_device_io_summary(doc);
}

void add_checkpoint_device_io(CheckpointDocument& doc, const DeviceIoRecorder& rec, const TargetInfo& t) {
  if (doc.readback) return;
  const std::vector<DeviceIo> iv = rec.intervals();
  DeviceIo none;
  none.reason = rec.whole().reason.empty() ? "not measurable: no save ran" : rec.whole().reason;
  CheckpointSaveSection& sv = doc.section.save;
  const uint64_t on_disk = sv.bytes_on_disk.value_or(0);
  const uint64_t logical = sv.logical_bytes;
  const bool durable = sv.durable;
  // A durable save whose devices wrote far less than its files hold.
  auto save_warning = [&](const DeviceIo& io, uint64_t disk, const std::string& who) {
    if (io.measured() && disk >= kColdReadCheckedBytes && durable &&
        static_cast<double>(io.bytes_written) < 0.5 * static_cast<double>(disk))
      doc.warnings.push_back(fmt::format(
          "{} wrote {} for a durable save of {} on disk: a write cache in front of them absorbed it, or the "
          "filesystem compressed or deduplicated the files (a device that compresses internally is not visible here)",
          who, format_bytes(io.bytes_written), format_bytes(disk)));
  };
  // Under a launcher each host measured its own devices (CheckpointJob::after_save): the job's sum
  // is already in save.device_io (add_cluster_save_device_io), each host's in its row.
  const bool many_hosts = doc.cluster.has_value();
  if (many_hosts) {
    for (const auto& h : doc.hosts)
      if (h.save_device_io)
        save_warning(h.save_device_io->io, h.save_device_io->reference_bytes, "host " + h.hostname + "'s devices");
  } else {
    const DeviceIo& save = iv.empty() ? none : iv[0];
    sv.device_io = checkpoint_save_device_io(save, on_disk, logical);
    save_warning(save, on_disk, "the devices");
  }
  if (!doc.section.restore) return;
  CheckpointRestoreSection& rj = *doc.section.restore;
  // A warm restore (buffered, nothing dropped) may read from the page cache: no warning for that.
  const bool cold = rj.cache.rfind("cold", 0) == 0;
  if (many_hosts) {
    // Each host measured its own devices over the restore window (CheckpointJob::after_save);
    // the job's sum is already in restore.device_io. A host whose cold restore read far less
    // from its devices than the shard files hold was served by a cache.
    for (const auto& h : doc.hosts) {
      if (!h.restore) continue;
      const DeviceIo& io = h.restore->device_io.io;
      const uint64_t ref = h.restore->device_io.reference_bytes;
      for (auto& w : device_read_warnings(io, ref, cold, t, "the restore on host " + h.hostname))
        doc.warnings.push_back(std::move(w));
      // A small restore (under the size device_read_warnings judges) that read nothing.
      if (ref < kColdReadCheckedBytes) {
        const std::string w = host_cold_read_warning(h.hostname, "restore", io, ref, cold);
        if (!w.empty()) doc.warnings.push_back(w);
      }
    }
    return;
  }
  const DeviceIo& restore = iv.size() > 1 ? iv[1] : none;
  rj.device_io = device_io_section(restore, DeviceRef::kRead, on_disk);
  rj.served_from = bytes_source(restore, on_disk);
  for (auto& w : device_read_warnings(restore, on_disk, cold, t, "the restore")) doc.warnings.push_back(std::move(w));
}

namespace {

// A run's accounting (add_run_device_io) into its results' `device_io` and `epochs`, its ingest's
// `bytes_source` and `verdict_text` (null: the document has no ingest section) and `warnings`.
void run_device_io_into(std::optional<DeviceIoSection>& device_io, std::optional<std::vector<RunEpoch>>& epochs_out,
                        std::string* bytes_src, std::string* verdict_text, const std::string& verdict,
                        std::vector<std::string>& warnings, const LoaderResult& lr, const DeviceIo& mine,
                        const std::vector<DeviceIo>& my_epochs, bool cold, const TargetInfo& t,
                        const cluster::ClusterRun* cluster) {
  const DeviceIo& io = cluster ? cluster->device_io : mine;
  const std::vector<DeviceIo>& epochs = cluster ? cluster->device_io_epochs : my_epochs;
  if (cluster)
    for (const auto& h : cluster->hosts) {
      const std::string w = host_cold_read_warning(h.hostname, "run", h.device_io, h.bytes, cold);
      if (!w.empty()) warnings.push_back(w);
    }
  device_io = device_io_section(io, DeviceRef::kRead, lr.bytes);
  epochs_out = run_epochs(lr, epochs);
  // Interrupted: the reads include batches fetched ahead and discarded; no whole-run ratio.
  if (lr.partial) interrupted_run_device_io(*device_io, *epochs_out, lr.stop);
  if (bytes_src) {
    const std::string src = bytes_source(io, lr.bytes, t.fs_type);
    *bytes_src = src;
    // A memory filesystem has no device whose reads tell the source: the results say RAM as the
    // ingest section does, one vocabulary in one document.
    if (src.rfind("RAM", 0) == 0) {
      device_io->bytes_source = src;
      for (auto& e : *epochs_out)
        if (e.device_io.ref == DeviceRef::kRead) e.device_io.bytes_source = src;
    }
    // The verdict is labelled by where the bytes came from: served from memory, a "storage" or
    // "metadata" verdict measures the kernel's file path (open, read system calls, copies), not a device.
    if (verdict_text && (src == "page cache" || src == kLoopBackingCache || src.rfind("RAM", 0) == 0) &&
        (verdict == "storage" || verdict == "metadata"))
      *verdict_text += fmt::format(" [the bytes came from {}: this is the cost of the file path in memory (open, "
                                   "read system calls, copies), not of a storage device]",
                                   src == "page cache"        ? "the page cache"
                                   : src == kLoopBackingCache ? std::string("the ") + kLoopBackingCache
                                                              : src);
  }
  for (auto& w : device_read_warnings(io, lr.bytes, cold, t, "the run")) warnings.push_back(std::move(w));
}

}  // namespace

void add_run_device_io(nlohmann::json& doc, const LoaderResult& lr, const DeviceIo& mine,
                       const std::vector<DeviceIo>& my_epochs, bool cold, const TargetInfo& t,
                       const cluster::ClusterRun* cluster) {
  std::vector<std::string> warnings;
  std::string src;
  std::string verdict_text;
  const bool ingest = doc.contains("ingest") && doc["ingest"].is_object();
  const std::string verdict = ingest ? doc["ingest"].value("verdict", "") : "";
  if (ingest) verdict_text = doc["ingest"].value("verdict_text", "");
  std::optional<DeviceIoSection> device_io;
  std::optional<std::vector<RunEpoch>> epochs;
  run_device_io_into(device_io, epochs, ingest ? &src : nullptr, ingest ? &verdict_text : nullptr, verdict, warnings,
                     lr, mine, my_epochs, cold, t, cluster);
  doc["results"]["device_io"] = device_io_section_json(*device_io);
  doc["results"]["epochs"] = run_epochs_json(*epochs);
  if (ingest) {
    doc["ingest"]["bytes_source"] = src;
    if (doc["ingest"].contains("verdict_text") || !verdict_text.empty()) doc["ingest"]["verdict_text"] = verdict_text;
  }
  for (auto& w : warnings) doc["warnings"].push_back(std::move(w));
}

void add_run_device_io(RunDocument& doc, const LoaderResult& lr, const DeviceIo& mine,
                       const std::vector<DeviceIo>& my_epochs, bool cold, const TargetInfo& t,
                       const cluster::ClusterRun* cluster) {
  std::string src;
  IngestResult* in = doc.ingest.result ? &*doc.ingest.result : nullptr;
  run_device_io_into(doc.results.device_io, doc.results.epochs, &src, in ? &in->verdict_text : nullptr,
                     in ? in->verdict : std::string(), doc.warnings, lr, mine, my_epochs, cold, t, cluster);
  doc.ingest.bytes_source = src;
}

}  // namespace ioprobe::cli
