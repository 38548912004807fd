// Repeated saves into one directory: the long-running mode of `ioprobe checkpoint` (--repeat N,
// --duration T), for steady-state figures and soak tests of the writer.
//
// Each save goes through save_checkpoint() (temporary files, fsync, atomic rename, directory
// fsync), is optionally restored and verified, and its published files (only those, by the exact
// paths the saver returned) are removed before the next save starts. A save that fails or is
// interrupted ends the series; the saver leaves no file under a final name in that case.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/restorer.hpp"
#include "checkpoint/saver.hpp"

namespace ioprobe::checkpoint {

/// When to stop and what to do per save. At least one save is always attempted.
struct SeriesLimits {
  uint64_t repeat = 1;                    // at most this many saves; 0 = no count limit (then duration_s > 0)
  double duration_s = 0;                  // no save starts after this many seconds from the first; 0 = no time limit
  bool restore = false;                   // restore and verify each save before removing it
  uint64_t read_block_bytes = 16u << 20;  // restore read size (bytes)
  int restore_threads = 1;                // decoders per rank (restorer.hpp)
  bool restore_cold = true;               // restore with the page cache dropped (restorer.hpp)
  // Called with 0 just before each save, 1 after it (before its restore), 2 after the restore
  // (device accounting, cli/device_accounting.hpp). Must not throw; may be empty.
  std::function<void(int)> mark;
};

/// Figures of one completed save (and its restore). Rates are bytes per second (B/s).
struct SeriesSave {
  uint64_t index = 0;            // 1-based
  uint64_t logical_bytes = 0;    // state bytes saved
  uint64_t bytes_on_disk = 0;    // stat() of the published files
  double time_to_durable_s = 0;  // the save's start .. published (and fsynced when enabled)
  double write_bytes_per_s = 0;  // logical_bytes / time_to_durable_s
  double user_cpu_s = 0, sys_cpu_s = 0;
  std::optional<double> restore_bytes_per_s;  // logical bytes / the slowest rank's restore time, with --restore
};

/// Why a series ended; to_string gives the text the checkpoint document's series.stopped_by holds.
enum class SeriesStop {
  kNone,           // "": no save was attempted (stopped while preparing)
  kRepeat,         // "repeat": --repeat saves done
  kDuration,       // "duration": --duration passed
  kInterrupted,    // "interrupted": SIGINT or SIGTERM
  kSaveFailed,     // "save failed"
  kRestoreFailed,  // "restore failed" (--restore)
};
/// "repeat", "duration", "interrupted", "save failed", "restore failed"; "" for kNone.
const char* to_string(SeriesStop s);
/// The stop a text names (the inverse of to_string, "" included); nullopt for any other text.
std::optional<SeriesStop> series_stop_from_string(std::string_view text);

/// The whole series. `last` is the last save attempted (complete, failed or interrupted); the
/// files of the last completed save are still published (paths in last.final_paths) when `last`
/// is ok: the caller removes or keeps them.
struct SeriesResult {
  std::vector<SeriesSave> saves;  // completed saves, in order
  SaveResult last;
  std::vector<uint64_t> last_file_bytes;  // stat of last's published files (bytes on disk), per rank
  std::optional<RestoreResult> last_restore;
  double elapsed_s = 0;  // first save's start .. series end
  SeriesStop stopped_by = SeriesStop::kNone;
};

/// Runs the series. `on_save` is called after each completed save (for progress lines).
/// Throws nothing for I/O errors (they end the series: see SeriesResult::stopped_by).
SeriesResult run_save_series(std::vector<ResidentState>& states, const std::string& dir, const SaveOptions& opts,
                             bool async, TrainingEmulator* emulator, const SeriesLimits& limits,
                             const std::function<void(const SeriesSave&)>& on_save);

/// Median of `v` (mean of the two middle values for an even count); 0 for an empty vector.
double median_of(std::vector<double> v);

}  // namespace ioprobe::checkpoint
