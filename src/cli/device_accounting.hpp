// Device-level accounting of a subcommand's measurement (topology/device_io.hpp): the meter for
// its target, the idle window before it, and the warnings its figures call for.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "capacity/search.hpp"
#include "cluster/run_parts.hpp"
#include "loader/loader_result.hpp"
#include "report/capacity_document.hpp"
#include "report/checkpoint_document.hpp"
#include "report/raw_document.hpp"
#include "report/run_document.hpp"
#include "report/tune_document.hpp"
#include "topology/block_device.hpp"
#include "topology/device_io.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

/// Length of the idle window measured just before a run, seconds: long enough to see a busy
/// neighbour's traffic, short next to any run worth measuring.
constexpr double kDeviceIdleWindowS = 0.5;

/// A recorder for `t`'s devices with the idle window measured (`idle_s` seconds; 0: none).
/// Never throws; an unmeasurable target gives a recorder whose results say why.
std::unique_ptr<DeviceIoRecorder> device_recorder(const TargetInfo& t, double idle_s = kDeviceIdleWindowS);

/// Warnings about a read measurement's device accounting: a cold run (O_DIRECT or evicted)
/// whose device reads fall below half the bytes delivered (names the likely other caches); a cold
/// run on a loop device without direct I/O served by its backing file's page cache (bytes_source
/// kLoopBackingCache: names the file, the device under it and `losetup --direct-io=on`); the
/// run's own share that cannot be told apart from other traffic. `what` names the measurement
/// ("the run", "epoch 1", "the restore").
std::vector<std::string> device_read_warnings(const DeviceIo& io, uint64_t delivered_bytes, bool cold,
                                              const TargetInfo& t, const std::string& what);

/// The warning for io.share_unclear(): the idle rate before the run, what it would account for,
/// and what the devices moved, naming `what`.
std::string other_traffic_warning(const DeviceIo& io, const std::string& what);

/// A run's accounting into its document: results.device_io (read ratio to the bytes delivered),
/// results.epochs (per epoch: samples, bytes, residency, device_io), ingest.bytes_source (where
/// the AU's bytes came from: "device", "page cache", "mixed", "RAM (tmpfs)", "unknown"; a "storage" or
/// "metadata" verdict on bytes from memory says so in its text), and the warnings above. An
/// interrupted run (lr.partial) has no whole-run read ratio (interrupted_run_device_io). Across
/// hosts (`cluster` given, on rank 0) the accounting is the cluster's (ClusterRun::device_io, each
/// host's devices once) instead of `mine`, and each host whose cold run read far less than it
/// delivered is warned of by name.
void add_run_device_io(nlohmann::json& doc, const LoaderResult& lr, const DeviceIo& mine,
                       const std::vector<DeviceIo>& my_epochs, bool cold, const TargetInfo& t,
                       const cluster::ClusterRun* cluster = nullptr);
/// The same into a typed run document: results.device_io and epochs, ingest.bytes_source, the
/// verdict text of its ingest result, warnings appended.
void add_run_device_io(RunDocument& doc, const LoaderResult& lr, const DeviceIo& mine,
                       const std::vector<DeviceIo>& my_epochs, bool cold, const TargetInfo& t,
                       const cluster::ClusterRun* cluster = nullptr);

/// Device accounting of `tune`'s points: a mark before and after each run (from the sweep's
/// progress callback), the runs of one setting added up.
class TuneDeviceIo {
 public:
  explicit TuneDeviceIo(const TargetInfo& t) : rec_(device_recorder(t)) {}
  /// The sweep's progress callback: `done` false before a run, true after it.
  void on_run(uint32_t num_workers, uint32_t prefetch_factor, const std::string& numa, bool done);
  /// Adds one run's accounting `io` to its setting (on_run's end of a run).
  void add(uint32_t num_workers, uint32_t prefetch_factor, const std::string& numa, const DeviceIo& io);
  /// Sets each point's device_io (matched by num_workers, prefetch_factor and numa): the runs'
  /// accounting summed, with device_read_bytes_per_s (bytes_read / interval_s) and read_rate_ratio
  /// (that over the point's bytes_per_s, null when 0 or the point was not measured).
  void add_to(std::vector<TunePointEntry>& points) const;
  /// One warning per setting whose device figures other traffic could explain
  /// (DeviceIo::share_unclear), as a run gives for its own.
  std::vector<std::string> warnings() const;

