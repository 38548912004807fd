// A DataLoader worker's threads beside its loop and its queue feeder: chiefly multiprocessing's
// resource sharer. With torch's file_descriptor sharing strategy the main process, unpickling a
// batch, asks the worker's sharer for each tensor's file descriptor over a socket
// (torch.multiprocessing.reductions.rebuild_storage_fd -> multiprocessing.resource_sharer.DupFd.detach:
// connect, the authentication handshake, the request, the descriptor back) and cannot go on with
// that tensor until it has it: one blocking round trip per tensor, the sharer's CPU on the worker's
// side, taken through the worker's GIL (loader/worker_gil.hpp), so a busy worker delays it.
// Measured on a real per_sample DataLoader on 2 CPUs (tools/time-sharer-roundtrips; docs/benchmarks/calibration.md,
// "Blocking round trips, a calibration per round, ioprobe's own read"): the main process spent 1.6-2.7 s of a 2.4-4.1 s
// epoch inside detach(), 0.8-1.3 s of it its own CPU; with round trips modelled as overlapping the main process's work
// ioprobe was 1.33-1.42x the real loader at 4-8 workers, blocking 0.90-1.06x at 1-8 (medians of 4 paired runs). The
// calibration measures the sharer side's CPU per sample (Calibration::worker_other_cpu_per_sample_us) and the tensors
// per batch; the rank's consumer calls serve() once per tensor of each batch on the worker that built it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "loader/worker_gil.hpp"

namespace ioprobe {

class SharerThread {
 public:
  /// `stop` (asked about once per millisecond of CPU while burning, and while serve() waits) ends
  /// a request early: the run stopped. `cpu_ns` receives the thread's CPU time spent burning (ns),
  /// written by this thread alone until it is joined.
  /// `gil`: the worker's lock the burns take (loader/worker_gil.hpp), or null.
  SharerThread(std::function<bool()> stop, int64_t* cpu_ns, WorkerGil* gil = nullptr);
  /// Joins the thread (a request in progress ends first, or at once on `stop`).
  ~SharerThread();
  SharerThread(const SharerThread&) = delete;
  SharerThread& operator=(const SharerThread&) = delete;

  /// One round trip: hands this thread `us` microseconds of CPU to burn (through the worker's
  /// GIL) and returns once it is burned, or on `stop`. One caller at a time (the rank's main loop).
  /// us <= 0: returns at once. A request cut short by `stop` still ends before the destructor
  /// returns.
  void serve(double us);

 private:
  void loop();

  std::function<bool()> stop_;
  int64_t* cpu_ns_;
  WorkerGil* gil_;
  std::mutex mu_;
  std::condition_variable cv_;       // a request, or the shutdown
  std::condition_variable done_cv_;  // the request is done
  double request_us_ = 0;
  bool busy_ = false;  // a request is posted and not yet done
  bool shutdown_ = false;
  std::thread thread_;
};

}  // namespace ioprobe
