#include "replay/replay_run.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "core/units.hpp"
#include "engine/range_reader.hpp"

namespace ioprobe::replay {

namespace {

constexpr uint64_t kMappedChunk = 1 << 20;    // a mapped range is read in requests of this size
constexpr uint64_t kMaxRequest = 1ULL << 30;  // longest single read request (RangeReader takes < 2 GiB)
constexpr int64_t kSpinNs = 30'000;           // the end of a gap is spun, not slept (wait_until)

// Progress of every stream (ops completed), which batch waits depend on.
struct Shared {
  explicit Shared(size_t n) : done(new std::atomic<uint64_t>[n]) {
    for (size_t i = 0; i < n; ++i) done[i] = 0;
  }
  std::unique_ptr<std::atomic<uint64_t>[]> done;
  std::mutex m;
  std::condition_variable cv;
  std::atomic<uint64_t> bytes{0}, ops{0};
  std::atomic<bool> stop{false};
  std::atomic<int> waiters{0};

  // Called after every op: the lock and the wake-up only when a batch wait is waiting.
  void advance(size_t stream) {
    done[stream].fetch_add(1, std::memory_order_seq_cst);
    if (waiters.load(std::memory_order_seq_cst) == 0) return;
    std::lock_guard<std::mutex> lk(m);
    cv.notify_all();
  }
  // False when the replay was stopped before the dependencies were met.
  bool wait_for(const std::vector<Dependency>& deps) {
    auto met = [&] {
      for (const auto& d : deps)
        if (done[d.stream].load(std::memory_order_seq_cst) < d.ops) return false;
      return true;
    };
    std::unique_lock<std::mutex> lk(m);
    waiters.fetch_add(1, std::memory_order_seq_cst);  // before met(): an advance after it sees the waiter
    bool ok = true;
    while (!met()) {
      if (stop.load() || interrupted()) {
        ok = false;
        break;
      }
      cv.wait_for(lk, std::chrono::milliseconds(20));
    }
    waiters.fetch_sub(1, std::memory_order_seq_cst);
    return ok;
  }
};

struct StreamOutcome {
  StreamResult s;
  LatencyHistogram read_latency, open_latency;
  BatchTimeline timeline;
  uint64_t errors = 0;
  ErrorRecord first_error;
};

class StreamRunner {
 public:
  StreamRunner(const trace::Trace& trace, const ReplayPlan& plan, size_t index, const LayoutPlan& layout,
               const RunOptions& opts, Shared& shared, RangeReader& reader)
      : trace_(trace), sp_(plan.streams[index]), index_(index), layout_(layout), opts_(opts), shared_(shared),
        reader_(reader), stream_(trace.streams[sp_.trace_stream]) {
    out_.s.pid = stream_.pid;
    out_.s.tid = stream_.tid;
    out_.s.rank = stream_.rank;
    out_.s.replay_rank = opts.replay_rank;
    out_.s.role = stream_.role;
    out_.s.recorded_elapsed_ns = sp_.recorded_end_ns;
  }

  StreamOutcome run(int64_t t0) {
    int64_t prev_end = t0;
    int64_t rep_begin = -1, rec_begin = -1, rep_prev_end = -1, rec_prev_end = -1;
    for (const Event& e : sp_.events) {
      if (shared_.stop.load(std::memory_order_relaxed) || interrupted()) break;
      if (e.kind == EventKind::wait_end) {
        const int64_t w0 = now_ns();
        if (!shared_.wait_for(e.deps)) break;
        const int64_t w1 = now_ns();
        out_.s.dependency_wait_ns += w1 - w0;
        prev_end = std::max(prev_end, w1);
      }
      replay_gap(e, prev_end);
      const int64_t start = now_ns();
      switch (e.kind) {
        case EventKind::op:
          call_end_ = 0;
          do_op(stream_.ops[e.op]);
          shared_.advance(index_);
          shared_.ops.fetch_add(1, std::memory_order_relaxed);
          ++out_.s.ops;
          break;
        case EventKind::wait_begin:
          if (rep_prev_end >= 0) {
            out_.timeline.recorded_step_ns += e.t_ns - rec_prev_end;
            out_.timeline.replayed_step_ns += start - rep_prev_end;
          }
          if (e.no_batch) {
            // The call that delivered no batch (the iterator's end) ends the last step; what
            // follows until the next batch wait is no training step.
            rep_begin = rep_prev_end = -1;
            break;
          }
          rep_begin = start;
          rec_begin = e.t_ns;
          break;
        case EventKind::wait_end:
          if (rep_begin >= 0) {
            ++out_.timeline.batches;
            out_.timeline.recorded_wait_ns += e.t_ns - rec_begin;
            out_.timeline.replayed_wait_ns += start - rep_begin;
            out_.timeline.replayed_wait.record(static_cast<uint64_t>(start - rep_begin));
            rep_begin = -1;
          }
          rep_prev_end = start;
          rec_prev_end = e.t_ns;
          break;
      }
      // The next gap counts from the end of this op's call (before the bookkeeping above), as
      // the recorded gap counts from the end of the recorded call.
      prev_end = e.kind == EventKind::op && call_end_ > 0 ? call_end_ : now_ns();
    }
    for (auto& [file, fds] : open_)
      for (int fd : fds) {
        int64_t ns = 0;
        reader_.close(fd, &ns);
      }
    out_.s.elapsed_ns = prev_end - t0;
    return std::move(out_);
  }

