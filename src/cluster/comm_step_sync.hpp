// The loader's DDP step barrier across processes (loader/step_barrier.hpp) over a comm::Comm.
#pragma once

#include "comm/comm.hpp"
#include "loader/step_barrier.hpp"

namespace ioprobe::cluster {

/// Every step is one max-reduction of {stop kind, still stepping} over all processes: a process
/// whose ranks have finished keeps answering (finish()) until no process steps any more, so
/// ranks with unequal shares (DistributedSampler without padding, IterableDataset shards) never
/// wait for a partner that is gone. A collective that does not complete within `timeout_s` ends
/// the job, naming the step (Comm's watchdog).
class CommStepSync final : public StepSync {
 public:
  /// `stonewall`: a process whose ranks finished their share stops the others (StopKind::kStonewall).
  CommStepSync(comm::Comm& comm, double timeout_s, bool stonewall = false)
      : comm_(comm), timeout_s_(timeout_s), stonewall_(stonewall) {}
  /// Two barriers: the first aligns the processes, the second's duration on each process bounds
  /// how far apart they left the first (start_skew_s()).
  void start() override;
  /// Seconds this process waited in start()'s second barrier: an upper bound on how far apart
  /// the processes started their clocks, as this process saw it (the job's is the max).
  double start_skew_s() const { return skew_s_; }
  /// core/clock.hpp's now_ns() when start() returned (0 before): the run's common start.
  int64_t started_ns() const { return started_ns_; }
  StopKind exchange(StopKind local) noexcept override;
  void finish(StopKind local) noexcept override;
  /// Steps exchanged so far (finish()'s rounds included).
  uint64_t rounds() const { return rounds_; }
  /// Seconds spent in the exchanges: the collective itself plus waiting there for the slowest
  /// process's batch (as DDP's all-reduce waits), so an upper bound on what coordination cost.
  double exchange_s() const { return static_cast<double>(exchange_ns_) / 1e9; }
  /// Of exchange_s(): seconds in finish()'s rounds, answering after this process's ranks were
  /// done until every process was (the wait for the slowest process at the end).
  double finish_wait_s() const { return static_cast<double>(finish_ns_) / 1e9; }

 private:
  bool round(StopKind& kind, bool stepping) noexcept;
  comm::Comm& comm_;
  double timeout_s_;
  bool stonewall_;
  uint64_t rounds_ = 0;
  int64_t exchange_ns_ = 0;
  int64_t finish_ns_ = 0;
  int64_t started_ns_ = 0;
  double skew_s_ = 0;
};

}  // namespace ioprobe::cluster
