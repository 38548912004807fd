// The raw sequential write bandwidth of the checkpoint's target, measured in the same run with
// the same writer (io_uring, O_DIRECT where accepted, same I/O size and depth, one file per
// rank written in parallel, fsync), from buffers of random bytes filled before the clock starts
// (not zeros: a compressing or zero-skipping target would flatter the baseline): no staging, no
// compression. The checkpoint's bandwidth is reported as a ratio of this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/uring_writer.hpp"

namespace ioprobe::checkpoint {

struct RawWriteResult {
  uint64_t bytes = 0;            // all ranks
  std::vector<int64_t> rank_ns;  // open .. fsync done, per rank
  int64_t max_ns = 0;
  bool direct = false;
  bool interrupted = false;
  double bytes_per_s() const { return max_ns > 0 ? bytes * 1e9 / static_cast<double>(max_ns) : 0; }
};

/// Writes `bytes_per_rank[r]` bytes to a temporary file per rank in `dir` (removed afterwards).
/// Throws IoError naming the file on failure (ENOSPC included); the files are removed first.
RawWriteResult measure_raw_write(const std::string& dir, const std::vector<uint64_t>& bytes_per_rank,
                                 const UringWriterOptions& io);

/// Lets the device finish writing back the previous phase's data before the next one starts
/// (virtual disks acknowledge writes and flush later): sync, then max(1 s, `raw`'s duration) idle.
void settle(const RawWriteResult& raw);

/// Free bytes for an unprivileged writer in `dir` now (core/free_space.hpp); UINT64_MAX where
/// the filesystem reports no size (f_blocks 0: ramfs), so nothing is refused there.
uint64_t free_bytes_now(const std::string& dir);

}  // namespace ioprobe::checkpoint
