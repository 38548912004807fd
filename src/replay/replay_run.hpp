// Runs a ReplayPlan: one thread per stream, all started together, each issuing its recorded
// ops in order through the engine layer's range reader (engine/range_reader.hpp: psync or
// io_uring, O_DIRECT or buffered) with the recorded gaps replayed as compute (GapMode).
//
// Per op kind: open and close open and close the mapped file (a read of a file the stream has not
// opened, e.g. a descriptor inherited across fork, opens it first, uncounted); read issues the
// recorded length at the recorded offset; stat stats the file; mmap reads the mapped range in
// 1 MiB requests (a trace cannot see which pages the job touched: estimated); lseek and munmap
// cost nothing here (reads are positioned). An op that failed in the recording is counted but not
// issued. Never throws from a stream thread: failures are counted and the first one kept.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine_kind.hpp"
#include "replay/file_layout.hpp"
#include "replay/replay_plan.hpp"
#include "replay/replay_result.hpp"
#include "trace/trace.hpp"

namespace ioprobe::replay {

struct RunOptions {
  GapMode gaps = GapMode::recorded;
  EngineKind engine = EngineKind::kPsync;  // from engine/engine_choice.hpp choose_engine
  bool direct = false;                     // O_DIRECT reads
  int replay_rank = 0;                     // this process's rank, stored in each StreamResult
  bool progress = false;                   // a progress line on stderr (core/progress.hpp)
};

/// Replays `plan` on the files `layout` names (by trace file id) and returns what it measured.
/// Throws Error when a reader cannot be made (io_uring refused).
ReplayResult run_replay(const trace::Trace& trace, const ReplayPlan& plan, const LayoutPlan& layout,
                        const RunOptions& opts);

/// Burns the calling thread's CPU for `cpu_ns` of its own CPU time (CLOCK_THREAD_CPUTIME_ID), or
/// until the monotonic `deadline_ns` passes when the thread gets less CPU than that.
void burn_cpu(int64_t cpu_ns, int64_t deadline_ns);

/// Waits until the monotonic `deadline_ns`: sleeps, then spins the last 30 us (a sleep alone
/// ends the timer slack late, which thousands of short gaps would add up).
void wait_until(int64_t deadline_ns);

/// How one gap is replayed: the CPU to burn and the wall time the gap lasts (ns).
struct GapCost {
  int64_t burn_ns = 0;
  int64_t wall_ns = 0;
};
GapCost gap_cost(GapMode mode, int64_t gap_ns, int64_t gap_cpu_ns);

}  // namespace ioprobe::replay
