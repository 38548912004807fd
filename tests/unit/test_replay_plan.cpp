// Replay stream building: events in recorded order with their gaps and gap CPU, the batch waits'
// dependencies on the workers' progress, the recorded rank each replay process takes, and how a
// gap is replayed under each --gaps mode.
#include <catch2/catch.hpp>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "replay/replay_plan.hpp"
#include "replay/replay_run.hpp"

using namespace ioprobe;
using namespace ioprobe::replay;

namespace {

trace::Op op(trace::OpKind k, int64_t t, int64_t d, int64_t cpu, int32_t f, uint64_t off = 0, uint64_t len = 0) {
  trace::Op o;
  o.kind = k;
  o.start_ns = t;
  o.dur_ns = d;
  o.gap_cpu_ns = cpu;
  o.file = f;
  o.offset = off;
  o.requested = len;
  o.bytes = len;
  return o;
}

// main (marks only) + one worker reading file 0 in two 4 KiB reads.
trace::Trace loader_trace() {
  trace::Trace t;
  t.files = {{"/data/a", 8192, true}};
  trace::Stream main;
  main.pid = main.tid = 10;
  main.role = "main";
  main.marks = {{trace::MarkKind::batch_wait_begin, 1000, 0},
                {trace::MarkKind::worker_start, 1100, 0},
                {trace::MarkKind::batch_wait_end, 5000, 0},
                {trace::MarkKind::batch_wait_begin, 8000, 1},
                {trace::MarkKind::batch_wait_end, 9000, 1}};
  trace::Stream w;
  w.pid = w.tid = 11;
  w.ppid = 10;
  w.role = "worker 0";
  w.ops = {op(trace::OpKind::open, 2000, 100, 300, 0), op(trace::OpKind::read, 2500, 1000, 200, 0, 0, 4096),
           op(trace::OpKind::read, 6000, 500, -1, 0, 4096, 4096)};
  t.streams = {main, w};
  return t;
}

}  // namespace

TEST_CASE("replay plan: events in recorded order with gaps from the previous event", "[replay]") {
  const ReplayPlan p = build_replay_plan(loader_trace(), 0);
  REQUIRE(p.streams.size() == 2);
  CHECK(p.reference_ns == 1000);
  const StreamPlan& main = p.streams[0];
  CHECK(main.main);
  REQUIRE(main.events.size() == 4);  // worker_start is no batch event
  CHECK(main.events[0].kind == EventKind::wait_begin);
  CHECK(main.events[0].gap_ns == 0);
  CHECK(main.events[2].kind == EventKind::wait_begin);
  CHECK(main.events[2].gap_ns == 3000);  // the training step: 5000 -> 8000
  const StreamPlan& w = p.streams[1];
  CHECK_FALSE(w.main);
  REQUIRE(w.events.size() == 3);
  CHECK(w.op_count == 3);
  CHECK(w.events[0].gap_ns == 1000);     // from the reference (1000) to 2000
  CHECK(w.events[0].gap_cpu_ns == 300);  // recorded CPU within it
  CHECK(w.events[1].gap_ns == 400);      // 2100 -> 2500
  CHECK(w.events[1].gap_cpu_ns == 200);
  CHECK(w.events[2].gap_ns == 2500);    // 3500 -> 6000
  CHECK(w.events[2].gap_cpu_ns == -1);  // unknown: slept under --gaps recorded
  CHECK(w.recorded_end_ns == 6500 - 1000);
  CHECK(p.recorded_elapsed_ns == 8000);  // main's last mark at 9000
  CHECK(p.gaps == 3);
  CHECK(p.gaps_without_cpu == 1);
  CHECK(p.read_bytes == 8192);
}

