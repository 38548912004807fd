// A DataLoader worker's threads beside its loop and its queue feeder: chiefly multiprocessing's
// resource sharer. With torch's file_descriptor sharing strategy the main process, unpickling a
// batch, asks the worker's sharer for each tensor's file descriptor over a socket: one round trip
// per tensor, the sharer's CPU on the worker's side. The sharer serves one connection at a time,
// so the main process's next round trip waits for the previous one to finish; the sharer's work on
// a tensor overlaps the main process's own work on it (measured on a real DataLoader: the two do
// not add up in its time per batch; BENCHMARKS.md, "Fidelity"). The calibration measures the
// sharer side's CPU per sample (Calibration::worker_other_cpu_per_sample_us) and the tensors per
// batch; the rank's consumer calls serve() once per tensor of each batch on the worker that built
// it.
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

  /// One round trip: waits for the previous one to finish (or for `stop`), then hands this thread
  /// `us` microseconds of CPU to burn and returns while it burns. One caller at a time (the rank's
  /// main loop). us <= 0: returns at once. A request handed over is burned before the destructor
  /// returns, unless `stop`.
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
