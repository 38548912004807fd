// The device_io parts of result documents (report/device_io_section.hpp: the typed sections, their
// layout, writers and strict readers) built from the accounting (topology/device_io.hpp's
// DeviceIo), the per-epoch list of a run, their merges (report --merge) and their text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/loader_result.hpp"
#include "report/device_io_section.hpp"
#include "topology/device_io.hpp"

namespace ioprobe {

/// The device_io section of `io`. With ref kRead: read_ratio = bytes_read / reference_bytes and
/// bytes_source; kWrite: write_ratio = bytes_written / reference_bytes. A ratio is null when the
/// reference is 0 or nothing was measured.
DeviceIoSection device_io_section(const DeviceIo& io, DeviceRef ref = DeviceRef::kNone, uint64_t reference_bytes = 0);

/// device_io_section_json(device_io_section(io, ref, reference_bytes)): for the documents whose
/// device_io is not typed yet.
nlohmann::json device_io_json(const DeviceIo& io, DeviceRef ref = DeviceRef::kNone, uint64_t reference_bytes = 0);

/// Reads a device_io section back (missing keys read as 0 / "none"). Never throws.
DeviceIo device_io_from_json(const nlohmann::json& j);

/// results.epochs: one entry per epoch started, from the loader's per-epoch counts, its residency
/// before each epoch, and the device accounting between consecutive epoch marks (the lists may
/// differ in length: an entry gets what exists for it). Each entry has its wall time (elapsed_s)
/// and rates over it (samples_per_s, bytes_per_s) when r.epoch_ns has it. In a run a stop cut
/// short (any stop_reason but "completed": --duration, a signal, a stonewall, canceled reads), the
/// epochs from r.epochs_completed on are marked partial with cut_by = the stop reason, without a
/// read ratio (the devices also read batches fetched ahead and discarded; bytes_source only "page
/// cache" or "unknown"), and trailing epochs that delivered nothing are left out.
std::vector<RunEpoch> run_epochs(const LoaderResult& r, const std::vector<DeviceIo>& per_epoch);

/// run_epochs_json(run_epochs(r, per_epoch)).
nlohmann::json epochs_json(const LoaderResult& r, const std::vector<DeviceIo>& per_epoch);

/// An interrupted run's results.device_io (`dio`, with a read ratio): its devices also read what
/// the workers had fetched ahead and the stop discarded, so read_ratio becomes null with
/// ratio_note naming `stop_reason`, bytes_source only "page cache" or "unknown" (as an epoch cut
/// short); when every whole epoch before the stop (results.epochs `epochs`, not partial) had its
/// devices measured, whole_epochs, whole_epochs_bytes (delivered) and whole_epochs_read_ratio
/// (their device reads / those bytes) give the ratio that was measured.
/// A section without a read ratio (ref not kRead) is left as it is.
void interrupted_run_device_io(DeviceIoSection& dio, const std::vector<RunEpoch>& epochs, const LoaderStop& stop);

/// "loop0, loop1: 105 MB read (1.01 x the 104 MB delivered), 0 B written; 812 reads" style summary
/// of a device_io section (document form), or "not measured: REASON"; with a backing part, what
/// the device under the loop device's file read ("; under loop0: vda read 0 B ..."). `what` names the reference
/// ("delivered", "on disk", "shard bytes"). Without a ratio but with a ratio_note (a stop cut it
/// short), the note in its place, and the whole epochs' ratio when there is one.
std::string device_io_summary(const DeviceIoSection& dio, const std::string& what);

/// The same for a section of a document not read strictly yet (device_io_section_lenient);
/// "not measured" when `dio` is not an object.
std::string device_io_summary(const nlohmann::json& dio, const std::string& what);

/// The most epoch rows a text report prints: beyond it (many short epochs, e.g. --duration over
/// a small dataset) the first kMaxEpochRows - 1 rows, one line summing up the others
/// (omitted_epochs_text) and the last row; the JSON keeps every epoch.
inline constexpr size_t kMaxEpochRows = 10;

/// "... K more epochs (A to B: N samples, X to Y samples/s); every epoch is in the JSON ..." for
/// the entries [first, end) of a results.epochs list (0-based; printed 1-based).
std::string omitted_epochs_text(const std::vector<RunEpoch>& epochs, size_t first, size_t end);

/// The text lines of a run's results.device_io and results.epochs ("  device I/O ...",
/// "  epoch 1 ...", at most kMaxEpochRows of them plus the omitted_epochs_text line), each led by
/// a label padded to `width`; empty when the document has neither.
std::string render_device_io_text(const std::optional<DeviceIoSection>& device_io, const std::vector<RunEpoch>& epochs,
                                  size_t width);

/// A host row's device_io (multi-host runs): the host's accounting `io` with its read ratio to
/// the host's delivered bytes, the flags of host_device_io below (cold: the host's target.cache
/// is "cold") and epochs: device_io_section(epoch) each.
HostDeviceIo host_device_io(const DeviceIo& io, const std::vector<DeviceIo>& epochs, uint64_t host_bytes, bool cold);

/// A host row's device_io from its accounting (`ref`: what host_bytes are, the bytes it read or
/// wrote). A read (kRead) also gets cold_read_nothing (cold, measured, bytes delivered, its
/// devices read none) and cold_read_short (cold_read_check: nothing, or far less than delivered);
/// both false for a warm read or a write.
HostDeviceIo host_device_io(const DeviceIo& io, DeviceRef ref, uint64_t host_bytes, bool cold);

/// The text flag of a host row's device_io: "  COLD RUN READ NOTHING FROM ITS DEVICES",
/// "  COLD RUN READ FAR LESS THAN IT DELIVERED FROM ITS DEVICES", or "".
std::string host_cold_read_flag_text(const HostDeviceIo& d);

/// The warning for a host whose cold read fell short (cold_read_check; "" when it did not):
/// names the host, what it delivered, what its devices read, and the likely caches. `what`
/// names the measurement ("run", "raw read", "restore").
std::string host_cold_read_warning(const std::string& hostname, const std::string& what, const DeviceIo& io,
                                   uint64_t delivered_bytes, bool cold);

/// report --merge: the device_io sections of `docs` (each a document's results.device_io, or
/// null where a document has none; `hosts` the documents' hostnames, "" when unknown) as one.
/// Each document's devices are named "HOST:NAME" so that the same name on two hosts stays two
/// devices; documents from one host measured over overlapping intervals (start_unix_s and
/// interval_s; unknown start: taken as overlapping) count each other's traffic (each delta holds
/// the others' too), so of those the largest section is taken, not the sum; documents of one host
/// at disjoint times add; the hosts' sections then add (DeviceIo::merge). `note` gets what was done (for
/// the "merge_note" field). With ref kRead/kWrite the ratio is to `reference_bytes`.
/// Returns none when no document has a device_io section.
std::optional<DeviceIoSection> merge_device_io(const std::vector<std::optional<DeviceIo>>& sections,
                                               const std::vector<std::string>& hosts, DeviceRef ref,
                                               uint64_t reference_bytes);

/// report --merge: "" when the documents ran at the same time (their device_io `sections`
/// overlap in time, or a start time is unknown), else a warning naming two that did not overlap
/// (`names`, one per section): adding their rates then measures no concurrent load.
std::string merge_time_warning(const std::vector<std::optional<DeviceIo>>& sections,
                               const std::vector<std::string>& names);

/// report --merge: the documents' results.epochs lists added epoch by epoch (samples, bytes,
/// device_io as merge_device_io; residency null: the hosts' differ; partial when any input's
/// epoch is). Returns none when no document has an epochs list.
std::optional<std::vector<RunEpoch>> merge_epochs(const std::vector<std::optional<std::vector<RunEpoch>>>& epoch_lists,
                                                  const std::vector<std::string>& hosts);

}  // namespace ioprobe
