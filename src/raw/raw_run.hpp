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
struct UringAvailability;

/// The engine that will run and why (one line for the report). Not engine/engine_choice.hpp's
/// EngineChoice (the loader's, with fallback and warning fields): a second struct of that name in
/// the same namespace would break the one-definition rule once both are linked into ioprobe.
struct RawEngineChoice {
  EngineKind name = EngineKind::kPsync;
  std::string reason;   // e.g. "auto: tmpfs is RAM: pread copies directly ..."
  std::string warning;  // non-empty when the user should hear about it (a fallback to psync)
};

/// Picks the engine with engine/'s one chooser (choose_engine: the loader and `probe` ask the same
/// function), for cfg.numjobs threads of cfg.iodepth requests each. `residency` is
/// page_cache_residency() of the region (-1 unknown), named in the reason. `uring`: the probe's
/// availability; auto falls back to psync when io_uring is refused, --engine io_uring throws
/// IoError naming the cause.
RawEngineChoice choose_raw_engine(const RawConfig& cfg, const TargetInfo& target, double residency,
                                  const UringAvailability& uring);
/// Same, probing io_uring itself (probe_io_uring).
RawEngineChoice choose_raw_engine(const RawConfig& cfg, const TargetInfo& target, double residency);

/// Called once every job has opened the file and set up its engine (or failed to: then `setup`
/// holds the first job's error), just before the clock starts. A multi-host run waits here for
/// every process (a barrier) and learns whether any failed; the hook rethrows `setup` or throws
/// its own error to end the run before any I/O (the jobs are released and joined first).
using RawStartHook = std::function<void(std::exception_ptr setup)>;

/// Runs cfg.numjobs jobs on `target` with the engine `choice`. Throws IoError when a job cannot open the
/// file or set up its engine; I/O errors end the run early and are reported in the results.
/// `at_start` (optional, see RawStartHook): the clock and --runtime start when it returns, so
/// elapsed_s is measured locally from that moment.
RawResults run_raw(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& choice,
                   const RawStartHook& at_start = {});

}  // namespace ioprobe
