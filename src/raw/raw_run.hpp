// Running `ioprobe raw`: engine choice per target, numjobs threads each with its own fd and
// engine, random offsets from a seeded generator aligned to bs, and the merged results.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "raw/raw_config.hpp"
#include "raw/raw_results.hpp"
#include "raw/raw_target.hpp"

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

/// Called once every job has opened the file and set up its engine (or failed to: then `setup`
/// holds the first job's error), just before the clock starts. A multi-host run waits here for
/// every process (a barrier) and learns whether any failed; the hook rethrows `setup` or throws
/// its own error to end the run before any I/O (the jobs are released and joined first).
using RawStartHook = std::function<void(std::exception_ptr setup)>;

/// Runs cfg.numjobs jobs on `target` with `engine`. Throws IoError when a job cannot open the
/// file or set up its engine; I/O errors end the run early and are reported in the results.
/// `at_start` (optional, see RawStartHook): the clock and --runtime start when it returns, so
/// elapsed_s is measured locally from that moment.
RawResults run_raw(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& engine,
                   const RawStartHook& at_start = {});

}  // namespace ioprobe
