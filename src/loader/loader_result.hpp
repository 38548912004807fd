// The measured values of a loader run (one rank, one host or many merged), and their merge.
//
// A result is a value that merges like fio's thread stats (fio stat.c sum_thread_stats): counts
// and bytes add, histograms add bucket by bucket, and the elapsed time of parts measured from a
// common start is the latest end (IOR's rank-0 reduce does the same). run_loader builds one part
// per rank and merges them; a multi-host run merges the hosts' results the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error_record.hpp"
#include "loader/loader_stop.hpp"
#include "stats/histogram.hpp"
#include "stats/timeline.hpp"

namespace ioprobe {

/// What one worker thread did over the whole run.
struct WorkerStats {
  int rank = 0;  // global rank of the worker's DataLoader (kept as given by merge)
  int worker = 0;
  uint64_t files = 0;  // files read successfully (records datasets: samples delivered)
  uint64_t bytes = 0;
  uint64_t io_bytes = 0;  // bytes transferred, O_DIRECT alignment padding and dropped reads included
  uint64_t errors = 0;
  int64_t busy_ns = 0;            // wall time spent fetching batches (I/O + CPU work)
  int64_t cpu_work_ns = 0;        // thread CPU time spent in the emulated per-sample work (JPEG decode included)
  int64_t put_cpu_ns = 0;         // thread CPU time of the worker's feeder thread in the emulated put
                                  // (LoaderCosts: worker.put_us; written by that thread)
  int64_t other_cpu_ns = 0;       // thread CPU time of the worker's other (resource sharer) thread
                                  // (LoaderCosts: worker.other_us; written by that thread)
  int64_t runq_wait_ns = 0;       // of busy_ns: time runnable but waiting for a CPU (core/clock.hpp
                                  // thread_runqueue_wait_ns); -1 when the kernel does not expose it
  uint64_t decoded = 0;           // samples decoded (LoaderConfig::decode_jpeg)
  uint64_t decode_errors = 0;     // samples read that did not decode (also counted in `errors`)
  int64_t decode_cpu_ns = 0;      // thread CPU time spent decoding, both kinds
  uint64_t decoded_pixels = 0;    // pixels of the decoded images
  LatencyHistogram file_latency;  // open + read + close per file, ns (records datasets: per read)
  LatencyHistogram open_latency;  // open (+ close) part, ns
  std::string cpu_list;           // CPUs the worker thread was allowed on ("0-1"), after NUMA binding
  std::string numa;               // what the binding did ("not bound: ...", "node 1: CPUs 2-3, ...")
};

/// One batch handed to a rank's training step (LoaderConfig::record_deliveries).
struct Delivery {
  int64_t t_ns = 0;      // when the consumer's wait ended, ns since the run started
  uint64_t samples = 0;  // samples in the batch
  uint64_t bytes = 0;    // bytes in the batch
  int64_t wait_ns = 0;   // how long the consumer waited for it, ns (the DDP barrier included)
};

/// What one rank's consumer (training loop) saw.
struct RankStats {
  int rank = 0;  // global rank (kept as given by merge)
  uint64_t batches = 0;
  uint64_t samples = 0;
  uint64_t bytes = 0;
  int64_t wait_ns = 0;             // time the consumer waited for the next batch
  int64_t compute_ns = 0;          // emulated GPU step time spent (wall time of the step's sleep)
  int64_t nominal_compute_ns = 0;  // step time the GPUs' rate asks for, summed over delivered batches
  int64_t first_batch_ns = 0;      // from the epoch start to the first batch of the first epoch in hand: taken
                                   // from the queue, plus the main process's receive of it (calibrated runs)
  int64_t elapsed_ns = 0;
  LatencyHistogram batch_wait;  // per-batch wait, ns
  Timeline timeline;
  uint64_t max_outstanding = 0;      // most batches in flight (<= num_workers x prefetch_factor)
  std::vector<Delivery> deliveries;  // every batch in order, only with LoaderConfig::record_deliveries
  int64_t main_busy_ns = 0;          // wall time the main process spent on its per-batch work (consumer.hpp)
  int64_t main_cpu_ns = 0;           // its CPU time
  int64_t pin_busy_ns = 0;           // wall time the pin thread spent copying batches (pin_stage.hpp); 0: no pin thread
  int64_t pin_cpu_ns = 0;            // its CPU time
  uint64_t pin_bytes = 0;            // bytes it copied into page-locked memory
  int64_t h2d_ns = 0;       // wall time of the host-to-device copies (--h2d cuda: cudaMemcpyAsync + sync); 0: none
  uint64_t h2d_bytes = 0;   // bytes copied to the GPU
  uint64_t h2d_copies = 0;  // batches copied
  int h2d_device = -1;      // the CUDA device this rank copied to, -1 none
  std::string h2d_error;    // the first CUDA error (copies stop after it), "" none
  std::vector<uint64_t> epoch_samples;  // samples delivered in each epoch started (the last may be partial)
  std::vector<uint64_t> epoch_bytes;    // bytes delivered in each epoch started
  std::vector<int64_t> epoch_ns;        // wall time of each epoch started, ns: its start to its end, or to the
                                        // stop (--duration, a signal) for an epoch cut short
};

/// The distinct failures a result keeps (error_samples), merged parts included.
inline constexpr size_t kMaxErrorSamples = 10;

struct LoaderResult {
  std::vector<WorkerStats> workers;
  std::vector<RankStats> ranks;
  int64_t elapsed_ns = 0;  // first dispatch to the last batch delivered, all ranks
  uint32_t epochs_completed = 0;
  bool partial = false;                         // stopped by a signal or --duration before the epochs ended
  LoaderStop stop;                              // why it ended (loader_stop.hpp); documents: its text, stop_reason
  bool stopped_on_errors = false;               // stopped early because io_uring canceled reads (no verdict on storage)
  uint64_t samples = 0, bytes = 0, errors = 0;  // samples, bytes: summed over ranks; errors: over workers
  uint64_t io_bytes = 0;                        // sum of WorkerStats::io_bytes
  std::vector<ErrorRecord> error_samples;  // the first distinct failures (<= kMaxErrorSamples), each with its count
  uint64_t error_files = 0;                // distinct files (paths) the failures hit, counted as they happened
  bool error_files_exact = false;          // error_files counts every failed file of the run (one process, or
                                           // merged parts of which at most one failed); false: a lower bound
  LatencyHistogram file_latency;           // merged over all workers, ns
  LatencyHistogram open_latency;           // merged over all workers, ns
  LatencyHistogram batch_wait;             // merged over all ranks, ns
  Timeline timeline;                       // merged over all ranks, interval by interval
  int64_t wait_ns = 0;                     // consumer wait, summed over ranks
  int64_t first_batch_ns = 0;              // time to the first batch, max over ranks
  double cpu_user_s = 0, cpu_sys_s = 0;    // getrusage(RUSAGE_SELF) during the run, all threads, less
                                           // cache_prep_cpu_s; summed over processes
  double cache_prep_cpu_s = 0;             // CPU (user + sys, getrusage(RUSAGE_THREAD) of each rank) of the preparation
                                           // before each epoch (drop_caches, per-file eviction, the residency sample,
                                           // epoch_mark): left out of cpu_user_s/cpu_sys_s as its time is left out of
                                           // elapsed_ns; summed over ranks and processes
  std::vector<double> epoch_resident_fraction;  // page-cache residency before each epoch (rank 0's files; merged:
                                                // the first part that measured it, a sample rather than a sum)
  std::string residency_method;                 // "cachestat" | "mincore" | "" (not measured)
  std::vector<std::string> cache_notes;         // drop_caches refusals and the like (merged: duplicates once)
  std::vector<uint64_t> epoch_samples;          // per epoch started: samples delivered, summed over ranks (and parts)
  std::vector<uint64_t> epoch_bytes;            // per epoch started: bytes delivered, summed likewise
  std::vector<int64_t> epoch_ns;                // per epoch started: its wall time, ns (the longest part's; an
                                                // epoch cut short ends at the stop); empty from older senders

