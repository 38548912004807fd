// Running `ioprobe raw`: engine choice per target, numjobs threads each with its own fd and
// engine, random offsets from a seeded generator aligned to bs, and the merged results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "raw/raw_config.hpp"
#include "raw/raw_target.hpp"
#include "stats/histogram.hpp"

namespace ioprobe {

struct TargetInfo;

/// The engine that will run and why (one line for the report). Not engine/engine_choice.hpp's
/// EngineChoice (the loader's, with fallback and warning fields): a second struct of that name in
/// the same namespace would break the one-definition rule once both are linked into ioprobe.
struct RawEngineChoice {
  std::string name;    // "io_uring" | "psync"
  std::string reason;  // e.g. "auto: tmpfs target, reads are memory copies ..."
};

/// Picks the engine: cfg.engine unless "auto". Auto takes io_uring for O_DIRECT and cold data;
/// psync for memory-backed targets (tmpfs), whose io_uring reads go to io-wq worker threads;
/// for data already in the page cache io_uring when --iodepth > 1 (cached reads complete inline,
/// a batch per system call) and psync at depth 1. Measured on kernel 6.x by tools/bench-fio.
/// `residency` is page_cache_residency() of the region (-1 unknown).
RawEngineChoice choose_raw_engine(const RawConfig& cfg, const TargetInfo& target, double residency);

/// Everything measured by one raw run.
struct RawResults {
  uint64_t ios = 0;          // completed requests of bs bytes
  uint64_t bytes = 0;
  double elapsed_s = 0;      // from the common start of all jobs to the last one's end
  LatencyHistogram latency;  // ns per request, queue() to completion, all jobs merged
  double cpu_user_s = 0;     // getrusage(RUSAGE_SELF): every thread incl. io_uring workers
  double cpu_sys_s = 0;
  uint64_t errors = 0;
  std::string first_error;   // "read at offset 4096: Input/output error (EIO)"
  bool partial = false;      // interrupted or stopped by an error
  std::string stop_reason;   // "runtime reached", "one pass over the region", "interrupted (SIGTERM)", ...
  std::vector<std::string> engine_notes;  // job 0's caps notes
  bool fixed_buffers = false, registered_files = false, sqpoll = false;
};

/// Runs cfg.numjobs jobs on `target` with `engine`. Throws IoError when a job cannot open the
/// file or set up its engine; I/O errors end the run early and are reported in the results.
RawResults run_raw(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& engine);

}  // namespace ioprobe
