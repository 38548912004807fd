// The training side of one rank: what the training loop does with each batch the loader hands it.
//
// Real training overlaps the GPU step with the main process's work on the next batch (CUDA kernels
// run asynchronously while the main thread receives, unpickles and attaches the next batch's
// shared memory), so a step takes max(GPU step, main-process work). Today's consumers: the GPU
// step alone (a sleep of the step time), and the GPU step beside a real CPU burn of the main
// process's cost per batch (measured by `ioprobe calibrate`, or given by hand).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "loader/batch.hpp"
#include "loader/config.hpp"
#include "loader/loader_result.hpp"

namespace ioprobe {

class Consumer {
 public:
  virtual ~Consumer() = default;
  /// One training step on a delivered batch of batch.samples; returns when the loop asks for the
  /// next batch. The batch is the consumer's for the step (it may move
  /// parts of it on); the loop drops the batch after the step. A partial batch (fewer than batch_size samples) takes
  /// its share of a full batch's GPU and main-process time. Adds to stats.compute_ns (wall time of the step),
  /// stats.nominal_compute_ns (the GPU time the rate asks for, capped by what ran) and the
  /// main-process counters. `stop` is polled at least every 50 ms; the step ends early when it
  /// returns true. Does not throw.
  virtual void step(Batch& batch, RankStats& stats, const std::function<bool()>& stop) = 0;
};

/// One round trip of the main process's receive with the worker that built `batch` (its resource
/// sharer, loader/sharer_thread.hpp): hands its sharer `us` of CPU to burn and returns once it is
/// burned (the main process needs the tensor's descriptor before it goes on).
using ServeFn = std::function<void(const Batch& batch, double us)>;

/// The consumer for `cfg`: the GPU step of cfg.step_time_s per full batch, and when
/// cfg.costs.main_cpu_per_batch_us > 0 that much real CPU work of the main process beside it. With
/// `serve` and cfg.costs.worker.other_us > 0, that work is cut into
/// cfg.costs.tensors_per_batch pieces (at least 1), each followed by a round trip through `serve` of
/// its share of the worker's other-thread CPU (worker.other_us x samples), as
/// unpickling asks the worker for each tensor's file descriptor. Null when there is no step, no
/// main-process work and no round trip (the loop takes the next batch at once).
/// LoaderConfig::consumer_factory, when set, replaces it.
std::unique_ptr<Consumer> make_consumer(const LoaderConfig& cfg, ServeFn serve = {});

/// Real CPU work standing in for decode, transforms or unpickling: integer mixing until the
/// calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, a system call, read about every 20 µs of
/// CPU; the burn overshoots `us` by well under 10%) has advanced by `us` microseconds, or
/// until `stop` (when given; asked about once per millisecond of CPU) returns true, so a deadline
/// or a signal ends even a very long per-sample cost promptly.
void spend_cpu_us(double us, const std::function<bool()>& stop = {});

}  // namespace ioprobe