  /// The distinct files the run's failures hit (core/error_record.hpp): error_files when exact,
  /// else the larger of it and the kept records' count, as a lower bound ("at least").
  ErrorSpread error_spread() const;

  /// Merges another part of the same run into this one, the parts' times measured from a common
  /// start: workers and ranks are appended (their rank numbers kept as given), samples, bytes,
  /// io_bytes, errors, wait and CPU times add, histograms and timelines add bucket by bucket,
  /// elapsed_ns and first_batch_ns are the max, epochs_completed the min, partial and
  /// stopped_on_errors true if either is; error_samples fold by add_error (identical failures
  /// count up, at most kMaxErrorSamples distinct ones kept); error_files is the part's that failed
  /// when only one did, else the larger, no longer exact (a file may have failed in both parts);
  /// stop stays unless it is completed (or not set) and the other's is set; epoch_samples and
  /// epoch_bytes add epoch by epoch (the longer list's length), epoch_ns is the max epoch by epoch. Merging into a
  /// result with no ranks and no workers gives `other`. Throws UsageError when both timelines have points and their
  /// intervals differ (nothing changed then).
  void merge(const LoaderResult& other);
};

/// The result of one rank: its stats and its workers' with the totals (samples, bytes, errors,
/// io_bytes, histograms, timeline, wait, first batch) computed from them; elapsed_ns and
/// epochs_completed as given. Other fields (CPU, stop reason, error samples, residency) are left empty.
LoaderResult rank_result(RankStats rank, std::vector<WorkerStats> workers, int64_t elapsed_ns,
                         uint32_t epochs_completed);

}  // namespace ioprobe
