#include "checkpoint/orchestrator.hpp"

#include <unistd.h>

#include <memory>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/state_build.hpp"
#include "checkpoint/training_emulator.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace ioprobe::checkpoint {

namespace {

// One raw write run of the state's size; on lack of space (checked first), an I/O error or an
// interruption it returns nothing and says why.
std::optional<RawWriteResult> try_raw(const CheckpointRunData& d, const std::string& when, std::string& why) {
  uint64_t need = 0;
  std::vector<uint64_t> rank_bytes;
  for (const auto& r : d.state.ranks) {
    rank_bytes.push_back(r.bytes);
    need += (r.bytes + 4095) / 4096 * 4096;
  }
  const uint64_t free_now = free_bytes_now(d.dir);
  if (need > free_now) {
    why = fmt::format("not enough space {}: it needs {}, {} are free in {}", when, format_bytes(need),
                      format_bytes(free_now), d.dir);
    return std::nullopt;
  }
  try {
    // The baseline is the device's limit: its buffers stay on huge pages whatever the save's
    // setting (with 4 KiB pages it measured 439 MB/s, against ~1,400, on this project's VM).
    UringWriterOptions raw_io = d.opts.io;
    raw_io.huge_pages = true;
    RawWriteResult r = measure_raw_write(d.dir, rank_bytes, raw_io);
    if (r.interrupted) {  // cut short by Ctrl-C: its bytes and time describe nothing
      why = fmt::format("interrupted {}: a cut-short run is not counted", when);
      return std::nullopt;
    }
    return r;
  } catch (const IoError& e) {
    why = e.what();
    return std::nullopt;
  }
}

}  // namespace

SeriesResult run_checkpoint(const CheckpointConfig& c, CheckpointRunData& d, CheckpointHooks& h) {
  // State in memory (untimed).
  h.progress(fmt::format("generating {} of {} in memory ({} rank(s))...", format_bytes(d.state.host_bytes),
                         c.content_label, d.state.ranks.size()));
  std::vector<ResidentState> states = build_states(c, d);
  if (d.state_cyclic)
    h.warn(fmt::format("state larger than the memory budget: {} resident, read cyclically",
                       format_bytes(d.resident_bytes)));
  probe_compression(states, d);

  // Without a baseline, the caller has put the reason in d.raw_unavailable.
  const bool stop_before_raw = h.sync_stopped("start the raw baseline");  // every host at once
  if (c.raw_baseline && stop_before_raw) d.raw_unavailable = "interrupted before it started";
  if (c.raw_baseline && !stop_before_raw) {
    h.progress(fmt::format("measuring raw sequential write of {}...", format_bytes(d.state.host_bytes)));
    d.raw = h.merge_raw(try_raw(d, "before the save", d.raw_unavailable), d.raw_unavailable);
    if (d.raw) settle(*d.raw);
    else
      h.warn("raw write baseline not measured (" + d.raw_unavailable +
             "); the save is reported without the comparison");
  }
  std::unique_ptr<TrainingEmulator> emu;
  if (d.async) {
    h.progress(fmt::format("calibrating the emulated training step ({} s, then 3 idle steps: about {:.1f} s)...",
                           d.step_time_s, 0.3 + 3 * d.step_time_s));
    emu = std::make_unique<TrainingEmulator>(d.step_time_s);
    d.baseline_step_s = emu->baseline_step_s();
  }

  // One save, or a series: each save is published, restored when asked, and removed before the
  // next; the files of the last completed save stay published here.
  SeriesResult series;
  h.before_save();
  if (!h.sync_stopped("start the save")) {  // every process's ranks time from this barrier
    h.progress(c.series ? "saving checkpoints repeatedly..."
               : c.restore
                   ? (c.restore_cold ? "saving checkpoint, then restoring (cold cache) and verifying..."
                                     : "saving checkpoint, then restoring (warm: page cache kept) and verifying...")
                   : "saving checkpoint...");
    SeriesLimits lim;
    lim.repeat = c.repeat;
    lim.duration_s = c.duration_s;
    lim.restore = c.restore && !h.restores_after_save();
    lim.read_block_bytes = d.opts.io.io_size;
    lim.restore_threads = d.restore_threads;
    lim.restore_cold = d.restore_cold;
    lim.mark = [&h](int phase) { h.mark(phase); };
    series = run_save_series(states, d.dir, d.opts, d.async, emu.get(), lim,
                             [&](const SeriesSave& s) { h.on_save(s); });
    d.save = series.last;
    d.file_bytes = series.last_file_bytes;
    d.restore = series.last_restore;
  } else {
    d.save.interrupted = true;
  }
  // The published shards are removed (unless kept) before the second raw run, which needs their
  // space, and on any exception from here on.
  auto remove_shards = [&] {
    if (!c.keep)
      for (const auto& p : d.save.final_paths) ::unlink(p.c_str());
  };
  try {
    h.after_save(d, c.restore);
    remove_shards();
    const bool stop_after = h.sync_stopped("remove the shards");
    if (d.raw && d.save.ok && !stop_after) {
      // Second raw run after the save: the better of the two is the baseline (strict comparison).
      settle(*d.raw);
      h.progress("measuring raw sequential write again...");
      std::optional<RawWriteResult> again = h.merge_raw(try_raw(d,
                                                                c.keep ? "after the save, beside the kept checkpoint"
                                                                       : "after the save",
                                                                d.raw_after_save_skipped),
                                                        d.raw_after_save_skipped);
      if (again) {
        d.raw_runs_bytes_per_s = {d.raw->bytes_per_s(), again->bytes_per_s()};
        if (again->bytes_per_s() > d.raw->bytes_per_s()) d.raw = again;
      } else {
        d.raw_runs_bytes_per_s = {d.raw->bytes_per_s()};
        h.warn("the raw write after the save gave no figure (" + d.raw_after_save_skipped +
               "); the baseline is the run before the save only");
      }
    }
  } catch (...) {
    remove_shards();
    throw;
  }
  return series;
}

}  // namespace ioprobe::checkpoint