 private:
  void replay_gap(const Event& e, int64_t from) {
    GapMode mode = opts_.gaps;
    // The training step and a batch's delivery are wall time: slept, burned only under --gaps burn.
    if (e.kind != EventKind::op && mode == GapMode::recorded) mode = GapMode::sleep;
    const GapCost c = gap_cost(mode, e.gap_ns, e.kind == EventKind::op ? e.gap_cpu_ns : -1);
    if (c.wall_ns <= 0) return;
    // The off-CPU part of a recorded gap holds the run-queue waits the job had; a gap the replay
    // overran (its own thread preempted) is made up from the following gaps' off-CPU parts, never
    // from their CPU, so the host's contention is not counted twice.
    const int64_t wall = std::max(c.wall_ns - late_ns_, c.burn_ns);
    late_ns_ -= c.wall_ns - wall;
    const int64_t deadline = from + wall;
    if (c.burn_ns > 0) burn_cpu(c.burn_ns, deadline);
    wait_until(deadline);
    const int64_t took = now_ns() - from;
    if (took > wall) late_ns_ += took - wall;
    out_.s.gap_ns += took;
  }

  void fail(const ErrorRecord& e) {
    ++out_.errors;
    ++out_.s.errors;
    if (out_.first_error.empty()) out_.first_error = e;
  }

  const std::string& path_of(const trace::Op& op) const {
    static const std::string none;
    if (op.file < 0 || static_cast<size_t>(op.file) >= layout_.files.size()) return none;
    return layout_.files[op.file].path;
  }

  // The stream's descriptor of the op's file, opened (uncounted) when the stream has none.
  int fd_of(const trace::Op& op) {
    auto it = open_.find(op.file);
    if (it != open_.end() && !it->second.empty()) return it->second.back();
    int64_t ns = 0;
    const int fd = reader_.open(AT_FDCWD, path_of(op).c_str(), &ns);
    if (fd < 0) {
      fail({-fd, "open", path_of(op), ""});
      return -1;
    }
    open_[op.file].push_back(fd);
    return fd;
  }

  void read_range(const trace::Op& op, uint64_t offset, uint64_t length, bool mapped) {
    const int fd = fd_of(op);
    if (fd < 0) return;
    const RangeReadResult r = reader_.read(fd, offset, std::min(length, kMaxRequest));
    call_end_ = now_ns();
    ++out_.s.reads;
    out_.read_latency.record(static_cast<uint64_t>(std::max<int64_t>(0, r.ns)));
    out_.s.read_ns += r.ns;
    if (r.err) {
      fail({r.err, fmt::format("read of {} B at offset {}", length, offset), path_of(op), ""});
      return;
    }
    out_.s.bytes += static_cast<uint64_t>(r.bytes);
    if (mapped) out_.s.mapped_bytes += static_cast<uint64_t>(r.bytes);
    shared_.bytes.fetch_add(static_cast<uint64_t>(r.bytes), std::memory_order_relaxed);
    if (!mapped) {
      out_.s.recorded_read_ns += op.dur_ns;
      if (r.ns > op.dur_ns) {
        out_.s.stall_ns += r.ns - op.dur_ns;
        ++out_.s.slower_reads;
      }
    }
  }

  void do_op(const trace::Op& op) {
    if (op.error != 0 || op.file < 0 || path_of(op).empty()) return;  // recorded failures are not issued
    switch (op.kind) {
      case trace::OpKind::open: {
        int64_t ns = 0;
        const int fd = reader_.open(AT_FDCWD, path_of(op).c_str(), &ns);
        call_end_ = now_ns();
        out_.open_latency.record(static_cast<uint64_t>(std::max<int64_t>(0, ns)));
        if (fd < 0) fail({-fd, "open", path_of(op), ""});
        else open_[op.file].push_back(fd);
        break;
      }
      case trace::OpKind::close: {
        auto it = open_.find(op.file);
        if (it == open_.end() || it->second.empty()) break;
        int64_t ns = 0;
        reader_.close(it->second.back(), &ns);
        it->second.pop_back();
        break;
      }
      case trace::OpKind::read:
        read_range(op, op.offset, op.requested ? op.requested : op.bytes, false);
        break;
      case trace::OpKind::mmap:
        for (uint64_t off = 0; off < op.requested && !interrupted(); off += kMappedChunk)
          read_range(op, op.offset + off, std::min(kMappedChunk, op.requested - off), true);
        break;
      case trace::OpKind::stat: {
        struct stat st {};
        if (::stat(path_of(op).c_str(), &st) != 0) fail({errno, "stat", path_of(op), ""});
        break;
      }
      case trace::OpKind::lseek:
      case trace::OpKind::munmap:
        break;
    }
  }

