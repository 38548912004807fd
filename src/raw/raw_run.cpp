#include "raw/raw_run.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/engine.hpp"
#include "engine/engine_choice.hpp"
#include "topology/target.hpp"

namespace ioprobe {

RawEngineChoice choose_raw_engine(const RawConfig& cfg, const TargetInfo& target, double residency,
                                  const UringAvailability& uring) {
  EngineRequest r;
  r.requested = cfg.engine;
  r.buffered = !cfg.direct;
  r.depth = cfg.iodepth;
  r.write = pattern_is_write(cfg.rw);
  r.residency = residency;
  r.file_per_read = false;  // one open file, read in blocks
  EngineChoice c = choose_engine(r, target, uring);
  if (cfg.engine == EngineSelection::kAuto) c.reason = "auto: " + c.reason;
  return {c.engine, c.reason, c.warning};
}

RawEngineChoice choose_raw_engine(const RawConfig& cfg, const TargetInfo& target, double residency) {
  return choose_raw_engine(cfg, target, residency, probe_io_uring());
}

namespace {

// xorshift64* (Vigna 2016): fast, seeded, good enough for offsets.
struct OffsetRng {
  uint64_t s;
  explicit OffsetRng(uint64_t seed) : s(seed ? seed : 0x9E3779B97F4A7C15ULL) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1DULL;
  }
  // Uniform in [0, n) by multiply-shift (Lemire), no division.
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }
};

struct JobState {
  RawResults res;
  int64_t end_ns = 0;
  std::atomic<bool> finished{false};
  std::exception_ptr setup_error;
  std::atomic<uint64_t> progress_ios{0};
};

struct Shared {
  const RawConfig* cfg;
  const RawTarget* target;
  const RawEngineChoice* choice;
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::atomic<bool> abort{false};
  int64_t start_ns = 0;
};

void note_error(RawResults& r, const RawConfig& cfg, uint64_t offset, int err) {
  ++r.errors;
  if (r.first_error.empty())
    r.first_error = ErrorRecord{.err = err < 0 ? -err : 0,
                                .op = fmt::format("{} of {} B at offset {}",
                                                  pattern_is_write(cfg.rw) ? "write" : "read", cfg.bs, offset),
                                .detail = err < 0 ? std::string() : fmt::format("short transfer of {} B", err)};
}

void run_job(unsigned job, Shared& sh, JobState& st) {
  const RawConfig& cfg = *sh.cfg;
  RawResults& r = st.res;
  std::unique_ptr<Engine> engine;
  int fd = -1;
  try {
    int flags = (pattern_is_write(cfg.rw) ? O_WRONLY : O_RDONLY) | O_CLOEXEC | (cfg.direct ? O_DIRECT : 0);
    fd = open(sh.target->path.c_str(), flags);
    if (fd < 0)
      throw IoError(errno, cfg.direct ? "open with O_DIRECT" : "open", escape_bytes(sh.target->path),
                    errno == EINVAL ? "this filesystem does not support O_DIRECT; use --direct 0" : "");
    engine = make_engine(sh.choice->name);
    EngineOptions eo;
    eo.depth = cfg.iodepth;
    eo.buffer_bytes = cfg.bs;
    eo.direct = cfg.direct;
    eo.sqpoll = cfg.sqpoll;
    eo.fixed_buffers = cfg.fixed_buffers;
    engine->setup(fd, eo);
    if (job == 0) {
      r.engine_notes = engine->caps().notes;
      r.fixed_buffers = engine->caps().fixed_buffers;
      r.registered_files = engine->caps().registered_files;
      r.sqpoll = engine->caps().sqpoll;
    }
  } catch (...) {
    st.setup_error = std::current_exception();
    sh.abort = true;
  }
  sh.ready.fetch_add(1);
  while (!sh.go.load(std::memory_order_acquire)) std::this_thread::yield();
  if (sh.abort || st.setup_error) {
    if (fd >= 0) close(fd);
    st.finished.store(true, std::memory_order_release);
    return;
  }

  const IoDir dir = pattern_is_write(cfg.rw) ? IoDir::write : IoDir::read;
  const bool random = pattern_is_random(cfg.rw);
  const uint64_t blocks = sh.target->region_bytes / cfg.bs;
  const uint64_t limit = cfg.runtime_s > 0 ? 0 : blocks;  // one pass when not time based
  const int64_t deadline = cfg.runtime_s > 0 ? sh.start_ns + static_cast<int64_t>(cfg.runtime_s * 1e9) : 0;
  OffsetRng rng(cfg.seed + job * 0x9E3779B97F4A7C15ULL);
  uint64_t seq_block = 0;
  const unsigned depth = engine->depth();
  std::vector<unsigned> free_slots;
  for (unsigned i = depth; i-- > 0;) free_slots.push_back(i);
  std::vector<IoCompletion> done(depth);
  uint64_t issued = 0;
  bool stop = false;

  auto account = [&](unsigned slot, int res, uint64_t lat) {
    if (res == static_cast<int>(cfg.bs)) {
      ++r.ios;
      r.bytes += cfg.bs;
      r.latency.record(lat);
    } else {
      note_error(r, cfg, engine->slot(slot).offset, res);
      stop = true;
    }
  };

  while (true) {
    if (!stop) {
      int64_t now = now_ns();
      if ((deadline && now >= deadline) || interrupted() || (limit && issued >= limit)) stop = true;
    }
    // One pass issues exactly `limit` requests: never more, however many slots are free.
    while (!stop && !free_slots.empty() && !(limit && issued >= limit)) {
      unsigned s = free_slots.back();
      uint64_t block;
      if (random) {
        block = rng.below(blocks);
      } else {
        block = seq_block;
        if (++seq_block == blocks) seq_block = 0;
      }
      engine->prep(s, dir, block * cfg.bs, cfg.bs);  // aligned by construction: cannot fail
      QueueStatus qs = engine->queue(s);
      if (qs == QueueStatus::busy) break;
      ++issued;
      if (qs == QueueStatus::completed) {
        IoSlot& sl = engine->slot(s);
        account(s, sl.res, engine->last_latency_ns());
        int64_t end = sl.start_ns + static_cast<int64_t>(engine->last_latency_ns());
        if ((deadline && end >= deadline) || (limit && issued >= limit)) stop = true;
        if ((issued & 255) == 0) {
          st.progress_ios.store(r.ios, std::memory_order_relaxed);
          if (interrupted()) stop = true;
        }
        continue;
      }
      free_slots.pop_back();
    }
    if (engine->in_flight() == 0) {
      if (stop) break;
      continue;
    }
    int n = engine->commit_and_reap(done.data(), depth, 1);
    if (n < 0) {
      if (n == -EINTR || n == -EAGAIN || n == -EBUSY) continue;
      note_error(r, cfg, 0, n);
      stop = true;
      break;  // the ring is unusable; teardown cancels what is in flight
    }
    for (int k = 0; k < n; ++k) {
      account(done[k].slot, done[k].res, done[k].latency_ns);
      free_slots.push_back(done[k].slot);
    }
    st.progress_ios.store(r.ios, std::memory_order_relaxed);
  }
  st.end_ns = now_ns();
  engine->teardown();
  close(fd);
  st.finished.store(true, std::memory_order_release);
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

}  // namespace

