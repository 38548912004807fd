// The "checkpoint" section of the result document (kind "checkpoint") and its text rendering.
// The text is rendered from the typed document (report/checkpoint_document.hpp), so `ioprobe report
// FILE.json` re-renders it after decoding; every rate is B/s (printed as MB/s = 10^6 B/s and MiB/s).
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/run_data.hpp"
#include "report/checkpoint_document.hpp"

namespace ioprobe {

/// Builds the "checkpoint" section of a save run, with derived figures (ratios, the goals analysis,
/// bound, MLPerf-style duration = max over ranks and throughput = min over ranks). elapsed_s, the
/// series, state.content and the device accounting are the command's to fill in.
CheckpointSection checkpoint_section(const checkpoint::CheckpointRunData& d);

/// Below either of these, a save or the raw write it is compared with is too short for a stable
/// checkpoint / raw ratio: a few ms of open, fsync and directory fsync (and the page cache's
/// write-back timing) are a large share of it. Measured on ext4 (virtio disk, 2 shared vCPUs), 3 runs
/// each of `ioprobe checkpoint --size S`: checkpoint / raw 0.54-0.83 at 4 MiB (writes of 0.02-0.04 s),
/// 0.89-1.59 at 64 MiB (0.1-0.2 s; above 1, the save "faster" than the raw write, is write-back
/// timing), 0.78-1.10 at 256 MiB (0.3-0.8 s), 0.63-0.92 at 1 GiB (0.9-1.4 s, the spread left is the
/// shared CPUs'); no ratio above 1 in any run of 0.5 s or more.
inline constexpr double kRatioMinSeconds = 0.5;
inline constexpr uint64_t kRatioMinBytes = 64ULL << 20;

/// "" when the save (`save_bytes` in `save_s`) and the raw write (`raw_bytes` in `raw_s`) are both
/// at least kRatioMinBytes and kRatioMinSeconds; else the note that the ratio is not meaningful at
/// this size, with the volumes and times measured and the --size to use instead (the larger of
/// 1 GiB and what the slower of the two writes in 2 x kRatioMinSeconds, rounded up to a power of
/// two).
std::string ratio_size_note(uint64_t save_bytes, double save_s, uint64_t raw_bytes, double raw_s);

/// Human-readable report of a checkpoint document (a save run's, or a read-back's).
std::string render_checkpoint_text(const CheckpointDocument& doc);

}  // namespace ioprobe