  const trace::Trace& trace_;
  const StreamPlan& sp_;
  size_t index_;
  const LayoutPlan& layout_;
  const RunOptions& opts_;
  Shared& shared_;
  RangeReader& reader_;
  const trace::Stream& stream_;
  StreamOutcome out_;
  std::map<int32_t, std::vector<int>> open_;
  int64_t call_end_ = 0;  // when the current op's last call returned (0: it made none)
  int64_t late_ns_ = 0;   // how far the gaps replayed so far overran their deadlines, not yet made up
};

}  // namespace

void wait_until(int64_t deadline_ns) {
  // A sleep ends up to the timer slack late (50 us by default; the stream threads set 1 ns) plus
  // the wake-up: the last kSpinNs are spun, so that thousands of short gaps do not add up to a
  // recorded job's worth of oversleep.
  const int64_t spin_from = deadline_ns - kSpinNs;
  if (now_ns() < spin_from) sleep_until_ns(spin_from);
  while (now_ns() < deadline_ns) {
  }
}

void burn_cpu(int64_t cpu_ns, int64_t deadline_ns) {
  const int64_t until = thread_cpu_ns() + cpu_ns;
  volatile uint64_t sink = 0;
  while (true) {
    for (int i = 0; i < 2000; ++i) sink = sink * 6364136223846793005ULL + 1442695040888963407ULL;
    if (thread_cpu_ns() >= until || now_ns() >= deadline_ns) break;
  }
}

GapCost gap_cost(GapMode mode, int64_t gap_ns, int64_t gap_cpu_ns) {
  GapCost c;
  if (gap_ns <= 0) return c;
  switch (mode) {
    case GapMode::none:
      return c;
    case GapMode::sleep:
      c.wall_ns = gap_ns;
      return c;
    case GapMode::burn:
      c.wall_ns = gap_ns;
      c.burn_ns = gap_ns;
      return c;
    case GapMode::recorded:
      c.wall_ns = gap_ns;
      c.burn_ns = gap_cpu_ns > 0 ? std::min(gap_cpu_ns, gap_ns) : 0;
      return c;
  }
  return c;
}

ReplayResult run_replay(const trace::Trace& trace, const ReplayPlan& plan, const LayoutPlan& layout,
                        const RunOptions& opts) {
  const size_t n = plan.streams.size();
  Shared shared(n);
  // Readers made before any thread starts: a refused io_uring ring fails here, named.
  std::vector<std::unique_ptr<RangeReader>> readers;
  for (size_t i = 0; i < n; ++i) readers.push_back(make_range_reader(opts.engine, opts.direct));
  std::vector<StreamOutcome> outcomes(n);
  std::vector<std::thread> threads;
  const int64_t t0 = now_ns() + 2'000'000;  // every stream starts at the same moment
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // this thread's sleeps end on time (see wait_until)
      StreamRunner runner(trace, plan, i, layout, opts, shared, *readers[i]);
      sleep_until_ns(t0);
      outcomes[i] = runner.run(t0);
    });
  {
    ProgressLine progress(opts.progress, 1.0, 10.0);
    std::atomic<bool> done{false};
    std::thread watcher([&] {
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const double el = static_cast<double>(now_ns() - t0) / 1e9;
        progress.update([&] {
          return fmt::format("replay: {} read, {} of {} ops, {:.1f} s of {:.1f} s recorded",
                             format_bytes(shared.bytes.load()), format_count(shared.ops.load()),
                             format_count(trace.op_count()), std::max(0.0, el),
                             static_cast<double>(plan.recorded_elapsed_ns) / 1e9);
        });
      }
    });
    for (auto& t : threads) t.join();
    done = true;
    watcher.join();
    progress.finish();
  }
  // Each stream's outcome is a result of its own, folded with the one merge().
  ReplayResult r;
  for (size_t i = 0; i < n; ++i) {
    ReplayResult one;
    StreamOutcome& o = outcomes[i];
    one.streams = {o.s};
    one.read_latency = o.read_latency;
    one.open_latency = o.open_latency;
    one.timeline = o.timeline;
    one.elapsed_ns = o.s.elapsed_ns;
    one.bytes = o.s.bytes;
    one.mapped_bytes = o.s.mapped_bytes;
    one.ops = o.s.ops;
    one.errors = o.errors;
    one.first_error = o.first_error;
    if (i == 0) r = std::move(one);
    else r.merge(one);
  }
  r.processes = 1;
  r.recorded_elapsed_ns = plan.recorded_elapsed_ns;
  r.partial = interrupted();
  return r;
}

}  // namespace ioprobe::replay