TEST_CASE("replay plan: a batch in hand waits for the worker's ops done by then", "[replay]") {
  const ReplayPlan p = build_replay_plan(loader_trace(), 0);
  const Event& end0 = p.streams[0].events[1];
  REQUIRE(end0.kind == EventKind::wait_end);
  REQUIRE(end0.deps.size() == 1);
  CHECK(end0.deps[0].stream == 1);
  CHECK(end0.deps[0].ops == 2);       // open and the first read ended before 5000
  CHECK(end0.gap_ns == 5000 - 3500);  // from the read's end to the batch in hand
  const Event& end1 = p.streams[0].events[3];
  REQUIRE(end1.deps.size() == 1);
  CHECK(end1.deps[0].ops == 3);
  CHECK(end1.gap_ns == 9000 - 8000);  // the request came after the worker's last read ended (6500)
}

TEST_CASE("replay plan: a stream going back in time is refused, naming it", "[replay]") {
  trace::Trace t = loader_trace();
  t.streams[1].ops[2].start_ns = 100;
  try {
    build_replay_plan(t, 0);
    FAIL("no refusal");
  } catch (const UsageError& e) {
    CHECK_THAT(e.what(), Catch::Contains("pid 11 tid 11") && Catch::Contains("op 2"));
  }
  CHECK_THROWS_AS(build_replay_plan(loader_trace(), 3), UsageError);  // no stream of rank 3
}

TEST_CASE("replay plan: each process replays its recorded rank, or clones one", "[replay]") {
  trace::Trace t = loader_trace();
  t.streams.push_back(t.streams[1]);
  t.streams.back().rank = 1;
  CHECK(recorded_ranks(t) == std::vector<int32_t>{0, 1});
  bool clone = true;
  CHECK(rank_to_replay(t, 1, &clone) == 1);
  CHECK_FALSE(clone);
  CHECK(rank_to_replay(t, 2, &clone) == 0);
  CHECK(clone);
  CHECK(rank_to_replay(t, 5, &clone) == 1);
  CHECK(clone);
  const ReplayPlan p1 = build_replay_plan(t, 1);
  REQUIRE(p1.streams.size() == 1);
  CHECK(p1.streams[0].trace_stream == 2);
}

TEST_CASE("replay gaps: recorded burns the recorded CPU and sleeps the rest", "[replay]") {
  CHECK(gap_cost(GapMode::recorded, 1000, 300).burn_ns == 300);
  CHECK(gap_cost(GapMode::recorded, 1000, 300).wall_ns == 1000);
  CHECK(gap_cost(GapMode::recorded, 1000, -1).burn_ns == 0);       // unknown CPU: all slept
  CHECK(gap_cost(GapMode::recorded, 1000, 5000).burn_ns == 1000);  // never more than the gap
  CHECK(gap_cost(GapMode::sleep, 1000, 300).burn_ns == 0);
  CHECK(gap_cost(GapMode::burn, 1000, 300).burn_ns == 1000);
  CHECK(gap_cost(GapMode::none, 1000, 300).wall_ns == 0);
  CHECK(gap_cost(GapMode::recorded, 0, 0).wall_ns == 0);
}