 private:
  std::unique_ptr<DeviceIoRecorder> rec_;
  std::vector<std::pair<std::string, DeviceIo>> points_;
};

/// Device accounting of `capacity`'s points: a mark before and after each repeat's loader run on
/// this host's devices; each point's repeats added up per host (on one host: host 0). Across
/// hosts every process measures its own host and rank 0 adds what the hosts sent (add()).
class CapacityDeviceIo {
 public:
  explicit CapacityDeviceIo(const TargetInfo& t) : rec_(device_recorder(t)) {}
  /// Marks the start of a repeat.
  void before_run();
  /// Marks its end; returns what the devices did since before_run().
  DeviceIo after_run();
  /// Adds a repeat's accounting of host `host_index` (named `hostname`) to point `gpus` (the
  /// repeats of a point follow one another: their intervals add).
  void add(uint32_t gpus, int host_index, const std::string& hostname, const DeviceIo& io);
  /// Each point's accounting by its gpus, for the capacity document: the hosts' repeats added
  /// (sum_hosts_device_io: with several hosts each host's devices named HOST:NAME) and each host's
  /// own by host index (the document gives each its read ratio to the point's or the host row's
  /// delivered bytes).
  std::map<uint32_t, CapacityPointDeviceIo> points() const;
  /// The warnings run gives its device figures (device_read_warnings: a cold read the devices did
  /// not serve, other traffic on a shared device that the point's own share cannot be told apart
  /// from), for each of `points` (its delivered_bytes), naming the point.
  std::vector<std::string> warnings(const std::vector<CapacityPoint>& points, bool cold, const TargetInfo& t) const;

 private:
  std::unique_ptr<DeviceIoRecorder> rec_;
  std::map<uint32_t, std::map<int, DeviceIo>> points_;  // gpus -> host index -> repeats added
  std::map<int, std::string> hostnames_;                // host index -> its name
};

/// A recorder for `raw`: `t`'s devices, or with `block_path` set (a block device target) that
/// device itself (found by its st_rdev).
std::unique_ptr<DeviceIoRecorder> raw_device_recorder(const TargetInfo& t, const std::string& block_path);

/// raw's accounting `io` into doc.raw.results.device_io (read or write ratio to the bytes the
/// jobs moved), the warnings of a cold read (O_DIRECT) and the text line it returns. Across hosts
/// (the document has its cluster section and host rows) `io` is the hosts' sum: it gets a "scope"
/// saying so, and a warning names each host whose cold read fell short (host_cold_read_warning).
std::string add_raw_device_io(RawDocument& doc, const DeviceIo& io, const TargetInfo& t);

/// A checkpoint's accounting into its document, from `rec`'s marks around the last save (and its
/// restore): checkpoint.save.device_io (bytes written against bytes_on_disk, with
/// written_over_logical against logical_bytes), checkpoint.restore.device_io (bytes read against
/// the shard bytes read) and restore.served_from ("device", "page cache", "mixed", "unknown"), and
/// warnings where the devices wrote or read far less than the files hold. Across hosts (the
/// document has "cluster") the save's and the restore's figures are every host's own, added
/// (CheckpointJob::add_sections put them there, each host's in its row): a warning names each host
/// whose durable save wrote, or whose cold restore read, far less on its devices than its files hold.
void add_checkpoint_device_io(CheckpointDocument& doc, const DeviceIoRecorder& rec, const TargetInfo& t);

}  // namespace ioprobe::cli
