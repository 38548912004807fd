// PyTorch's pin_memory thread, one per rank: it takes the batches in order from the workers'
// queue, copies each into page-locked memory, and hands them to the training loop. Here the copy
// is real: a memcpy of the batch's bytes into an mlock'ed buffer (the same memory traffic and CPU
// as pinning a batch of that size; the loader keeps no batch contents (loader/batch.hpp), so the
// source is a buffer of the same size). The Batch itself is handed on unchanged.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "loader/prefetch_queue.hpp"

namespace ioprobe {

class PinStage {
 public:
  /// `bytes_per_batch` > 0: every full batch pins that many bytes (a partial batch its share of
  /// them, by samples of `batch_size`); 0: the bytes the batch read. `stop` is polled while
  /// waiting; when it returns true the pin thread cancels `queue` and ends the epoch.
  PinStage(PrefetchQueue& queue, double bytes_per_batch, uint32_t batch_size, std::function<bool()> stop);
  ~PinStage();
  PinStage(const PinStage&) = delete;
  PinStage& operator=(const PinStage&) = delete;

  /// Starts the pin thread for an epoch the queue has started.
  void start_epoch();
  /// The next pinned batch in order; nullopt at the epoch's end or after a stop. Blocks.
  std::optional<Batch> next();
  /// Ends the epoch: stops the pin thread (which cancels the queue if the epoch was not done) and
  /// joins it. Batches pinned and not taken are dropped.
  void end_epoch();

  int64_t busy_ns() const { return busy_ns_; }  // wall time spent copying, all epochs (buffer setup excluded)
  int64_t setup_ns() const {
    return setup_ns_;
  }                                           // wall time mapping, filling and mlock'ing the buffers when a
                                              // batch outgrew them (PyTorch's caching host allocator pays it
                                              // once per size, not per batch)
  int64_t cpu_ns() const { return cpu_ns_; }  // the pin thread's CPU time copying
  uint64_t batches() const { return batches_; }
  uint64_t pinned_bytes() const { return bytes_; }
  bool locked() const { return locked_; }  // false: mlock was refused (RLIMIT_MEMLOCK); copies went to ordinary memory

 private:
  void loop();
  bool reserve(uint64_t bytes);  // grows the buffers to `bytes`; false when memory could not be mapped
  void copy(uint64_t bytes);

  PrefetchQueue& queue_;
  double bytes_per_batch_;
  uint32_t batch_size_;
  std::function<bool()> stop_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> ready_;
  bool done_ = false;  // the pin thread ended the epoch
  bool quit_ = false;  // end_epoch asked it to
  char* src_ = nullptr;
  char* dst_ = nullptr;
  uint64_t cap_ = 0;
  bool locked_ = true;
  int64_t busy_ns_ = 0, cpu_ns_ = 0, setup_ns_ = 0;
  uint64_t batches_ = 0, bytes_ = 0;
};

}  // namespace ioprobe