RawResults run_raw(const RawConfig& cfg, const RawTarget& target, const RawEngineChoice& choice,
                   const RawStartHook& at_start) {
  Shared sh;
  sh.cfg = &cfg;
  sh.target = &target;
  sh.choice = &choice;
  std::vector<std::unique_ptr<JobState>> jobs;
  std::vector<std::thread> threads;
  for (unsigned j = 0; j < cfg.numjobs; ++j) jobs.push_back(std::make_unique<JobState>());
  try {
    for (unsigned j = 0; j < cfg.numjobs; ++j) threads.emplace_back(run_job, j, std::ref(sh), std::ref(*jobs[j]));
  } catch (...) {
    // A job's thread could not start (EAGAIN at a thread or pids limit): the started ones are
    // released without doing I/O and joined, and the error goes to the caller (exit 1).
    sh.abort = true;
    sh.go.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    throw;
  }
  while (sh.ready.load() < cfg.numjobs) std::this_thread::sleep_for(std::chrono::microseconds(200));
  if (at_start) {
    std::exception_ptr setup;
    for (const auto& j : jobs)
      if (j->setup_error && !setup) setup = j->setup_error;
    try {
      at_start(setup);
    } catch (...) {
      // Another process (or this one) failed: no job does any I/O.
      sh.abort = true;
      sh.go.store(true, std::memory_order_release);
      for (auto& t : threads) t.join();
      throw;
    }
  }

  rusage ru0{}, ru1{};
  getrusage(RUSAGE_SELF, &ru0);
  sh.start_ns = now_ns();
  sh.go.store(true, std::memory_order_release);

  // Progress on a terminal, once a second, from the jobs' relaxed counters.
  ProgressLine line(!sh.abort && cfg.progress, 1, 0);
  auto all_done = [&] {
    for (const auto& j : jobs)
      if (!j->finished.load(std::memory_order_acquire)) return false;
    return true;
  };
  if (line.enabled()) {
    while (!all_done()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      line.update([&] {
        uint64_t ios = 0;
        for (const auto& j : jobs) ios += j->progress_ios.load(std::memory_order_relaxed);
        const double t = static_cast<double>(now_ns() - sh.start_ns) / 1e9;
        return fmt::format("  {:.0f} s{}: {} I/Os, {:.0f} IOPS", t,
                           cfg.runtime_s > 0 ? fmt::format(" of {:.0f} s", cfg.runtime_s) : "", format_count(ios),
                           ios / t);
      });
    }
  }
  for (auto& t : threads) t.join();
  line.finish();
  getrusage(RUSAGE_SELF, &ru1);

  // Job 0's result first: its engine notes and flags are the run's (RawResults::merge keeps them).
  RawResults out;
  for (unsigned j = 0; j < cfg.numjobs; ++j) {
    JobState& st = *jobs[j];
    if (st.setup_error) std::rethrow_exception(st.setup_error);
    st.res.elapsed_s = static_cast<double>(std::max(st.end_ns, sh.start_ns) - sh.start_ns) / 1e9;
    if (j == 0) out = st.res;
    else out.merge(st.res);
  }
  out.cpu_user_s = seconds(ru1.ru_utime) - seconds(ru0.ru_utime);
  out.cpu_sys_s = seconds(ru1.ru_stime) - seconds(ru0.ru_stime);
  out.partial = interrupted() || out.errors > 0;
  // Said in every summary, also after SIGTERM, so a partial result always names why it stopped.
  out.stop = interrupted()       ? raw_stop_interrupted(interrupt_signal())
             : out.errors > 0    ? RawStop{.kind = RawStopKind::kErrors}
             : cfg.runtime_s > 0 ? RawStop{.kind = RawStopKind::kRuntime}
                                 : RawStop{.kind = RawStopKind::kOnePass};
  return out;
}

}  // namespace ioprobe
