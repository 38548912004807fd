#include "loader/loader_run.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "engine/page_cache.hpp"
#include "loader/consumer.hpp"
#include "loader/h2d_stage.hpp"
#include "loader/pin_stage.hpp"
#include "loader/prefetch_queue.hpp"
#include "loader/sample_source.hpp"
#include "loader/sharer_thread.hpp"
#include "loader/worker_costs.hpp"
#include "topology/host.hpp"

namespace ioprobe {

namespace {

std::string this_thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpu_list_string(cpus);
}

int64_t tv_ns(const timeval& tv) { return static_cast<int64_t>(tv.tv_sec) * 1000000000LL + tv.tv_usec * 1000LL; }

// The calling thread's user and system CPU so far (getrusage(RUSAGE_THREAD)), ns.
struct ThreadCpu {
  int64_t user_ns = 0, sys_ns = 0;
  static ThreadCpu now() {
    rusage ru{};
    if (getrusage(RUSAGE_THREAD, &ru) != 0) return {};
    return {tv_ns(ru.ru_utime), tv_ns(ru.ru_stime)};
  }
};

// Reads completed with ECANCELED after which a run stops (Shared::canceled).
constexpr uint32_t kCanceledReadsToStop = 8;

struct Shared;

// Runs once per DDP step, when the last rank of this process arrives at the step barrier: meets
// the other processes of a multi-host job (StepSync) and takes over a stop any of them asked for.
struct StepCompletion {
  Shared* sh = nullptr;
  void operator()() const noexcept;
};

struct Shared {
  const FileIndex& index;
  const LoaderConfig& cfg;
  const RecordLayout* layout = nullptr;  // null or kind files: one sample per file
  int dirfd = AT_FDCWD;
  int64_t start_ns = 0;
  int64_t deadline_ns = 0;  // 0: none
  std::atomic<bool> stop{false};
  std::atomic<int> stop_kind{0};  // a StopKind: 1 duration, 2 signal, 3 io_uring canceled reads, 4 stonewall, 5 failed
  std::atomic<int64_t> stop_ns{0};  // when the stop was seen (elapsed ends there)
  // The longest time any rank spent preparing its epochs (drop_caches, the per-file eviction, the
  // residency sample, the epoch_mark callback): taken out of the elapsed time, so that samples/s
  // covers the epochs alone.
  std::atomic<int64_t> cache_prep_ns{0};
  // The CPU of that preparation, each rank's thread's (RUSAGE_THREAD), summed over ranks: taken
  // out of the run's CPU likewise (LoaderResult::cache_prep_cpu_s).
  std::atomic<int64_t> cache_prep_user_ns{0}, cache_prep_sys_ns{0};
  // drop_caches before each epoch: rank 0 writes it; the others wait for that epoch's attempt
  // (dropped_epoch = 1 + the epoch) and evict their files one by one only if it was refused.
  std::atomic<uint32_t> dropped_epoch{0};
  std::atomic<bool> drop_ok{false};
  std::atomic<uint32_t> canceled{0};  // reads io_uring completed with ECANCELED
  std::mutex err_mu;
  std::vector<ErrorRecord> error_samples;
  std::unordered_set<std::string> failed_paths;                // every distinct file a failure named (exact file count)
  uint64_t noted_errors = 0;                                   // failures recorded through note_error
  std::unique_ptr<std::barrier<StepCompletion>> step_barrier;  // DDP: ranks step together
  StepSync* sync = nullptr;                                    // other processes of the job (null: this process alone)
  LoaderProgress* progress = nullptr;
  const Topology* topo = nullptr;
  // Cache state before each epoch (rank 0 measures).
  std::mutex cache_mu;
  std::vector<double> resident;
  std::string residency_method;
  std::vector<std::string> cache_notes;
};

// This process's stop request for the other processes: a rank that failed has set `stop` with
// no kind.
StopKind local_stop_kind(const Shared& sh) {
  if (!sh.stop) return StopKind::kNone;
  const int k = sh.stop_kind.load();
  return k ? static_cast<StopKind>(k) : StopKind::kFailed;
}

void StepCompletion::operator()() const noexcept {
  if (!sh || !sh->sync) return;
  const StopKind job = sh->sync->exchange(local_stop_kind(*sh));
  if (job != StopKind::kNone && !sh->stop) {
    int expected = 0;
    if (sh->stop_kind.compare_exchange_strong(expected, static_cast<int>(job))) sh->stop_ns = now_ns();
    sh->stop = true;
  }
}

class RankLoader {
 public:
  RankLoader(int rank, Shared& sh, WorkerStats* workers, RankStats& stats)
      : rank_(rank), sh_(sh), workers_(workers), stats_(stats), started_epoch_(sh.cfg.num_workers, 0),
        gils_(sh.cfg.costs.python_gil ? WorkerGils(sh.cfg.num_workers, sh.cfg.costs.threads_share_gil) : WorkerGils()) {
    stats_.rank = static_cast<int>(sh.cfg.first_rank) + rank;  // the job-wide rank
    stats_.timeline = Timeline(sh.cfg.timeline_interval_s);
    SourceEnv env;
    env.cfg = &sh.cfg;
    env.index = &sh.index;
    env.layout = sh.layout;
    env.dirfd = sh.dirfd;
    env.rank = global_rank();
    env.world = world();
    env.run_stop = &sh.stop;
    env.bytes_read = sh.progress ? &sh.progress->bytes : nullptr;
    env.on_error = [this](const ErrorRecord& e) { note_error(e); };
    env.on_canceled_read = [this] { note_canceled_read(); };
    env.gils = &gils_;
    source_ = make_sample_source(env);
  }

