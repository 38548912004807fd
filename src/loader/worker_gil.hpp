// CPython's global interpreter lock (GIL), one per emulated DataLoader worker process. A real
// worker's Python threads (its loop: __getitem__ + collate; its multiprocessing.Queue feeder:
// pickling each batch and moving its tensors into shared memory; the resource sharer: handing each
// tensor's file descriptor to the main process) run Python one at a time, so their CPU adds up on
// one CPU instead of overlapping. ioprobe's worker, feeder and sharer threads burn the calibrated
// costs through their worker's WorkerGil: in turns of at most a slice of CPU, handed over in the
// order asked for (CPython 3.2+ hands the GIL to a waiting thread: Python docs,
// sys.setswitchinterval; a thread blocked in a system call has released it).
//
// Why: with the three threads free to overlap, a Dataset whose samples cross as one tensor each
// (tools/bench_datasets/per_sample.py: 50 µs loop, 390 µs feeder, 177 µs sharer CPU per sample)
// was predicted 1.18-1.39x faster than the real DataLoader on a 2-CPU host (docs/benchmarks/calibration.md,
// "A faster host: the worker's GIL and the crowded one-time fit").
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace ioprobe {

/// Longest turn a thread burns before a waiting thread of the same worker goes, µs of CPU.
/// Chosen by us (not a CPython figure): CPython forces a switch after sys.getswitchinterval()
/// (5 ms by default) only when no blocking call released the lock first; a worker's threads make
/// such calls every few hundred µs (reads, pipe and socket writes), so turns are short. Against a
/// real per_sample DataLoader at 1-2 workers, 200 µs turns came within 0-15% and 1 or 3 ms turns
/// 10-20% slow (docs/benchmarks/calibration.md, "The turn length").
constexpr double kGilSliceUs = 200.0;

class WorkerGil {
 public:
  explicit WorkerGil(double slice_us = kGilSliceUs) : slice_us_(slice_us > 0 ? slice_us : kGilSliceUs) {}
  WorkerGil(const WorkerGil&) = delete;
  WorkerGil& operator=(const WorkerGil&) = delete;

  /// Burns `us` µs of the calling thread's CPU, `share` of it (0..1, clamped) holding this lock in
  /// turns of at most the slice and the rest without it, between the turns in proportion (C code
  /// that lets go of the GIL, such as torch's copy of a tensor into shared memory); between turns
  /// the threads that asked first go first. The CPU of taking and handing over the lock counts in
  /// `us` (it is this thread's CPU). Ends early (releasing the lock) once `stop` returns true;
  /// `stop` may be empty.
  void burn(double us, const std::function<bool()>& stop, double share = 1.0);

  /// Turns taken so far (each a hand-over when another thread was waiting).
  uint64_t turns() const;

 private:
  void acquire();
  void release();

  const double slice_us_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0;  // FIFO: the ticket the next thread asking gets
  uint64_t serving_ = 0;      // the ticket whose thread holds the lock
};

/// One WorkerGil per worker of a rank (worker processes, each with its own interpreter), one
/// shared by all of them (`shared`: the workers are threads of one process, one interpreter's GIL),
/// or none (the threads overlap freely).
class WorkerGils {
 public:
  WorkerGils() = default;
  explicit WorkerGils(uint32_t workers, bool shared = false);
  /// Worker w's lock (the same one for every w when shared); null when there are none (or w is out
  /// of range).
  WorkerGil* at(uint32_t w) const;

 private:
  std::vector<std::unique_ptr<WorkerGil>> gils_;
  uint32_t workers_ = 0;
  bool shared_ = false;
};

/// Burns `us` µs of CPU on the calling thread, through `gil` when it is not null (`share` of it
/// holding the lock: WorkerGil::burn).
void burn_worker_cpu(WorkerGil* gil, double us, const std::function<bool()>& stop, double share = 1.0);

}  // namespace ioprobe
