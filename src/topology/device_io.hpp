// Device-level read and write accounting: what the target's storage devices themselves did over
// a measured interval, next to the bytes ioprobe delivered or wrote.
//
// Sources (Linux):
//   /proc/diskstats          per block device, fields 4 (reads completed), 6 (sectors read),
//                            8 (writes completed), 10 (sectors written); a sector here is always
//                            512 bytes whatever the device's block size
//                            (Documentation/admin-guide/iostats.rst, Documentation/ABI/testing/procfs-diskstats)
//   /proc/self/mountstats    NFS clients: the "bytes:" line (fs/nfs/iostat.h, nfs_stat_bytecounters):
//                            normalreadbytes normalwritebytes directreadbytes directwritebytes
//                            serverreadbytes serverwritebytes readpages writepages; the per-op
//                            "READ:" / "WRITE:" lines start with the operation count
//
// Which devices count (accounting_devices): the device the filesystem sits on (a partition, not
// its whole disk, which also carries the other partitions; a loop device, not its backing file's
// filesystem), or each member of a btrfs or md array (the members' traffic is what the disks
// did, RAID overhead included; the md device itself is not added, it would count twice). A loop
// device target's backing device (the block device holding its file) is read beside it, apart
// from the sums (DeviceIo::backing): without direct I/O the loop device reads its file through the
// page cache, so only that device says whether a disk read the bytes.
//
// Other processes' I/O on the same devices is in these counters too: DeviceIoMeter measures the
// devices' traffic in an idle window just before the run, and DeviceIo says when the run's own
// share cannot be told apart from it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "topology/target.hpp"

namespace ioprobe {

/// Cumulative counters of one block device (or one NFS mount), as the kernel keeps them.
struct IoCounters {
  uint64_t reads = 0;          // read requests completed
  uint64_t bytes_read = 0;     // bytes (diskstats: sectors x 512)
  uint64_t writes = 0;         // write requests completed
  uint64_t bytes_written = 0;  // bytes
};

/// Parses the text of /proc/diskstats: device name -> counters. Lines with fewer than 10 fields
/// or non-numeric counters are skipped (never throws). Kernels since 4.18 add discard and flush
/// fields after the 14th; they are ignored.
std::map<std::string, IoCounters> parse_diskstats(const std::string& text);

/// Parses the text of /proc/self/mountstats for the NFS mount mounted on `mount_point` (as in
/// mountinfo, unescaped; mountstats escapes spaces as \040). Returns the server bytes
/// (serverreadbytes, serverwritebytes: what crossed the wire, the client's page cache excluded)
/// and the READ / WRITE operation counts (0 when the per-op section is absent); nullopt when no
/// NFS mount of that mount point is listed or it has no "bytes:" line. Never throws.
std::optional<IoCounters> parse_mountstats(const std::string& text, const std::string& mount_point);

/// One device's share of a DeviceIo.
struct DeviceIoDevice {
  std::string name;  // kernel name ("loop0", "nvme0n1p2") or, for NFS, the mount source
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t reads = 0, writes = 0;  // requests completed
};

/// What the device holding a loop device's backing file did over the same interval. Kept apart
/// from DeviceIo's devices and sums: the loop device's reads are the reads delivered to the
/// filesystem on it; these are what reached a disk (none, when the backing file's page cache
/// served a loop device without direct I/O).
struct BackingIo {
  std::string loop;                    // the loop device ("loop0")
  std::string backing_file;            // its file (sysfs loop/backing_file)
  int direct_io = -1;                  // sysfs loop/dio: 1 O_DIRECT on the file, 0 page cache, -1 unknown
  DeviceIoDevice device;               // the block device holding the file ("vda") and its counters
  double idle_bytes_per_s_before = 0;  // that device's read + written bytes/s in the idle window

  /// Whether other traffic on the backing device, at the idle window's rate over `interval_s`
  /// seconds, is over 10% (and 1 MiB) of what it moved: the measurement's share cannot be told.
  bool share_unclear(double interval_s) const;
};

/// What the target's devices did over an interval: the result value of this accounting.
struct DeviceIo {
  std::string source = "none";          // "diskstats" | "nfs-mountstats" | "none"
  std::string reason;                   // source "none": why not measurable ("no block device: RAM (tmpfs)")
  std::vector<DeviceIoDevice> devices;  // sorted by name
  uint64_t bytes_read = 0, bytes_written = 0, reads = 0, writes = 0;  // sums over devices
  double interval_s = 0;               // the interval measured, seconds (merged: the longest)
  double start_unix_s = 0;             // its start on the wall clock, s since the Unix epoch (merged: the
                                       // earliest; 0: unknown, e.g. from an older document)
  double idle_window_s = 0;            // the idle window before the run, seconds (0: none measured)
  double idle_bytes_per_s_before = 0;  // read + written bytes/s (10^0 B/s) of the devices in that window
  uint64_t hosts = 1;                  // hosts whose accounting this sums (merged: added)
  std::optional<BackingIo> backing;    // a loop device target: the device under its backing file

