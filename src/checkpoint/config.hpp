// One `ioprobe checkpoint` run, as typed values: what cli/ parsed and checked from the command
// line and the preset (cli/checkpoint_config.cpp); the orchestration (orchestrator.hpp) reads it
// and never sees an option name.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/saver.hpp"
#include "checkpoint/state_content.hpp"
#include "checkpoint/state_spec.hpp"

namespace ioprobe::checkpoint {

/// A run that saves (the default), or one that reads back a checkpoint already in the directory and
/// writes nothing: a restore (decoded, both checksums of every chunk) or a verification (the stored
/// bytes' checksum of every chunk, nothing decompressed).
enum class Readback { kNone, kRestore, kVerify };

struct CheckpointConfig {
  std::string dir;   // target directory (exists by the time the orchestration runs)
  StateSpec state;   // this process's ranks, numbered job-wide
  SaveOptions save;  // chunking, compression, writer
  StateContent content = StateContent::tensors;
  std::string content_label = "training state";  // what the progress line calls the state
  uint64_t seed = 1;                             // data generator seed
  bool async = false;                            // stage into host buffers, persist while training steps run
  double step_time_s = 0.1;                      // the emulated training step with `async`, seconds
  bool restore = false;                          // read back cold, decode, verify every chunk
  int restore_threads = 1;                       // decoders per rank (version 3 shards); 0 = the rank's own thread;
                                                 // -1 (read-backs): allowed CPUs / shards found
  bool restore_cold = true;                      // drop the page cache before the restore (false: warm, buffered reads)
  bool raw_baseline = true;                      // measure raw sequential write of the same target in this run
  bool keep = false;                             // keep the published shard files
  bool quiet = false;                            // no progress lines
  bool series = false;                           // repeated saves (a count or a duration was given)
  uint64_t repeat = 1;                           // saves in the series; 0 = no count limit (then duration_s > 0)
  double duration_s = 0;                         // no save starts after this many seconds; 0 = no time limit
  Readback readback = Readback::kNone;           // read back the checkpoint in `dir` instead of saving
  bool plan_only = false;                        // print the per-rank state sizes and exit without writing
  std::string json_path;                         // where the result document goes ("" = none; rank 0 only)
  uint64_t memory_budget_bytes = 0;              // the state's budget in memory (half of RAM or the cgroup's limit)
  int cpus_allowed = 1;
};

}  // namespace ioprobe::checkpoint
