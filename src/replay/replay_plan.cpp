#include "replay/replay_plan.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe::replay {

const char* gap_mode_name(GapMode m) {
  switch (m) {
    case GapMode::recorded:
      return "recorded";
    case GapMode::sleep:
      return "sleep";
    case GapMode::burn:
      return "burn";
    case GapMode::none:
      return "none";
  }
  return "?";
}

std::vector<int32_t> recorded_ranks(const trace::Trace& trace) {
  std::set<int32_t> ranks;
  for (const auto& s : trace.streams) ranks.insert(s.rank);
  if (ranks.empty()) ranks.insert(0);
  return {ranks.begin(), ranks.end()};
}

int32_t rank_to_replay(const trace::Trace& trace, int rank, bool* clone) {
  const std::vector<int32_t> ranks = recorded_ranks(trace);
  if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) {
    *clone = false;
    return rank;
  }
  *clone = true;
  return ranks[static_cast<size_t>(rank) % ranks.size()];
}

namespace {

bool is_batch_mark(const trace::Mark& m) {
  return m.kind == trace::MarkKind::batch_wait_begin || m.kind == trace::MarkKind::batch_wait_end;
}

// An op the replay does not issue: positions (reads are positioned), unmaps, and calls that
// failed in the recording.
bool is_free(const trace::Op& op) {
  return op.kind == trace::OpKind::lseek || op.kind == trace::OpKind::munmap || op.error != 0;
}

// For each mark of `marks` (in time order): whether it is dropped (the batch_wait_end of a call
// that delivered no batch), and whether it is a batch_wait_begin that delivered none.
void find_no_batch(const std::vector<trace::Mark>& marks, std::vector<bool>* dropped, std::vector<bool>* no_batch) {
  dropped->assign(marks.size(), false);
  no_batch->assign(marks.size(), false);
  // The next mark after `i` that is a batch mark or epoch_end (marks.size() when none).
  auto next_of = [&](size_t i) {
    for (size_t j = i + 1; j < marks.size(); ++j)
      if (is_batch_mark(marks[j]) || marks[j].kind == trace::MarkKind::epoch_end) return j;
    return marks.size();
  };
  for (size_t i = 0; i < marks.size(); ++i) {
    if (marks[i].kind != trace::MarkKind::batch_wait_begin) continue;
    const size_t end = next_of(i);
    if (end == marks.size() || marks[end].kind != trace::MarkKind::batch_wait_end) {
      (*no_batch)[i] = true;
      continue;
    }
    const size_t after = next_of(end);
    if (after < marks.size() && marks[after].kind == trace::MarkKind::epoch_end) {
      (*no_batch)[i] = true;
      (*dropped)[end] = true;
    }
  }
}

std::string stream_name(const trace::Stream& s) {
  return fmt::format("stream pid {} tid {} ({})", s.pid, s.tid, s.role.empty() ? "no role" : s.role);
}

}  // namespace

