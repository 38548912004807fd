// A trace turned into replay streams: one per recorded thread of the recorded rank(s) this
// process replays, each a list of events in recorded order with the gap before each one, and the
// dependencies of the main process's batches on its workers' progress.
//
// Gaps: an event's gap is the time from the end of the stream's previous event (an op's start +
// duration, a mark's time) to its start; a stream's first event counts from the earliest event
// of the replayed streams, so the streams keep their recorded start offsets. An op's gap carries
// the thread CPU the recorder measured (Op::gap_cpu_ns, at most the gap), or -1 when the source
// has none; the gap before a batch mark is wall time (the training step) with no CPU figure. An op
// the replay does not issue (lseek, munmap, a call that failed in the recording) has no gap of its
// own: its gap and duration are part of the next event's (one wait instead of several tiny ones).
//
// Batches: a main stream's batch_wait_end waits until every other stream of the same recorded
// rank has completed the ops it had completed when the recorded batch was in hand, then for the
// recorded time from the last of those ops (or its own previous event) to the batch in hand (the
// workers' collate and the transfer). The rule keeps the recorded order between the training loop
// and the loader's reads; reads a worker had done ahead for later batches count too, so on slower
// storage the wait can be overstated by up to the prefetch the workers held (docs/replay.md).
//
// A batch_wait_begin not followed by its batch_wait_end, or whose batch_wait_end is followed by
// epoch_end before the next batch_wait_begin (the DataLoader's last next() raising StopIteration
// while its workers shut down: python/ioprobe_record/sitecustomize.py), delivered no batch: it is
// kept as a wait_begin with no_batch set (it ends the last batch's step) and its batch_wait_end is
// dropped, so it is neither a batch nor a batch wait.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace ioprobe::replay {

/// How the recorded gaps between a stream's ops are replayed.
enum class GapMode : uint8_t {
  recorded,  // burn the gap's recorded thread CPU, sleep for the rest (sleep all of it where unknown)
  sleep,     // sleep the whole gap
  burn,      // burn CPU for the whole gap
  none,      // no gaps: --as-fast-as-possible, this access pattern's storage ceiling
};

/// "recorded", "sleep", "burn", "none".
const char* gap_mode_name(GapMode m);

enum class EventKind : uint8_t { op, wait_begin, wait_end };

/// A dependency of a batch: stream `stream` (index in ReplayPlan::streams) must have completed
/// `ops` of its ops.
struct Dependency {
  uint32_t stream = 0;
  uint64_t ops = 0;
};

/// One step of a stream.
struct Event {
  EventKind kind = EventKind::op;
  int64_t t_ns = 0;              // recorded start, from the trace's start
  int64_t gap_ns = 0;            // recorded time since the stream's previous event ended (>= 0); wait_end: since
                                 // the later of that and its dependencies' last op's end
  int64_t gap_cpu_ns = -1;       // thread CPU within the gap (<= gap_ns), -1 unknown
  uint32_t op = 0;               // index into the stream's trace ops (kind op)
  int64_t batch = 0;             // the batch (wait events)
  bool no_batch = false;         // wait_begin of a call that delivered no batch (the iterator's end): it ends the
                                 // last step; no wait_end follows it
  std::vector<Dependency> deps;  // wait_end: progress of the other streams it waits for
};

/// One stream to replay.
struct StreamPlan {
  size_t trace_stream = 0;  // index into Trace::streams
  int32_t rank = 0;         // the recorded rank
  bool main = false;        // holds the rank's batch marks
  std::vector<Event> events;
  uint64_t op_count = 0;        // events of kind op
  int64_t recorded_end_ns = 0;  // end of its last event, from the replay's reference start
};

/// The streams of one replay process.
struct ReplayPlan {
  std::vector<StreamPlan> streams;
  int64_t reference_ns = 0;         // the earliest event of the replayed streams (trace time)
  int64_t recorded_elapsed_ns = 0;  // from reference_ns to the last event's end
  uint64_t gaps = 0;                // op gaps > 0
  uint64_t gaps_without_cpu = 0;    // of those, without a recorded CPU figure (slept under --gaps recorded)
  uint64_t read_bytes = 0;          // recorded bytes of the reads
  uint64_t mapped_bytes = 0;        // bytes of mapped ranges (replayed as reads: estimated)
};

/// The recorded ranks of a trace (ascending, at least {0}).
std::vector<int32_t> recorded_ranks(const trace::Trace& trace);

/// The recorded rank a replay process `rank` of `size` replays: `rank` itself when the trace has
/// it, else recorded rank (rank % recorded count) cloned. `clone` is set when it is a clone.
int32_t rank_to_replay(const trace::Trace& trace, int rank, bool* clone);

/// Builds the streams of recorded rank `rank` (every stream with Stream::rank == rank and at
/// least one op or mark). Throws UsageError when the rank has none, or a stream's events go back
/// in time (naming the stream and the op).
ReplayPlan build_replay_plan(const trace::Trace& trace, int32_t rank);

}  // namespace ioprobe::replay