  /// Whether anything was measured (source is not "none").
  bool measured() const { return source != "none"; }

  /// Bytes other traffic would have moved over interval_s at the idle window's rate.
  double expected_other_bytes() const { return idle_bytes_per_s_before * interval_s; }

  /// Whether the run's own share cannot be told apart: the idle window's traffic, projected over
  /// the interval, is more than 10% of the bytes counted (and at least 1 MiB).
  bool share_unclear() const;

  /// Adds another part (another epoch, process or host): devices with the same name add their
  /// counters (across hosts that is the same name on each host), totals and idle rates add,
  /// interval_s and idle_window_s are the max, start_unix_s the earliest known, hosts add. A part with source "none"
  /// adds nothing but its reason when this has none either; the first measured source is kept.
  /// The backing devices' counters add when both parts name the same one; a part whose backing
  /// device differs drops `backing` (no one device to name).
  void merge(const DeviceIo& other);
};

/// The devices to count for a target and the source, or source "none" with the reason.
struct DeviceIoPlan {
  std::string source = "none";       // "diskstats" | "nfs-mountstats" | "none"
  std::string reason;                // when "none"
  std::vector<std::string> devices;  // diskstats: kernel names; nfs: empty
  std::string mount_point;           // nfs: the mount point looked up in mountstats
  std::string mount_source;          // nfs: "server:/export"
  // A loop device target (devices = {the loop device}) whose backing file's block device is
  // known: that device is read beside it (DeviceIo::backing), never added to the sums.
  std::string backing_device;  // "vda", "" none
  std::string backing_loop;    // the loop device
  std::string backing_file;    // its file
  int loop_direct_io = -1;     // sysfs loop/dio: 1, 0, -1 unknown
};

/// Decides what to count for `t` (see the file comment): tmpfs/ramfs "no block device: RAM";
/// NFS from mountstats; other network and FUSE filesystems "not measurable" with the reason;
/// btrfs/md: the array members; else t.device, and for a loop device the device holding its
/// backing file (t.backing_device) as backing_device. Never throws.
DeviceIoPlan accounting_devices(const TargetInfo& t);

/// Counters of a plan's devices at one instant.
struct DeviceIoSnapshot {
  int64_t ns = 0;                             // monotonic clock (core/clock.hpp now_ns)
  int64_t wall_ns = 0;                        // the same instant on the wall clock (ns since the Unix epoch)
  std::map<std::string, IoCounters> devices;  // the plan's devices found; NFS: one entry
  std::optional<IoCounters> backing;          // the plan's backing_device, when listed
  bool ok = false;                            // false when the counters could not be read
  std::string error;                          // why not (the file and errno)
};

/// Reads the counters of a plan's devices and turns two readings into a DeviceIo.
/// `proc_root` is "/proc" on a live system; tests point it at a directory holding recorded
/// "diskstats" and "self/mountstats" files.
class DeviceIoMeter {
 public:
  explicit DeviceIoMeter(DeviceIoPlan plan, std::string proc_root = "/proc");

  const DeviceIoPlan& plan() const { return plan_; }

  /// The counters now. Never throws (ok false with the error when the file cannot be read).
  DeviceIoSnapshot snapshot() const;

  /// Sleeps `seconds` between two snapshots and keeps the devices' rate (read + written bytes/s)
  /// for every later delta's idle_bytes_per_s_before. Does nothing for source "none" or seconds <= 0.
  void measure_idle(double seconds);

  /// What the devices did from `a` to `b` (counters that went backwards, e.g. a device removed
  /// and re-added, count 0). Source "none" with the plan's reason, or with the snapshot's error.
  DeviceIo delta(const DeviceIoSnapshot& a, const DeviceIoSnapshot& b) const;

