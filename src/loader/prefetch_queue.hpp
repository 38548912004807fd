// The dispatch and in-order delivery of PyTorch's _MultiProcessingDataLoaderIter, with threads
// for worker processes (PyTorch's torch/utils/data/dataloader.py):
//  - each worker has its own task queue; all share one result queue;
//  - an epoch starts by priming num_workers x prefetch_factor tasks, round-robin over workers
//    (itertools.cycle, regardless of each worker's backlog, as with in_order=True);
//  - each batch handed to the consumer triggers exactly one new task;
//  - batches are handed out in sampler order: a slow worker holds back every batch behind it;
//  - optionally (a PutFn), each worker's multiprocessing.Queue feeder thread: a thread per worker
//    takes the worker's finished batches in order, runs the put (pickling the batch into shared
//    memory) and only then makes the batch visible to next(); the worker goes on to its next task
//    meanwhile, as the real worker does (its Queue buffer is unbounded; prefetch accounting alone
//    limits the batches it holds).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "loader/batch.hpp"

namespace ioprobe {

class PrefetchQueue {
 public:
  /// Runs in each worker thread before any task (worker id 0..num_workers-1): set up per-worker
  /// state there (NUMA binding, the io_uring ring) so it belongs to that thread.
  using InitFn = std::function<void(int worker)>;
  /// Fetches one batch in a worker thread. `cancel` turns true when the run stops: return early.
  using FetchFn = std::function<Batch(int worker, const BatchTask& task, const std::atomic<bool>& cancel)>;

  /// Runs in worker `worker`'s feeder thread on each batch it fetched, in the order fetched, before
  /// the batch becomes visible to next(). `cancel` turns true when the run stops: return early.
  /// Not called for a batch already cancelled.
  using PutFn = std::function<void(int worker, Batch& batch, const std::atomic<bool>& cancel)>;

  /// `put` empty: no feeder threads, a worker's batch is visible as soon as it is fetched.
  PrefetchQueue(uint32_t num_workers, uint32_t prefetch_factor, InitFn init, FetchFn fetch, PutFn put = {});
  ~PrefetchQueue();
  PrefetchQueue(const PrefetchQueue&) = delete;
  PrefetchQueue& operator=(const PrefetchQueue&) = delete;

  /// Starts an epoch: the tasks in sampler order; primes num_workers x prefetch_factor of them.
  void start_epoch(std::vector<BatchTask> tasks);
  /// The next batch in order; blocks. nullopt when the epoch is exhausted, after cancel(), or
  /// when `should_stop` (polled every 50 ms while waiting, may be empty) returns true.
  std::optional<Batch> next(const std::function<bool()>& should_stop = {});
  /// Stops dispatch, tells workers to abandon their batches, and waits until none is in flight.
  void cancel();
  /// The most tasks ever outstanding (dispatched, not yet handed to the consumer).
  uint64_t max_outstanding() const { return max_outstanding_; }
  /// Worker index a task went to, in dispatch order (for tests of the round-robin).
  const std::vector<int>& dispatch_log() const { return dispatch_log_; }

 private:
  struct WorkerQueue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<BatchTask> tasks;
  };
  struct FeederQueue {  // a worker's fetched batches waiting for its feeder thread
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Batch> batches;
  };
  void worker_loop(int id);
  void feeder_loop(int id);
  void deliver(Batch r);  // makes a batch visible to next()
  void try_put_task();
  void stop_workers();  // cancels the queued tasks and joins every started worker

  InitFn init_;
  FetchFn fetch_;
  PutFn put_;
  uint32_t num_workers_;
  uint32_t prefetch_factor_;
  std::vector<std::unique_ptr<WorkerQueue>> queues_;
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<FeederQueue>> feeds_;  // one per worker when put_ is set
  std::vector<std::thread> feeders_;
  std::atomic<bool> feeders_shutdown_{false};  // set once every worker has been joined
  std::atomic<bool> shutdown_{false};
  std::atomic<bool> cancel_{false};

  // Results (shared by all workers).
  std::mutex result_mu_;
  std::condition_variable result_cv_;
  std::map<uint64_t, Batch> results_;

  // Main-thread state.
  std::vector<BatchTask> epoch_tasks_;
  uint64_t send_idx_ = 0;  // next task to dispatch
  uint64_t rcvd_idx_ = 0;  // next task to hand out
  uint64_t outstanding_ = 0;
  uint64_t max_outstanding_ = 0;
  uint32_t next_worker_ = 0;
  std::vector<int> dispatch_log_;
};

}  // namespace ioprobe
