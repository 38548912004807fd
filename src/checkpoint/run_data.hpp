// Everything one `ioprobe checkpoint` run measured, as plain values for report/ to format.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/compressor.hpp"
#include "checkpoint/raw_baseline.hpp"
#include "checkpoint/restorer.hpp"
#include "checkpoint/saver.hpp"
#include "checkpoint/state_spec.hpp"

namespace ioprobe::checkpoint {

struct CheckpointRunData {
  StateSpec state;
  SaveOptions opts;
  std::string dir;
  std::string
      target_memory_fs;  // "tmpfs" or "ramfs" when --dir is memory-backed (a restore there cannot read cold), else ""
  bool async = false;
  double step_time_s = 0;      // --step-time (async)
  double baseline_step_s = 0;  // measured idle step time (async)
  bool state_cyclic = false;   // resident windows reused (state larger than the memory budget)
  uint64_t resident_bytes = 0;
  uint64_t resident_huge_page_bytes = 0;  // of those, on transparent huge pages after generation (measured)
  int cpus_allowed = 1;
  std::optional<RawWriteResult> raw;         // absent with --raw-baseline off; the better of the runs
  std::vector<double> raw_runs_bytes_per_s;  // before and after the save
  std::string raw_unavailable;               // why `raw` is absent ("--raw-baseline off", not enough space, the error)
  std::string raw_after_save_skipped;        // why the run after the save did not run (then `raw` is the run before)
  std::optional<ZstdProbe>
      zstd_probe;  // one core's speed on this state, measured in this run (best of 3 of two methods, before any write)
  std::optional<ZstdProbe> zstd_mt_probe;  // zstd's own multithreading with `cores` workers, in memory
  std::optional<ZstdProbe> pool_probe;     // ioprobe's own threads (`cores` of them, a frame per piece), in memory
  SaveResult save;
  std::vector<uint64_t> file_bytes;  // stat of the published files (bytes on disk), per rank
  std::optional<RestoreResult> restore;
  int restore_threads = 1;   // --restore-threads: decoders per rank (version 3 shards)
  bool restore_cold = true;  // the restore dropped the page cache first (false: warm, buffered)
  std::vector<std::string> warnings;
};

/// Cores that compress at once in `d`'s save: the workers of each rank that has state to write
/// (the rank's own thread with --compress-threads 0), at most the allowed CPUs; at least 1.
inline int compression_cores(const CheckpointRunData& d) {
  int ranks_with_state = 0;
  for (const auto& r : d.state.ranks) ranks_with_state += r.bytes > 0 ? 1 : 0;
  const int per_rank = d.opts.compress_threads > 0 ? d.opts.compress_threads : 1;
  return std::max(1, std::min(d.cpus_allowed, per_rank * std::max(1, ranks_with_state)));
}

}  // namespace ioprobe::checkpoint