  uint32_t run() {
    const LoaderConfig& cfg = sh_.cfg;
    std::exception_ptr init_error;
    std::mutex init_mu;
    // Each worker's other threads (the resource sharer), serving the rank consumer's round trips
    // as it receives each batch (when the consumer is the built-in one).
    if (cfg.costs.worker.other_us > 0 && !cfg.consumer_factory)
      for (uint32_t w = 0; w < cfg.num_workers; ++w)
        sharers_.push_back(std::make_unique<SharerThread>([this] { return sh_.stop.load(std::memory_order_relaxed); },
                                                          &workers_[w].other_cpu_ns, gils_.at(w)));
    PrefetchQueue queue(
        cfg.num_workers, cfg.prefetch_factor,
        [&](int w) {
          try {
            source_->init_worker(static_cast<uint32_t>(w));
          } catch (...) {
            std::lock_guard<std::mutex> g(init_mu);
            if (!init_error) init_error = std::current_exception();
          }
          workers_[w].rank = static_cast<int>(global_rank());
          workers_[w].worker = w;
          if (sh_.topo) workers_[w].numa = bind_current_thread(cfg.placement, *sh_.topo).description;
          workers_[w].cpu_list = this_thread_cpus();
        },
        [&](int w, const BatchTask& t, const std::atomic<bool>& cancel) {
          // Busy: the wall time of the fetch; inside it, the run-queue wait (CPUs taken by other
          // threads or processes while this worker had work to do).
          WorkerStats& ws = workers_[w];
          const int64_t t0 = now_ns();
          const int64_t q0 = thread_runqueue_wait_ns();
          worker_startup(w, cancel);
          Batch b = source_->fetch(static_cast<uint32_t>(w), t, ws, cancel);
          ws.busy_ns += now_ns() - t0;
          if (q0 < 0 || ws.runq_wait_ns < 0) ws.runq_wait_ns = -1;
          else ws.runq_wait_ns += std::max<int64_t>(0, thread_runqueue_wait_ns() - q0);
          return b;
        },
        put_fn());

    ServeFn serve;
    if (!sharers_.empty())
      serve = [this](const Batch& b, double us) { sharers_[static_cast<size_t>(b.worker)]->serve(us); };
    std::unique_ptr<Consumer> consumer = cfg.consumer_factory ? cfg.consumer_factory(global_rank())
                                                              : make_consumer(cfg, std::move(serve));
    std::unique_ptr<H2dStage> h2d;
    if (cfg.h2d_cuda) h2d = std::make_unique<H2dStage>(cfg, global_rank());
    std::unique_ptr<PinStage> pin;
    if (cfg.pin_memory)
      pin = std::make_unique<PinStage>(queue, cfg.pin_bytes_per_batch, cfg.batch_size, [this] { return check_stop(); });
    const std::function<bool()> stop_fn = [this] { return check_stop(); };
    uint32_t epochs_done = 0;
    for (uint32_t epoch = 0; epoch < cfg.epochs && !sh_.stop; ++epoch) {
      EpochPlan plan = source_->plan_epoch(epoch);
      epoch_files_ = std::move(plan.files);
      const int64_t prep0 = now_ns();
      const ThreadCpu cpu0 = ThreadCpu::now();
      prepare_cache(epoch);
      if (rank_ == 0 && sh_.cfg.epoch_mark) sh_.cfg.epoch_mark();
      cache_prep_ns_ += now_ns() - prep0;
      const ThreadCpu cpu1 = ThreadCpu::now();
      sh_.cache_prep_user_ns += cpu1.user_ns - cpu0.user_ns;
      sh_.cache_prep_sys_ns += cpu1.sys_ns - cpu0.sys_ns;
      stats_.epoch_samples.push_back(0);
      stats_.epoch_bytes.push_back(0);
      const int64_t epoch_start = now_ns();
      epoch_no_.store(epoch + 1, std::memory_order_relaxed);  // published to the workers by start_epoch
      queue.start_epoch(std::move(plan.tasks));
      if (pin) pin->start_epoch();  // from here the pin thread alone takes batches from the queue
      // A real DataLoader's main process forks its workers at each epoch's iter() (calibration's
      // main start-up CPU); the workers start meanwhile.
      if (cfg.costs.main_startup_cpu_us > 0) {
        const int64_t c0 = thread_cpu_ns();
        spend_cpu_us(cfg.costs.main_startup_cpu_us, stop_fn);
        stats_.main_cpu_ns += thread_cpu_ns() - c0;
      }
      bool first = true;
      for (;;) {
        if (check_stop()) {
          if (!pin) queue.cancel();  // with a pin thread, it cancels the queue
          break;
        }
        const int64_t w0 = now_ns();
        std::optional<Batch> r = pin ? pin->next() : queue.next(stop_fn);
        if (!r) {
          if (check_stop() && !pin) queue.cancel();  // drain: no read in flight when the result is reported
          break;
        }
        if (init_error) std::rethrow_exception(init_error);
        const int64_t w1 = now_ns();
        const bool first_of_run = first && epoch == 0;
        if (first_of_run) stats_.first_batch_ns = w1 - epoch_start;
        first = false;
        if (sh_.step_barrier) sh_.step_barrier->arrive_and_wait();  // DDP: all ranks step together
        const int64_t wait = now_ns() - w0;
        stats_.wait_ns += wait;
        stats_.batch_wait.record(static_cast<uint64_t>(wait));
        ++stats_.batches;
        stats_.samples += r->samples;
        stats_.bytes += r->bytes;
        stats_.epoch_samples.back() += r->samples;
        stats_.epoch_bytes.back() += r->bytes;
        r->epoch = epoch;
        r->delivered_ns = w0 + wait - sh_.start_ns;
        // The wait spans [w0, w0 + wait] (the DDP barrier included); the timeline splits it over
        // the intervals it covers, and the batch counts where the wait ended (handed to the step).
        stats_.timeline.add(r->delivered_ns, r->samples, r->bytes, wait);
        if (cfg.record_deliveries) stats_.deliveries.push_back({r->delivered_ns, r->samples, r->bytes, wait});
        if (sh_.progress) {
          sh_.progress->samples += r->samples;
          if (!source_->bytes_counted_as_read()) sh_.progress->bytes += r->bytes;
        }
        // The copy to the GPU (--h2d cuda), then the GPU step and the main process's work beside it
        // (loader/consumer.hpp), which may take the batch's buffer on.
        if (h2d) h2d->copy(*r, stats_);
        const int64_t busy0 = stats_.main_busy_ns;
        if (consumer) consumer->step(*r, stats_, stop_fn);
        // The real loop has its first batch when next() returns, after the main process received
        // it (unpickling, the round trips): that work is part of the time to the first batch.
        if (first_of_run) stats_.first_batch_ns += stats_.main_busy_ns - busy0;
      }
      if (pin) pin->end_epoch();
      const int64_t stop_at = sh_.stop_ns.load();
      const int64_t epoch_ns = (stop_at ? std::max(epoch_start, stop_at) : now_ns()) - epoch_start;
      stats_.elapsed_ns += epoch_ns;
      stats_.epoch_ns.push_back(epoch_ns);
      if (!sh_.stop) ++epochs_done;
    }
    // The sharers are joined (a round trip cut by the stop ends first) before the results are read.
    sharers_.clear();
    if (init_error) std::rethrow_exception(init_error);
    stats_.max_outstanding = queue.max_outstanding();
    if (pin) {
      stats_.pin_busy_ns = pin->busy_ns();
      stats_.pin_cpu_ns = pin->cpu_ns();
      stats_.pin_bytes = pin->pinned_bytes();
    }
    if (sh_.step_barrier) sh_.step_barrier->arrive_and_drop();
    int64_t seen = sh_.cache_prep_ns.load();
    while (seen < cache_prep_ns_ && !sh_.cache_prep_ns.compare_exchange_weak(seen, cache_prep_ns_)) {
    }
    return epochs_done;
  }