TEST_CASE("replay gaps: burn_cpu uses the thread's CPU time", "[replay]") {
  const int64_t c0 = thread_cpu_ns(), w0 = now_ns();
  burn_cpu(5'000'000, w0 + 2'000'000'000);
  CHECK(thread_cpu_ns() - c0 >= 5'000'000);
  const int64_t w1 = now_ns();
  burn_cpu(1'000'000'000, w1 + 2'000'000);  // the deadline ends it first
  CHECK(now_ns() - w1 < 500'000'000);
}

TEST_CASE("replay plan: ops not issued fold their gap and CPU into the next op's", "[replay]") {
  trace::Trace t;
  t.files = {{"/data/a", 8192, true}};
  trace::Stream s;
  s.pid = s.tid = 1;
  trace::Op failed = op(trace::OpKind::open, 3000, 100, 40, 0);
  failed.error = 2;
  s.ops = {op(trace::OpKind::open, 0, 100, 10, 0), op(trace::OpKind::lseek, 1000, 50, 300, 0, 4096), failed,
           op(trace::OpKind::read, 5000, 500, 600, 0, 4096, 4096)};
  t.streams = {s};
  const ReplayPlan p = build_replay_plan(t, 0);
  const auto& ev = p.streams[0].events;
  REQUIRE(ev.size() == 4);
  CHECK(ev[1].gap_ns == 0);  // the lseek and the failed open wait nothing of their own
  CHECK(ev[2].gap_ns == 0);
  CHECK(ev[3].gap_ns == 5000 - 100);          // from the open's end, their time included
  CHECK(ev[3].gap_cpu_ns == 300 + 40 + 600);  // and their gaps' CPU
  CHECK(p.gaps == 1);
  CHECK(p.streams[0].recorded_end_ns == 5500);
}

namespace {

// The DataLoader's marks over two epochs of two batches each: each epoch ends with a next() that
// raises StopIteration after its workers shut down (10,000 ns), marked begin, end, epoch_end.
trace::Trace two_epochs() {
  using K = trace::MarkKind;
  trace::Trace t;
  trace::Stream main;
  main.pid = main.tid = 10;
  main.role = "main";
  main.marks = {{K::epoch_begin, 0, 0},          {K::batch_wait_begin, 100, 0},   {K::batch_wait_end, 1100, 0},
                {K::batch_wait_begin, 2100, 1},  {K::batch_wait_end, 2600, 1},    {K::batch_wait_begin, 3600, 2},
                {K::batch_wait_end, 13600, 2},   {K::epoch_end, 13600, 0},        {K::epoch_begin, 14000, 1},
                {K::batch_wait_begin, 15000, 2}, {K::batch_wait_end, 15500, 2},   {K::batch_wait_begin, 16500, 3},
                {K::batch_wait_end, 17000, 3},   {K::batch_wait_begin, 18000, 4}, {K::batch_wait_end, 28000, 4},
                {K::epoch_end, 28000, 1}};
  t.streams = {main};
  return t;
}

}  // namespace

TEST_CASE("replay plan: the next() that ends an epoch delivers no batch", "[replay]") {
  const ReplayPlan p = build_replay_plan(two_epochs(), 0);
  REQUIRE(p.streams.size() == 1);
  const auto& ev = p.streams[0].events;
  size_t begins = 0, ends = 0, none = 0;
  for (const auto& e : ev) {
    begins += e.kind == EventKind::wait_begin;
    ends += e.kind == EventKind::wait_end;
    none += e.no_batch;
  }
  CHECK(begins == 6);
  CHECK(ends == 4);  // the StopIteration calls' ends are dropped
  CHECK(none == 2);
  REQUIRE(ev.size() == 10);
  CHECK(ev[4].kind == EventKind::wait_begin);
  CHECK(ev[4].no_batch);
  CHECK(ev[4].t_ns == 3600);
  CHECK(ev[5].kind == EventKind::wait_begin);  // the next epoch's first batch
  CHECK_FALSE(ev[5].no_batch);
  // A batch_wait_begin with no batch_wait_end after it (the job ended in the call) is none either.
  trace::Trace cut = two_epochs();
  cut.streams[0].marks.resize(14);
  const ReplayPlan pc = build_replay_plan(cut, 0);
  CHECK(pc.streams[0].events.back().kind == EventKind::wait_begin);
  CHECK(pc.streams[0].events.back().no_batch);
}

TEST_CASE("replay run: AU counts the batches delivered, not the epochs' last next()", "[replay]") {
  const trace::Trace t = two_epochs();
  RunOptions ro;
  ro.gaps = GapMode::none;
  const ReplayResult r = run_replay(t, build_replay_plan(t, 0), LayoutPlan{}, ro);
  CHECK(r.timeline.batches == 4);
  CHECK(r.timeline.recorded_wait_ns == 1000 + 500 + 500 + 500);
  CHECK(r.timeline.recorded_step_ns == 1000 + 1000 + 1000 + 1000);  // each batch's step, none across epochs
  CHECK(r.timeline.recorded_au() == Approx(4000.0 / 6500.0));
}
