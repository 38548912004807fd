// The device_io parts of result documents as typed values, each with one writer and one strict
// reader (report/device_io_report.hpp builds them from the accounting, merges and renders them):
//
// device_io (DeviceIoSection): {source: "diskstats" | "nfs-mountstats" | "none", reason (source
//   "none" only), devices: [{name, bytes_read, bytes_written, reads, writes}], bytes_read,
//   bytes_written, reads, writes (bytes, requests), interval_s, start_unix_s (when taken),
//   idle_window_s (s), idle_bytes_per_s_before (B/s), hosts, backing (a loop device target,
//   topology/device_io_json.hpp), share_unclear; with a reference: reference_bytes and either
//   read_ratio and bytes_source, or write_ratio (a ratio is null when not given); a run or epoch a
//   stop cut short: ratio_note, and whole_epochs, whole_epochs_bytes, whole_epochs_read_ratio when
//   the whole epochs before the stop were measured; a merged document: merge_note; across hosts,
//   where a section adds the hosts' devices: scope, in words}
// results.epochs (RunEpoch): [{epoch (1-based), samples, bytes, elapsed_s, samples_per_s,
//   bytes_per_s (when timed), residency (0..1 or null), residency_source (with a residency),
//   device_io, partial and cut_by (an epoch a stop cut short)}]
// a host row's device_io (HostDeviceIo): a device_io section with cold_read_nothing,
//   cold_read_short and, in a run's host rows, epochs: [device_io, ...]
//
// The readers refuse a missing or mistyped field with UsageError naming the field's path under
// `where` (core/json_field.hpp): "'a.json'.results.device_io.bytes_read: expected a non-negative
// integer in range, found \"x\"".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/loader_stop.hpp"
#include "topology/device_io.hpp"

namespace ioprobe {

/// What the ratio of a device_io section compares against.
enum class DeviceRef { kNone, kRead, kWrite };

/// The ratio of the whole epochs before a stop (an interrupted run's device_io).
struct WholeEpochsRatio {
  uint64_t epochs = 0;    // whole epochs before the stop, each measured
  uint64_t bytes = 0;     // bytes they delivered
  double read_ratio = 0;  // their device reads / bytes
};

/// A device_io section of a result document: the accounting and what it is compared with.
struct DeviceIoSection {
  DeviceIo io;                 // the devices' figures (backing_file kept unescaped)
  bool share_unclear = false;  // written as io.share_unclear() when built
  DeviceRef ref = DeviceRef::kNone;
  uint64_t reference_bytes = 0;  // ref kRead/kWrite: the bytes delivered, on disk, written ...
  std::optional<double> ratio;   // read_ratio (kRead) or write_ratio (kWrite); none: written as null
  std::string bytes_source;      // kRead: "device", "page cache", ... (topology/device_io.hpp bytes_source)
  std::string ratio_note;        // why there is no ratio (a stop cut it short); "": none
  std::optional<WholeEpochsRatio> whole_epochs;
  std::string merge_note;  // a merged document: how the inputs were added; "": none
  std::string scope;       // whose devices these are, across hosts ("every host's devices ..."); "": not written
};

/// One entry of a run's results.epochs.
struct RunEpoch {
  uint64_t epoch = 0;  // 1-based
  uint64_t samples = 0;
  uint64_t bytes = 0;               // delivered
  std::optional<double> elapsed_s;  // the epoch's wall time, s; none: not timed (then no rates)
  double samples_per_s = 0;         // over elapsed_s
  double bytes_per_s = 0;           // B/s over elapsed_s
  std::optional<double> residency;  // page-cache residency before the epoch, 0..1; none: written as null
  std::string residency_source;     // with a residency
  DeviceIoSection device_io;
  bool partial = false;  // a stop cut it short
  LoaderStop cut_by;     // with partial: the stop (not set: not written)
};

/// A host row's device_io: the host's own devices with the cold-read flags (host_device_io_json).
struct HostDeviceIo {
  DeviceIoSection section;
  bool cold_read_nothing = false;
  bool cold_read_short = false;
  std::optional<std::vector<DeviceIoSection>> epochs;  // a run's host rows: per epoch, no reference
};

nlohmann::json device_io_section_json(const DeviceIoSection& s);
DeviceIoSection device_io_section_from_json(const nlohmann::json& j, const std::string& where);

/// A device_io section of a document that is not read strictly yet (a merged document, replay
/// figures): missing or mistyped keys read as 0, "none", "?" (device names) or absent; a malformed
/// backing part is left out. Never throws; a non-object reads as source "none".
DeviceIoSection device_io_section_lenient(const nlohmann::json& j);

nlohmann::json run_epochs_json(const std::vector<RunEpoch>& epochs);
std::vector<RunEpoch> run_epochs_from_json(const nlohmann::json& j, const std::string& where);

nlohmann::json host_device_io_section_json(const HostDeviceIo& h);
HostDeviceIo host_device_io_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace ioprobe
