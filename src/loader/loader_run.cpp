#include "loader/loader_run.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "engine/file_reader.hpp"
#include "engine/page_cache.hpp"
#include "loader/consumer.hpp"
#include "loader/h2d_stage.hpp"
#include "loader/jpeg_decode.hpp"
#include "loader/pin_stage.hpp"
#include "loader/prefetch_queue.hpp"
#include "loader/record_fetch.hpp"
#include "loader/sampler.hpp"
#include "loader/shard_plan.hpp"
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

// Reads completed with ECANCELED after which a run stops (Shared::canceled).
constexpr uint32_t kCanceledReadsToStop = 8;

struct Shared;

// Runs once per DDP step, when the last rank of this process arrives at the step barrier: meets
// the other processes of a multi-host job (StepSync) and takes over a stop any of them asked for.
struct StepCompletion {
  Shared* sh = nullptr;
  void operator()() noexcept;
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
  std::atomic<uint32_t> canceled{0};  // reads io_uring completed with ECANCELED
  std::mutex err_mu;
  std::vector<std::string> error_samples;
  std::unique_ptr<std::barrier<StepCompletion>> step_barrier;  // DDP: ranks step together
  StepSync* sync = nullptr;  // other processes of the job (null: this process alone)
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

void StepCompletion::operator()() noexcept {
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
      : rank_(rank), sh_(sh), workers_(workers), stats_(stats), readers_(sh.cfg.num_workers),
        range_readers_(sh.cfg.num_workers), decoders_(sh.cfg.num_workers), streams_(sh.cfg.num_workers),
        tokens_(sh.cfg.num_workers) {
    stats_.rank = static_cast<int>(sh.cfg.first_rank) + rank;  // the job-wide rank
    stats_.timeline = Timeline(sh.cfg.timeline_interval_s);
    kind_ = sh.layout ? sh.layout->kind() : DatasetKind::kFiles;
    env_.dirfd = sh.dirfd;
    env_.index = &sh.index;
    env_.layout = sh.layout;
    env_.read_size = sh.cfg.read_size;
    env_.on_error = [this](const std::string& what) { note_error(what); };
  }

  uint32_t run() {
    const LoaderConfig& cfg = sh_.cfg;
    FileReaderOptions ropts;
    ropts.direct = cfg.direct;
    std::exception_ptr init_error;
    std::mutex init_mu;
    PrefetchQueue queue(
        cfg.num_workers, cfg.prefetch_factor,
        [&](int w) {
          try {
            if (kind_ == DatasetKind::kFiles) {
              readers_[static_cast<size_t>(w)] = make_file_reader(cfg.engine, ropts);
              if (cfg.decode_jpeg) decoders_[static_cast<size_t>(w)] = std::make_unique<JpegDecoder>();
            } else {
              range_readers_[static_cast<size_t>(w)] = make_range_reader(cfg.engine, cfg.direct);
            }
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
          // The run-queue wait inside the fetch: CPUs taken by other threads or processes while
          // this worker had work to do.
          const int64_t q0 = thread_runqueue_wait_ns();
          BatchResult r = fetch(w, t, cancel);
          WorkerStats& ws = workers_[w];
          if (q0 < 0 || ws.runq_wait_ns < 0)
            ws.runq_wait_ns = -1;
          else
            ws.runq_wait_ns += std::max<int64_t>(0, thread_runqueue_wait_ns() - q0);
          return r;
        });

    std::unique_ptr<Consumer> consumer = make_consumer(cfg);
    std::unique_ptr<H2dStage> h2d;
    if (cfg.h2d_cuda) h2d = std::make_unique<H2dStage>(cfg, global_rank());
    std::unique_ptr<PinStage> pin;
    if (cfg.pin_memory)
      pin = std::make_unique<PinStage>(queue, cfg.pin_bytes_per_batch, cfg.batch_size, [this] { return check_stop(); });
    const std::function<bool()> stop_fn = [this] { return check_stop(); };
    uint32_t epochs_done = 0;
    for (uint32_t epoch = 0; epoch < cfg.epochs && !sh_.stop; ++epoch) {
      std::vector<BatchTask> tasks = plan_epoch(epoch);
      prepare_cache(epoch);
      if (rank_ == 0 && sh_.cfg.epoch_mark) sh_.cfg.epoch_mark();
      stats_.epoch_samples.push_back(0);
      stats_.epoch_bytes.push_back(0);
      const int64_t epoch_start = now_ns();
      queue.start_epoch(std::move(tasks));
      if (pin) pin->start_epoch();  // from here the pin thread alone takes batches from the queue
      bool first = true;
      for (;;) {
        if (check_stop()) {
          if (!pin) queue.cancel();  // with a pin thread, it cancels the queue
          break;
        }
        const int64_t w0 = now_ns();
        std::optional<BatchResult> r = pin ? pin->next() : queue.next(stop_fn);
        if (!r) {
          if (check_stop() && !pin) queue.cancel();  // drain: no read in flight when the result is reported
          break;
        }
        if (init_error) std::rethrow_exception(init_error);
        const int64_t w1 = now_ns();
        if (first && epoch == 0) stats_.first_batch_ns = w1 - epoch_start;
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
        // The wait spans [w0, w0 + wait] (the DDP barrier included); the timeline splits it over
        // the intervals it covers, and the batch counts where the wait ended (handed to the step).
        stats_.timeline.add(w0 + wait - sh_.start_ns, r->samples, r->bytes, wait);
        if (cfg.record_deliveries) stats_.deliveries.push_back({w0 + wait - sh_.start_ns, r->samples, r->bytes, wait});
        if (sh_.progress) {
          sh_.progress->samples += r->samples;
          if (kind_ != DatasetKind::kFiles) sh_.progress->bytes += r->bytes;  // files: counted as read
        }
        // The copy to the GPU (--h2d cuda), then the GPU step and the main process's work beside it
        // (loader/consumer.hpp).
        if (h2d) h2d->copy(r->samples, r->bytes, stats_);
        if (consumer) consumer->step(r->samples, stats_, stop_fn);
      }
      if (pin) pin->end_epoch();
      const int64_t stop_at = sh_.stop_ns.load();
      stats_.elapsed_ns += (stop_at ? std::max(epoch_start, stop_at) : now_ns()) - epoch_start;
      if (!sh_.stop) ++epochs_done;
    }
    if (init_error) std::rethrow_exception(init_error);
    stats_.max_outstanding = queue.max_outstanding();
    if (pin) {
      stats_.pin_busy_ns = pin->busy_ns();
      stats_.pin_cpu_ns = pin->cpu_ns();
      stats_.pin_bytes = pin->pinned_bytes();
    }
    if (sh_.step_barrier) sh_.step_barrier->arrive_and_drop();
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

  // Before an epoch: drop caches (root, --drop-caches), evict this rank's files (cold runs
  // without O_DIRECT), then measure how much of the data is resident (rank 0, buffered runs).
  void prepare_cache(uint32_t epoch) {
    const LoaderConfig& cfg = sh_.cfg;
    if (cfg.drop_caches && rank_ == 0) {
      DropCachesResult d = drop_caches();
      if (!d.dropped && epoch == 0) {
        std::lock_guard<std::mutex> g(sh_.cache_mu);
        sh_.cache_notes.push_back(d.reason);
      }
    }
    if (cfg.evict_before_epoch)
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

  // The epoch's batches in delivery order, and the files this rank reads in it (epoch_files_).
  //  files:   DistributedSampler share of a permutation of the files, cut by BatchSampler;
  //  token:   the same over sample indices (files x sequences per file);
  //  sharded: each worker's shards (shard_plan.hpp), its own batches, round-robin over workers.
  std::vector<BatchTask> plan_epoch(uint32_t epoch) {
    const LoaderConfig& cfg = sh_.cfg;
    std::vector<BatchTask> tasks;
    if (kind_ == DatasetKind::kSharded) {
      std::vector<uint64_t> records(cfg.num_workers);
      epoch_files_.clear();
      for (uint32_t w = 0; w < cfg.num_workers; ++w) {
        std::vector<uint64_t> mine = shards_for_worker(sh_.layout->files(), cfg.shuffle, cfg.seed, epoch,
                                                       global_rank(), world(), w, cfg.num_workers);
        records[w] = mine.size() * sh_.layout->records_per_file();
        epoch_files_.insert(epoch_files_.end(), mine.begin(), mine.end());
        streams_[w].reset(std::move(mine));  // no batch of this rank is in flight between epochs
      }
      for (const WorkerBatch& b : iterable_batch_order(records, cfg.batch_size, cfg.drop_last))
        tasks.push_back({0, b.begin, b.end, static_cast<int>(b.worker)});
      return tasks;
    }
    const uint64_t n = kind_ == DatasetKind::kToken ? sh_.layout->total_records() : sh_.index.size();
    std::vector<uint64_t> order = sample_order(n, cfg.shuffle, cfg.seed, epoch);
    order_ = world() > 1 ? shard_for_rank(order, global_rank(), world()) : std::move(order);
    if (kind_ == DatasetKind::kToken) {
      epoch_files_.resize(sh_.layout->files());
      for (uint64_t f = 0; f < epoch_files_.size(); ++f) epoch_files_[f] = f;
    } else {
      epoch_files_ = order_;
    }
    for (const BatchRange& b : cut_batches(order_.size(), cfg.batch_size, cfg.drop_last)) tasks.push_back({0, b.begin, b.end});
    return tasks;
  }

  void note_error(const std::string& what) {
    std::lock_guard<std::mutex> g(sh_.err_mu);
    if (sh_.error_samples.size() < kMaxErrorSamples) sh_.error_samples.push_back(what);
  }

  void per_sample_cpu(WorkerStats& ws) {
    if (sh_.cfg.cpu_per_sample_us <= 0) return;
    const int64_t c0 = thread_cpu_ns();
    spend_cpu_us(sh_.cfg.cpu_per_sample_us, [this] { return sh_.stop.load(std::memory_order_relaxed); });
    ws.cpu_work_ns += thread_cpu_ns() - c0;
  }

  BatchResult fetch(int w, const BatchTask& t, const std::atomic<bool>& cancel) {
    if (kind_ != DatasetKind::kFiles) return fetch_records(w, t, cancel);
    BatchResult r;
    WorkerStats& ws = workers_[w];
    FileReader* reader = readers_[static_cast<size_t>(w)].get();
    const int64_t t0 = now_ns();
    for (uint64_t pos = t.begin; pos < t.end; ++pos) {
      if (cancel) {
        r.cancelled = true;
        break;
      }
      const uint64_t idx = order_[pos];
      const int64_t hint = sh_.index.file_size(idx);
      FileReadResult fr;
      if (!reader) {
        fr.err = EIO;
        fr.failed_op = "set up engine for";
      } else {
        ReadControl ctl;
        ctl.stop = &cancel;  // the queue cancels on --duration, a signal or an error stop
        ctl.bytes_read = sh_.progress ? &sh_.progress->bytes : nullptr;
        fr = reader->read_file(sh_.dirfd, sh_.index.path(idx), hint, ctl);
        if (fr.stopped) {  // stopped inside the file: no sample, no error
          r.cancelled = true;
          break;
        }
      }
      if (fr.err == 0 && hint >= 0 && fr.bytes != hint) {
        fr.err = EIO;
        fr.failed_op = "read (size changed)";
      }
      if (fr.err == 0 && sh_.cfg.decode_jpeg && !decode(w, fr, idx)) {
        ++ws.errors;
        ++r.errors;
        ws.io_bytes += static_cast<uint64_t>(fr.bytes);
      } else if (fr.err) {
        ++ws.errors;
        ++r.errors;
        // io_uring cancels reads it cannot hand to an io-wq worker thread (none can be created
        // under a pids or thread limit): every later read would fail the same way, each after a
        // wait, so the run stops after a few instead of failing file by file through the epoch.
        if (fr.err == ECANCELED && !sh_.stop && sh_.canceled.fetch_add(1) + 1 >= kCanceledReadsToStop) {
          int expected = 0;
          if (sh_.stop_kind.compare_exchange_strong(expected, 3)) sh_.stop_ns = now_ns();
          sh_.stop = true;
        }
        std::lock_guard<std::mutex> g(sh_.err_mu);
        if (sh_.error_samples.size() < kMaxErrorSamples)
          sh_.error_samples.push_back(fmt::format("{} {}: {}", fr.failed_op, escape_bytes(sh_.index.display_path(idx)),
                                                  errno_text(fr.err)));
      } else {
        ++ws.files;
        ws.bytes += static_cast<uint64_t>(fr.bytes);
        ws.io_bytes += static_cast<uint64_t>(fr.bytes);
        ++r.samples;
        r.bytes += static_cast<uint64_t>(fr.bytes);
        ws.file_latency.record(static_cast<uint64_t>(fr.total_ns));
        ws.open_latency.record(static_cast<uint64_t>(fr.open_ns + fr.close_ns));
      }
      if (sh_.cfg.cpu_per_sample_us > 0) {
        const int64_t c0 = thread_cpu_ns();
        spend_cpu_us(sh_.cfg.cpu_per_sample_us,
                     [this, &cancel] { return sh_.stop.load(std::memory_order_relaxed) || cancel.load(); });
        ws.cpu_work_ns += thread_cpu_ns() - c0;
      }
    }
    ws.busy_ns += now_ns() - t0;
    return r;
  }

  // --decode jpeg: decodes the file just read on this worker thread; its CPU time counts as the
  // worker's CPU work. False (error noted) when it does not decode.
  bool decode(int w, const FileReadResult& fr, uint64_t idx) {
    WorkerStats& ws = workers_[w];
    JpegDecoder* dec = decoders_[static_cast<size_t>(w)].get();
    std::string why;
    const int64_t c0 = thread_cpu_ns();
    if (!dec) {
      why = "no decoder (the worker could not be set up)";
    } else if (!fr.data) {
      why = fmt::format("{} B does not fit one read request; ioprobe decodes files of at most 8 MiB", fr.bytes);
    } else {
      const JpegDecodeResult d = dec->decode(fr.data, static_cast<size_t>(fr.bytes));
      if (d.ok) ws.decoded_pixels += static_cast<uint64_t>(d.width) * d.height;
      else why = d.error;
    }
    const int64_t cpu = thread_cpu_ns() - c0;
    ws.decode_cpu_ns += cpu;
    ws.cpu_work_ns += cpu;
    if (why.empty()) {
      ++ws.decoded;
      return true;
    }
    ++ws.decode_errors;
    note_error(fmt::format("decode (libjpeg-turbo) {}: {}", escape_bytes(sh_.index.display_path(idx)), why));
    return false;
  }

  BatchResult fetch_records(int w, const BatchTask& t, const std::atomic<bool>& cancel) {
    WorkerStats& ws = workers_[w];
    RangeReader* reader = range_readers_[static_cast<size_t>(w)].get();
    if (!reader) {  // the engine could not be set up; run() rethrows the reason
      BatchResult r;
      r.errors = t.end - t.begin;
      return r;
    }
    RecordFetchEnv env = env_;
    env.per_sample = [this, &ws] { per_sample_cpu(ws); };
    const int64_t t0 = now_ns();
    BatchResult r = kind_ == DatasetKind::kSharded
                        ? streams_[static_cast<size_t>(w)].fetch(*reader, env, ws, t.begin, t.end, cancel)
                        : tokens_[static_cast<size_t>(w)].fetch(*reader, env, ws, order_, t.begin, t.end, cancel);
    ws.busy_ns += now_ns() - t0;
    return r;
  }

  int rank_;
  Shared& sh_;
  WorkerStats* workers_;
  RankStats& stats_;
  std::vector<std::unique_ptr<FileReader>> readers_;
  std::vector<std::unique_ptr<RangeReader>> range_readers_;  // records datasets
  std::vector<std::unique_ptr<JpegDecoder>> decoders_;       // --decode jpeg: one per worker
  std::vector<ShardStream> streams_;                         // sharded: one per worker
  std::vector<TokenFetcher> tokens_;                         // token: one per worker
  DatasetKind kind_ = DatasetKind::kFiles;
  RecordFetchEnv env_;
  std::vector<uint64_t> order_;
  std::vector<uint64_t> epoch_files_;  // files this rank reads in the epoch (cache preparation)
};

double tv_s(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

}  // namespace

LoaderResult run_loader(const FileIndex& index, const LoaderConfig& cfg, LoaderProgress* progress, const Topology* topo,
                        const RecordLayout* layout, StepSync* sync) {
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
  const int64_t elapsed_ns = (stop_at ? std::min(stop_at, now_ns()) : now_ns()) - sh.start_ns;
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
  res.cpu_user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
  res.cpu_sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
  res.error_samples = sh.error_samples;
  res.epoch_resident_fraction = sh.resident;
  res.residency_method = sh.residency_method;
  res.cache_notes = sh.cache_notes;
  int kind = sh.stop_kind.load();
  res.partial = kind == 2;  // interrupted; a stop on canceled reads is a failure (errors: exit 1)
  res.stopped_on_errors = kind == 3;
  res.stop_reason = kind == 5   ? "stopped: a rank of another process failed (see its error)"
                    : kind == 4 ? "stonewall: the first host to read its share ended the measurement"
                    : kind == 2   ? fmt::format("interrupted ({})", interrupt_signal() == 15 ? "SIGTERM" : "SIGINT")
                    : kind == 3 ? fmt::format("stopped early: io_uring canceled {} reads (ECANCELED, see ERRORS)",
                                              sh.canceled.load())
                    : kind == 1 ? "duration reached"
                                : "completed";
  return res;
}

}  // namespace ioprobe