 private:
  // This rank among all GPU ranks of the job (DistributedSampler's rank and num_replicas).
  uint32_t global_rank() const { return sh_.cfg.first_rank + static_cast<uint32_t>(rank_); }
  uint32_t world() const { return std::max(sh_.cfg.world_ranks, sh_.cfg.ranks); }

  bool check_stop() {
    if (!sh_.stop) {
      const int64_t t = now_ns();
      int kind = interrupted() ? 2 : (sh_.deadline_ns && t >= sh_.deadline_ns) ? 1 : 0;
      if (kind) {
        int expected = 0;
        if (sh_.stop_kind.compare_exchange_strong(expected, kind)) sh_.stop_ns = kind == 1 ? sh_.deadline_ns : t;
        sh_.stop = true;
      }
    }
    return sh_.stop;
  }

  // Before an epoch: drop caches (root, --drop-caches: rank 0, the other ranks waiting for it),
  // or where that was refused or not asked for, evict this rank's files one by one (cold runs
  // without O_DIRECT); then measure how much of the data is resident (rank 0, buffered runs).
  void prepare_cache(uint32_t epoch) {
    const LoaderConfig& cfg = sh_.cfg;
    bool dropped = false;
    if (cfg.drop_caches) {
      if (rank_ == 0) {
        DropCachesResult d = drop_caches(cfg.drop_caches_file);
        if (!d.dropped && epoch == 0) {
          std::lock_guard<std::mutex> g(sh_.cache_mu);
          sh_.cache_notes.push_back(d.reason);
        }
        sh_.drop_ok = d.dropped;
        sh_.dropped_epoch = epoch + 1;
      } else {
        // Rank 0 makes the attempt (or fails, and the run stops): never waits past a stop.
        while (sh_.dropped_epoch.load() < epoch + 1 && !sh_.stop.load())
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      dropped = sh_.drop_ok.load();
    }
    if (cfg.evict_before_epoch && !dropped)
      for (uint64_t idx : epoch_files_) {
        int fd = openat(sh_.dirfd, sh_.index.path(idx), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        evict_fd(fd);
        close(fd);
      }
    if (cfg.measure_residency && rank_ == 0) {
      std::vector<std::string> paths;
      const size_t n = epoch_files_.size(), step = std::max<size_t>(1, n / 1000);
      for (size_t k = 0; k < n; k += step) paths.push_back(sh_.index.display_path(epoch_files_[k]));
      DatasetResidency r = measure_residency(paths);
      std::lock_guard<std::mutex> g(sh_.cache_mu);
      sh_.resident.push_back(r.residency.fraction());
      sh_.residency_method = r.residency.method;
    }
  }

  void note_error(const ErrorRecord& e) {
    std::lock_guard<std::mutex> g(sh_.err_mu);
    add_error(sh_.error_samples, e, kMaxErrorSamples);
    if (!e.path.empty()) sh_.failed_paths.insert(e.path);
    sh_.noted_errors += e.count;
  }

  // A read io_uring completed with ECANCELED: it cancels reads it cannot hand to an io-wq worker
  // thread (none can be created under a pids or thread limit), and every later read would fail
  // the same way, each after a wait, so the run stops after a few.
  // A fresh DataLoader worker's one-time CPU (LoaderCosts: worker.startup_cpu_us), paid once per
  // worker per epoch before its first sample, as a real loader re-forks its workers every epoch.
  void worker_startup(int w, const std::atomic<bool>& cancel) {
    const uint32_t e = epoch_no_.load(std::memory_order_relaxed);
    if (sh_.cfg.costs.worker.startup_cpu_us <= 0 || started_epoch_[static_cast<size_t>(w)] == e) return;
    started_epoch_[static_cast<size_t>(w)] = e;
    WorkerStats& ws = workers_[w];
    const int64_t c0 = thread_cpu_ns();
    burn_worker_cpu(gils_.at(static_cast<uint32_t>(w)), sh_.cfg.costs.worker.startup_cpu_us,
                    [this, &cancel] { return sh_.stop.load(std::memory_order_relaxed) || cancel.load(); });
    ws.cpu_work_ns += thread_cpu_ns() - c0;
  }

  // The DataLoader worker's queue feeder thread (LoaderCosts: worker.put_us): burns
  // the put's CPU for each batch in the worker's feeder thread, overlapping the worker's next fetch,
  // its GIL share (put_gil_share) through the worker's lock.
  // Empty (no feeder threads) when the figure is 0.
  PrefetchQueue::PutFn put_fn() {
    if (sh_.cfg.costs.worker.put_us <= 0) return {};
    return [this](int w, Batch& b, const std::atomic<bool>& cancel) {
      const int64_t c0 = thread_cpu_ns();
      burn_worker_cpu(
          gils_.at(static_cast<uint32_t>(w)), sh_.cfg.costs.worker.put_us * static_cast<double>(b.samples),
          [this, &cancel] { return sh_.stop.load(std::memory_order_relaxed) || cancel.load(); },
          sh_.cfg.costs.put_gil_share);
      workers_[w].put_cpu_ns += thread_cpu_ns() - c0;  // this feeder's field alone
    };
  }

  void note_canceled_read() {
    if (!sh_.stop && sh_.canceled.fetch_add(1) + 1 >= kCanceledReadsToStop) {
      int expected = 0;
      if (sh_.stop_kind.compare_exchange_strong(expected, 3)) sh_.stop_ns = now_ns();
      sh_.stop = true;
    }
  }

  int rank_;
  Shared& sh_;
  WorkerStats* workers_;
  RankStats& stats_;
  std::unique_ptr<SampleSource> source_;  // the dataset kind's sampler and reads (sample_source.hpp)
  std::vector<uint32_t> started_epoch_;   // per worker (its thread only): the epoch_no_ whose start-up it paid
  WorkerGils gils_;                       // with LoaderCosts::python_gil: per worker, or one (threads_share_gil)
  std::atomic<uint32_t> epoch_no_{0};     // 1 + the epoch being run
  std::vector<uint64_t> epoch_files_;     // files this rank reads in the epoch (cache preparation)
  int64_t cache_prep_ns_ = 0;             // this rank's time in prepare_cache, all epochs
  std::vector<std::unique_ptr<SharerThread>> sharers_;  // per worker, when the other threads' CPU is modelled
};

double tv_s(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

// run_loader with the worker's costs already set for this run's crowding.
LoaderResult run_resolved(const FileIndex& index, const LoaderConfig& cfg, LoaderProgress* progress,
                          const Topology* topo, const RecordLayout* layout, StepSync* sync) {
  LoaderResult res;
  Shared sh{index, cfg};
  if (layout && layout->records_in_files()) sh.layout = layout;
  sh.progress = progress;
  sh.topo = topo;
  if (!index.root().empty()) {
    sh.dirfd = open(index.root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sh.dirfd < 0) throw IoError(errno, "open directory", index.root());
  }
  sh.sync = sync;
  if (cfg.ranks > 1 || sync)
    sh.step_barrier = std::make_unique<std::barrier<StepCompletion>>(static_cast<std::ptrdiff_t>(cfg.ranks),
                                                                     StepCompletion{&sh});
  std::vector<WorkerStats> workers(static_cast<size_t>(cfg.ranks) * cfg.num_workers);
  std::vector<RankStats> ranks(cfg.ranks);

  rusage ru0{}, ru1{};
  getrusage(RUSAGE_SELF, &ru0);
  if (sync) sync->start();  // every process of the job starts its clock here
  sh.start_ns = now_ns();
  if (cfg.duration_s > 0) sh.deadline_ns = sh.start_ns + static_cast<int64_t>(cfg.duration_s * 1e9);

  std::vector<uint32_t> epochs(cfg.ranks, 0);
  std::vector<std::exception_ptr> errors(cfg.ranks);
  std::vector<std::thread> threads;
  std::exception_ptr spawn_error;
  for (uint32_t r = 0; r < cfg.ranks && !spawn_error; ++r) {
    try {
      threads.emplace_back([&, r] {
        try {
          RankLoader rl(static_cast<int>(r), sh, &workers[static_cast<size_t>(r) * cfg.num_workers], ranks[r]);
          epochs[r] = rl.run();
        } catch (...) {
          errors[r] = std::current_exception();
          sh.stop = true;
          if (sh.step_barrier) sh.step_barrier->arrive_and_drop();
        }
      });
    } catch (...) {
      // This rank's thread could not start (EAGAIN at a thread or pids limit): the started ranks
      // stop, the missing ones leave the step barrier so that none waits for them, and the error
      // goes to the caller (exit 1) once they are joined.
      spawn_error = std::current_exception();
      sh.stop = true;
      if (sh.step_barrier)
        for (uint32_t m = r; m < cfg.ranks; ++m) sh.step_barrier->arrive_and_drop();
    }
  }
  for (auto& t : threads) t.join();
  if (cfg.epoch_mark) cfg.epoch_mark();  // the end of the last epoch, every rank done
  // Keep meeting the other processes' steps until they have all finished too.
  if (sync) sync->finish(spawn_error ? StopKind::kFailed : local_stop_kind(sh));
  if (spawn_error) std::rethrow_exception(spawn_error);
  // Elapsed ends where the stop (signal or --duration) was seen: the drain after it delivers
  // nothing, so bytes and time cover the same span.
  const int64_t stop_at = sh.stop_ns.load();
  // The cache preparation before each epoch is not loading: it is taken out (Shared::cache_prep_ns).
  const int64_t elapsed_ns = std::max<int64_t>(1, (stop_at ? std::min(stop_at, now_ns()) : now_ns()) - sh.start_ns -
                                                      sh.cache_prep_ns.load());
  getrusage(RUSAGE_SELF, &ru1);
  if (sh.dirfd >= 0) close(sh.dirfd);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);

  // Each rank's part, merged as the parts of a multi-host run are (loader/loader_result.hpp).
  for (uint32_t r = 0; r < cfg.ranks; ++r) {
    const auto first = workers.begin() + static_cast<std::ptrdiff_t>(r) * cfg.num_workers;
    res.merge(rank_result(std::move(ranks[r]), std::vector<WorkerStats>(first, first + cfg.num_workers), elapsed_ns,
                          epochs[r]));
  }
  res.elapsed_ns = elapsed_ns;
  // The cache preparation's CPU is reported apart, as its time is left out of elapsed_ns.
  const double prep_user_s = static_cast<double>(sh.cache_prep_user_ns.load()) / 1e9;
  const double prep_sys_s = static_cast<double>(sh.cache_prep_sys_ns.load()) / 1e9;
  res.cpu_user_s = std::max(0.0, tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime) - prep_user_s);
  res.cpu_sys_s = std::max(0.0, tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime) - prep_sys_s);
  res.cache_prep_cpu_s = prep_user_s + prep_sys_s;
  res.error_samples = sh.error_samples;
  res.error_files = sh.failed_paths.size();
  res.error_files_exact = sh.noted_errors == res.errors;  // every failure was seen with its path (or none had one)
  res.epoch_resident_fraction = sh.resident;
  res.residency_method = sh.residency_method;
  res.cache_notes = sh.cache_notes;
  int kind = sh.stop_kind.load();
  res.partial = kind == 2;  // interrupted; a stop on canceled reads is a failure (errors: exit 1)
  res.stopped_on_errors = kind == 3;
  res.stop = kind == 5   ? LoaderStop{.kind = LoaderStopKind::kPeerFailed}
             : kind == 4 ? LoaderStop{.kind = LoaderStopKind::kStonewall}
             : kind == 2 ? loader_stop_interrupted(interrupt_signal())
             : kind == 3 ? LoaderStop{.kind = LoaderStopKind::kCanceledReads, .canceled_reads = sh.canceled.load()}
             : kind == 1 ? LoaderStop{.kind = LoaderStopKind::kDuration}
                         : LoaderStop{.kind = LoaderStopKind::kCompleted};
  return res;
}

}  // namespace

double loop_burn_us(const LoaderConfig& cfg, const RecordLayout* layout) {
  if (layout && layout->records_in_files()) return cfg.costs.worker.loop_us;
  const double read_us = cfg.engine == EngineKind::kPsync ? cfg.costs.own_read_psync_us
                                                          : cfg.costs.own_read_io_uring_us;
  return std::max(0.0, cfg.costs.worker.loop_us - read_us);
}

namespace {

// What one run burns: the worker's costs of its own crowding from a calibration's curve
// (worker_costs.hpp), and the loop's figure less the own read (loop_burn_us).
LoaderConfig burned_config(const LoaderConfig& cfg, const RecordLayout* layout) {
  LoaderConfig c = at_own_level(cfg);
  c.costs.worker.loop_us = loop_burn_us(c, layout);
  return c;
}

}  // namespace

LoaderResult run_loader(const FileIndex& index, const LoaderConfig& cfg, LoaderProgress* progress, const Topology* topo,
                        const RecordLayout* layout, StepSync* sync) {
  return run_resolved(index, burned_config(cfg, layout), progress, topo, layout, sync);
}

}  // namespace ioprobe
