// The steps of one `ioprobe checkpoint` run, in order: the state generated in memory, the
// compression speeds measured on it, the raw write baseline, the save (or series of saves) with
// its restore, the shards removed, the raw baseline again. What surrounds them -- the other
// processes of a job across hosts, progress lines, device accounting -- comes in through
// CheckpointHooks, so this file knows no option name, no transport and no report.
#pragma once

#include <optional>
#include <string>

#include "checkpoint/config.hpp"
#include "checkpoint/raw_baseline.hpp"
#include "checkpoint/run_data.hpp"
#include "checkpoint/save_series.hpp"

namespace ioprobe::checkpoint {

class CheckpointHooks {
 public:
  virtual ~CheckpointHooks() = default;
  /// A progress line (one line, no newline) while the run goes on.
  virtual void progress(const std::string& line) = 0;
  /// A warning: kept in the result (CheckpointRunData::warnings) and shown at once.
  virtual void warn(const std::string& line) = 0;
  /// A barrier across the job's processes before `step`; true when any process was interrupted
  /// by then (alone: interrupted()). Every process must reach the same steps.
  virtual bool sync_stopped(const char* step) = 0;
  /// This process's raw baseline merged with every other process's (alone: `mine`); absent, with
  /// `why`, when any process has none.
  virtual std::optional<RawWriteResult> merge_raw(std::optional<RawWriteResult> mine, std::string& why) = 0;
  /// Whether the restore runs after every process's save (across hosts: after_save) rather than
  /// inside the save series, after this process's save.
  virtual bool restores_after_save() const = 0;
  /// After the save (all processes): ends the job when this process's save failed; across hosts,
  /// restores the shards assigned to this process into d.restore when `restore` is set.
  virtual void after_save(CheckpointRunData& d, bool restore) = 0;
  /// Just before the barrier that starts the save (device accounting measures its idle window here).
  virtual void before_save() = 0;
  /// Device accounting marks of the series (save_series.hpp SeriesLimits::mark).
  virtual void mark(int phase) = 0;
  /// After each completed save of a series.
  virtual void on_save(const SeriesSave& s) = 0;
};

/// Runs the steps for `c` into `d` (whose state, options, directory and CPU count the caller has
/// filled): generates the state, probes compression, measures the raw baseline (when
/// c.raw_baseline and the space allow: a failure is a reason in d.raw_unavailable, not an
/// error), saves (repeatedly with c.series), restores with c.restore, removes the published
/// shards unless c.keep, and measures the raw baseline again. Returns the series. I/O and data
/// errors are results (d.save, d.restore); an exception (out of memory, a failure on another
/// process) removes the shards this run published before it leaves.
SeriesResult run_checkpoint(const CheckpointConfig& c, CheckpointRunData& d, CheckpointHooks& h);

}  // namespace ioprobe::checkpoint