ReplayPlan build_replay_plan(const trace::Trace& trace, int32_t rank) {
  ReplayPlan plan;
  int64_t reference = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < trace.streams.size(); ++i) {
    const trace::Stream& s = trace.streams[i];
    if (s.rank != rank) continue;
    const bool has_marks = std::any_of(s.marks.begin(), s.marks.end(), is_batch_mark);
    if (s.ops.empty() && !has_marks) continue;
    StreamPlan sp;
    sp.trace_stream = i;
    sp.rank = rank;
    sp.main = has_marks;
    for (size_t k = 0; k < s.ops.size(); ++k) {
      if (k > 0 && s.ops[k].start_ns < s.ops[k - 1].start_ns)
        throw UsageError(fmt::format("trace: {}: op {} starts at {} ns, before op {} at {} ns; a stream's ops must "
                                     "be in start order",
                                     stream_name(s), k, s.ops[k].start_ns, k - 1, s.ops[k - 1].start_ns));
      if (s.ops[k].start_ns < 0 || s.ops[k].dur_ns < 0)
        throw UsageError(fmt::format("trace: {}: op {} has a negative time or duration", stream_name(s), k));
    }
    std::vector<bool> dropped, no_batch;
    find_no_batch(s.marks, &dropped, &no_batch);
    // Ops and batch marks merged in time order (an op first at equal times).
    size_t oi = 0, mi = 0;
    while (oi < s.ops.size() || mi < s.marks.size()) {
      if (mi < s.marks.size() && (!is_batch_mark(s.marks[mi]) || dropped[mi])) {
        ++mi;
        continue;
      }
      const bool take_op = mi >= s.marks.size() || (oi < s.ops.size() && s.ops[oi].start_ns <= s.marks[mi].t_ns);
      Event e;
      if (take_op) {
        e.kind = EventKind::op;
        e.t_ns = s.ops[oi].start_ns;
        e.op = static_cast<uint32_t>(oi++);
        ++sp.op_count;
      } else {
        e.no_batch = no_batch[mi];
        const trace::Mark& m = s.marks[mi++];
        e.kind = m.kind == trace::MarkKind::batch_wait_begin ? EventKind::wait_begin : EventKind::wait_end;
        e.t_ns = m.t_ns;
        e.batch = m.batch;
      }
      sp.events.push_back(std::move(e));
    }
    if (!sp.events.empty()) reference = std::min(reference, sp.events.front().t_ns);
    plan.streams.push_back(std::move(sp));
  }
  if (plan.streams.empty())
    throw UsageError(fmt::format("trace: recorded rank {} has no stream with ops or batch marks to replay", rank));
  plan.reference_ns = reference;

  // A batch in hand waits for the other streams' progress at the recorded moment.
  std::vector<std::vector<int64_t>> ends(plan.streams.size());
  for (size_t j = 0; j < plan.streams.size(); ++j) {
    for (const auto& op : trace.streams[plan.streams[j].trace_stream].ops) ends[j].push_back(op.start_ns + op.dur_ns);
    std::sort(ends[j].begin(), ends[j].end());
  }
  for (size_t i = 0; i < plan.streams.size(); ++i)
    for (auto& e : plan.streams[i].events) {
      if (e.kind != EventKind::wait_end) continue;
      for (size_t j = 0; j < plan.streams.size(); ++j) {
        if (j == i) continue;
        const uint64_t done = static_cast<uint64_t>(std::upper_bound(ends[j].begin(), ends[j].end(), e.t_ns) -
                                                    ends[j].begin());
        if (done) e.deps.push_back({static_cast<uint32_t>(j), done});
      }
    }
  // Gaps, from each stream's previous event (the first from the common reference).
  for (auto& sp : plan.streams) {
    const trace::Stream& s = trace.streams[sp.trace_stream];
    int64_t prev_end = reference;
    int64_t last_end = reference;  // end of the stream's last event, free ops included
    int64_t carry_cpu = 0;         // recorded CPU of the free ops' gaps since the last costly event (-1 unknown)
    for (auto& e : sp.events) {
      e.gap_ns = std::max<int64_t>(0, e.t_ns - prev_end);
      if (e.kind == EventKind::op) {
        const trace::Op& op = s.ops[e.op];
        int64_t cpu = op.gap_cpu_ns >= 0 && carry_cpu >= 0 ? op.gap_cpu_ns + carry_cpu : -1;
        if (op.kind == trace::OpKind::read && op.error == 0) plan.read_bytes += op.bytes;
        if (op.kind == trace::OpKind::mmap && op.error == 0) plan.mapped_bytes += op.requested;
        if (is_free(op)) {
          // Nothing to issue: its gap and its duration are replayed with the next event's gap.
          carry_cpu = cpu;
          e.gap_ns = 0;
          e.gap_cpu_ns = 0;
          last_end = std::max(last_end, op.start_ns + op.dur_ns);
          continue;
        }
        carry_cpu = 0;
        e.gap_cpu_ns = cpu >= 0 ? std::min(cpu, e.gap_ns) : -1;
        if (e.gap_ns > 0) {
          ++plan.gaps;
          if (e.gap_cpu_ns < 0) ++plan.gaps_without_cpu;
        }
        prev_end = std::max(prev_end, op.start_ns + op.dur_ns);
      } else if (e.kind == EventKind::wait_end) {
        // After its dependencies: the recorded time from the later of this stream's previous
        // event and the workers' last needed op to the batch in hand (collate, transfer).
        int64_t base = prev_end;
        for (const auto& d : e.deps) base = std::max(base, ends[d.stream][d.ops - 1]);
        e.gap_ns = std::max<int64_t>(0, e.t_ns - base);
        prev_end = std::max(prev_end, e.t_ns);
      } else {
        prev_end = std::max(prev_end, e.t_ns);
      }
    }
    sp.recorded_end_ns = std::max(last_end, prev_end) - reference;
    plan.recorded_elapsed_ns = std::max(plan.recorded_elapsed_ns, sp.recorded_end_ns);
  }

  return plan;
}

}  // namespace ioprobe::replay
