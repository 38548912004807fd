// The DDP step barrier beyond this process: every GPU rank of the job steps together, so a rank
// on one host waits for the slowest rank on every host, as DistributedDataParallel's gradient
// all-reduce makes it wait. Within a process the ranks meet at a std::barrier; the last to
// arrive calls exchange() once per step, which meets the other processes.
//
// The loader knows only this interface; comm/ provides the implementation over MPI
// (cli/ connects them), and a single process uses no StepSync at all.
#pragma once

#include <cstdint>

namespace ioprobe {

/// Why a run stops, carried across processes so every host stops the same way. Ordered: the
/// highest code wins when several hosts stop at once.
enum class StopKind : int {
  kNone = 0,
  kDuration = 1,   // --duration reached
  kSignal = 2,     // SIGINT / SIGTERM
  kCanceled = 3,   // io_uring canceled reads (no verdict on storage)
  kStonewall = 4,  // --stonewall: the first process to read its share ended the measurement
  kFailed = 5,     // a rank of some process failed (its error is reported by that process)
};

class StepSync {
 public:
  virtual ~StepSync() = default;
  /// Before the run's clock starts: every process waits here, so that durations measured
  /// locally (monotonic clock) from here are comparable.
  virtual void start() = 0;
  /// Once per step, by one thread of this process while its other ranks wait: `local` is this
  /// process's stop request (kNone to go on). Returns the job's: the highest over processes.
  virtual StopKind exchange(StopKind local) noexcept = 0;
  /// After this process's ranks have all finished (`local` says why): goes on answering the
  /// other processes' steps until every process has finished, so none waits for it forever.
  virtual void finish(StopKind local) noexcept = 0;
};

}  // namespace ioprobe
