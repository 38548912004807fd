// Saving all of this host's ranks, synchronously or asynchronously, with atomic publish.
//
// Every rank writes "<final>.ioprobe-tmp.<pid>" in parallel (one thread each, as DCP ranks do),
// then fsyncs it. Only when all ranks succeeded are the files renamed to their final names and
// the directory fsynced (two-phase: a failed or interrupted save leaves no file under a final
// name, and its temporary files are removed). A rename never replaces a file (renameat2
// RENAME_NOREPLACE): one that appeared under a final name during the save (another writer in the
// same directory) is kept, and the save fails naming it.
//
// Async (--async): a blocking staging copy of the whole state into preallocated host buffers,
// then persistence in the background while emulated training steps run on this thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/resident_state.hpp"
#include "checkpoint/shard_writer.hpp"
#include "checkpoint/training_emulator.hpp"
#include "core/error_record.hpp"

namespace ioprobe::checkpoint {

/// Outcome of one save of all ranks. Times in nanoseconds from the save's start.
struct SaveResult {
  std::vector<RankSaveResult> ranks;
  bool async = false;
  bool ok = false;  // every rank wrote (and fsynced, when enabled) and the files were published
  bool interrupted = false;
  int64_t staged_ns = 0;      // time to staged: training blocked (async) or 0 (sync, training blocked throughout)
  int64_t ranks_done_ns = 0;  // the slowest rank's fsync returned (async: not the end of the step then running)
  int64_t publish_ns = 0;     // renames + directory fsync
  int64_t durable_ns = 0;     // time to durable (published); 0 when not ok
  double user_cpu_s = 0, sys_cpu_s = 0;  // process CPU during the save (async: less the emulated training steps' CPU)
  std::vector<double> step_s;            // async: durations of the steps run during persistence
  std::vector<std::string> final_paths;  // published files (ok only)
  // Failure details (not ok and not interrupted).
  int failed_rank = -1;
  // What failed: the operation, the path and errno; detail: the bytes written of the shard, the
  // free bytes and inodes read at the failure, what ran out. empty() when the save did not fail.
  ErrorRecord failure;
};

/// Saves `states` (one per rank) into `dir`. `emulator` is used only when `async`.
/// Never leaves temporary files; throws nothing for I/O errors (see SaveResult).
SaveResult save_checkpoint(std::vector<ResidentState>& states, const std::string& dir, const SaveOptions& opts,
                           bool async, TrainingEmulator* emulator);

/// The final path of rank `rank`'s shard in `dir`.
std::string shard_path(const std::string& dir, int rank);

}  // namespace ioprobe::checkpoint
