// Checkpoint figures over ranks, as MLPerf Storage's checkpointing workload reports them: the
// duration of a save or restore is the slowest rank's (max over ranks), its throughput the total
// bytes over that duration, and the slowest rank's own rate (min over ranks, ranks with no state
// excluded) is kept beside it. Values merge, so the ranks of several hosts combine the same way
// as the ranks of one.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/restorer.hpp"
#include "checkpoint/shard_writer.hpp"
#include "core/error_record.hpp"

namespace ioprobe::checkpoint {

/// bytes / ns in B/s; 0 when ns <= 0.
double rate_bytes_per_s(uint64_t bytes, int64_t ns);

/// A save's ranks taken together.
struct SaveTotals {
  uint64_t ranks = 0;
  uint64_t logical_bytes = 0, stored_bytes = 0, written_bytes = 0, bytes_on_disk = 0;  // summed
  int64_t duration_max_ns = 0;      // open .. fsync returned, the slowest rank
  bool have_min_rate = false;       // some rank had state to write
  double min_rank_bytes_per_s = 0;  // logical bytes / duration, min over ranks with state
  bool all_direct = true;           // every rank wrote with O_DIRECT
  int64_t stage_ns = 0, compress_ns = 0, write_wait_ns = 0, fsync_ns = 0;  // each phase, max over ranks
  // ioprobe's compression pool (ranks with compress_active_ns > 0 only):
  uint64_t pool_ranks = 0;
  double workers_busy_sum = 0;      // mean busy workers of each rank, summed
  int workers_used_min = -1;        // fewest workers used by a rank; -1: no pool rank
  int64_t checksum_cpu_max_ns = 0;  // workers' checksum CPU time, max over ranks

  /// Adds one rank: `bytes_on_disk` its file's size, `has_state` false for a rank with nothing to
  /// write (ZeRO-0 beyond DP rank 0), which bounds no rate.
  void add_rank(const RankSaveResult& r, uint64_t bytes_on_disk, bool has_state);
  /// Adds another set of ranks (another host's): sums add, maxima and minima combine.
  void merge(const SaveTotals& other);
  bool direct() const { return ranks > 0 && all_direct; }
  /// Logical / on-disk bytes; 0 when nothing is on disk.
  double ratio() const;
};

/// A restore's ranks taken together.
struct RestoreTotals {
  uint64_t ranks = 0;
  uint64_t logical_bytes = 0;   // verified, summed
  int64_t duration_max_ns = 0;  // the slowest rank
  bool have_min_rate = false;
  double min_rank_bytes_per_s = 0;  // min over ranks with state
  bool all_direct = true;
  int decode_threads_max = 0;  // the most decoders a rank used
  ErrorRecord first_error;     // the first rank's failure; empty() when none

  void add_rank(const RankRestoreResult& r, bool has_state);
  void merge(const RestoreTotals& other);
  bool direct() const { return ranks > 0 && all_direct; }
  /// Total logical bytes / the slowest rank's duration, B/s.
  double bytes_per_s() const { return rate_bytes_per_s(logical_bytes, duration_max_ns); }
};

}  // namespace ioprobe::checkpoint
