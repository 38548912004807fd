// What one raw run measured, as a mergeable value: the jobs of one process merge into the
// process's result, and the processes of a multi-host job into the cluster's, by merge().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error_record.hpp"
#include "raw/raw_stop.hpp"
#include "stats/histogram.hpp"

namespace ioprobe {

/// Everything measured by one raw run (one job, one process, or a whole cluster once merged).
struct RawResults {
  uint64_t ios = 0;  // completed requests of bs bytes
  uint64_t bytes = 0;
  double elapsed_s = 0;      // from the common start of all jobs to the last one's end (s)
  LatencyHistogram latency;  // ns per request, queue() to completion, all jobs merged
  double cpu_user_s = 0;     // getrusage(RUSAGE_SELF): every thread incl. io_uring workers (s)
  double cpu_sys_s = 0;
  uint64_t errors = 0;
  ErrorRecord first_error;                // {EIO, "read of 4096 B at offset 8192"}; empty() when none
  bool partial = false;                   // interrupted or stopped by an error
  RawStop stop;                           // why it ended (raw_stop.hpp); documents: its text, stop_reason
  std::vector<std::string> engine_notes;  // job 0's caps notes
  bool fixed_buffers = false, registered_files = false, sqpoll = false;

  /// Adds `other` (another job's or process's result of the same test, started at the same
  /// moment) to this one, as fio's "All clients" and IOR's rank-0 reduce do:
  ///  - I/Os, bytes, errors and CPU seconds are summed;
  ///  - latency histograms are added bucket by bucket (percentiles come from the sum, never
  ///    from averaged percentiles);
  ///  - elapsed_s is the longest of the two (each part timed on its own clock from the common
  ///    start), so rates recomputed from the merged totals are the aggregate's;
  ///  - partial when either is; the stop reason and first error are this one's, else other's
  ///    (a partial part's reason wins over a complete one's);
  ///  - the engine notes and capability flags stay this one's (fold a list by copying its first
  ///    element and merging the rest into the copy).
  void merge(const RawResults& other);

  /// Requests per second over elapsed_s (0 when nothing elapsed).
  double iops() const { return elapsed_s > 0 ? static_cast<double>(ios) / elapsed_s : 0.0; }
  /// Bytes per second over elapsed_s (0 when nothing elapsed).
  double bytes_per_s() const { return elapsed_s > 0 ? static_cast<double>(bytes) / elapsed_s : 0.0; }
};

}  // namespace ioprobe