 private:
  DeviceIoPlan plan_;
  std::string proc_root_;
  double idle_window_s_ = 0;
  double idle_rate_ = 0;
  double backing_idle_rate_ = 0;  // the plan's backing_device, bytes/s in the idle window
};

/// Records snapshots at marks (the loader's epoch marks, or a step's start and end) and gives the
/// whole interval and each interval between consecutive marks. mark() is thread-safe.
class DeviceIoRecorder {
 public:
  explicit DeviceIoRecorder(DeviceIoMeter meter) : meter_(std::move(meter)) {}
  DeviceIoMeter& meter() { return meter_; }
  /// Takes a snapshot now (never throws).
  void mark();
  /// Forgets the marks taken (a new measurement with the same meter and idle rate).
  void clear();
  /// First mark to last; source "none" with the plan's reason, or "not measurable: fewer than two
  /// marks" when the run never started.
  DeviceIo whole() const;
  /// One DeviceIo per interval between consecutive marks (N + 1 marks: N intervals).
  std::vector<DeviceIo> intervals() const;

 private:
  DeviceIoMeter meter_;
  mutable std::mutex mu_;
  std::vector<DeviceIoSnapshot> marks_;
};

/// One host's accounting from several of its processes' measurements: they share the host's
/// devices, so the host counts once, never once per process. Each process measured from before a
/// common start barrier to the end of its own work, so the one that finished last covers every
/// process's work on the host, and its counters moved the most: the measured entry with the most
/// bytes read + written is returned (the first on a tie); with none measured, the first entry.
/// Empty input: source "none" ("no process of the host sent its accounting").
DeviceIo host_device_io(const std::vector<DeviceIo>& processes);

/// `io` with its devices named "HOST:NAME" (the loop device and the disk under its backing file
/// too): one host's "vda" is not another's when hosts are summed or listed together.
DeviceIo named_for_host(DeviceIo io, const std::string& host);

/// Several hosts' accounting together, each entry (hostname, that host's DeviceIo counted once
/// for the host): with more than one entry every host's devices are named "HOST:NAME" first
/// (named_for_host), so that equal kernel names on two hosts stay two devices; then the entries
/// add as DeviceIo::merge says (bytes and requests added, hosts added). One entry: returned as it
/// is. Empty: source "none" with the reason.
DeviceIo sum_hosts_device_io(const std::vector<std::pair<std::string, DeviceIo>>& hosts);

/// A cold read (O_DIRECT or evicted) below this many delivered bytes is judged only when its
/// devices read nothing at all: below it, metadata and readahead dominate a ratio. 16 MiB, chosen by us.
constexpr uint64_t kColdReadCheckedBytes = 16ULL << 20;
/// A cold read whose devices read less than this share of the bytes delivered was served by a
/// cache: 0.5, chosen by us (O_DIRECT reads at least what it delivers; readahead only adds).
constexpr double kColdReadMinRatio = 0.5;

/// How a cold read's device bytes compare with the bytes it delivered.
enum class ColdRead {
  kOk,       // not cold, not measured, nothing delivered, or the devices read enough
  kNothing,  // bytes were delivered, the devices read 0 B
  kFarLess,  // at least kColdReadCheckedBytes delivered, the devices read under kColdReadMinRatio of them
};

/// Judges a measurement (`cold`: O_DIRECT or page cache evicted before it) by the rules above.
ColdRead cold_read_check(const DeviceIo& io, uint64_t delivered_bytes, bool cold);

/// Where a measurement's bytes came from, by device bytes read over delivered bytes:
/// >= 0.9 "device", <= 0.1 "page cache", else "mixed"; "unknown" when not measured or nothing
/// was delivered. (Page-cache residency uses 0.95/0.05; device reads also carry readahead,
/// metadata and O_DIRECT padding, hence the wider band.) A memory filesystem (`fs_type` "tmpfs"
/// or "ramfs", topology/target.hpp) has no device to count: its bytes come from "RAM (tmpfs)".
/// "unknown" too when io.share_unclear(): other traffic on the devices could account for what
/// they read, so the measurement's own share is not known.
/// A loop device without direct I/O (io.backing, direct_io not 1) that read "device" or "mixed"
/// is judged again by its backing device's reads over the delivered bytes, with the same bands:
/// <= 0.1 kLoopBackingCache (the loop device's reads were served by its file's page cache),
/// between "mixed", >= 0.9 the loop device's own label; "unknown" above 0.1 when other traffic
/// on the backing device could account for its reads (BackingIo::share_unclear).
std::string bytes_source(const DeviceIo& io, uint64_t delivered_bytes, const std::string& fs_type = "");

/// bytes_source() of a loop device's reads served by its backing file's page cache.
inline constexpr const char* kLoopBackingCache = "page cache of the loop device's backing file";

/// The one vocabulary of where bytes came from, every value bytes_source() returns, in the order
/// of the schema's enum ($defs.bytes_source in reports/result.schema.json): "device", "page
/// cache", "mixed", "RAM (tmpfs)", "RAM (ramfs)", "unknown", kLoopBackingCache.
const std::vector<std::string>& bytes_source_names();

}  // namespace ioprobe
