#include "tune/tune_run.hpp"

#include "ingest/analysis.hpp"

#include <algorithm>

#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "stats/timeline.hpp"

namespace ioprobe {

namespace {

// Rates and AU from the deliveries of each rank inside [w0, w1) (ns since the start); false when
// a rank has fewer than two batches there (no time between completions to divide by).
bool completion_rates(const LoaderResult& r, int64_t w0, int64_t w1, double step_time_s, uint32_t batch_size,
                      TuneSample& s) {
  if (r.ranks.empty()) return false;
  double sps = 0, bps = 0, au_sum = 0, au_min = 1;
  uint64_t in_window = 0;
  for (const auto& rk : r.ranks) {
    const Delivery* first = nullptr;
    const Delivery* last = nullptr;
    uint64_t samples = 0, bytes = 0, deliveries_in = 0;
    double nominal_s = 0, wait_s = 0, prev_step_s = 0;
    for (const auto& d : rk.deliveries) {
      if (d.t_ns < w0 || d.t_ns >= w1) continue;
      in_window += d.samples;
      ++deliveries_in;
      const double share = batch_size > 0 ? std::min(1.0, static_cast<double>(d.samples) / batch_size) : 1.0;
      if (first) {
        samples += d.samples;
        bytes += d.bytes;
        wait_s += static_cast<double>(d.wait_ns) / 1e9;
        nominal_s += prev_step_s;  // the step of the batch before this one ran before this wait
      } else {
        first = &d;
      }
      prev_step_s = step_time_s * share;
      last = &d;
    }
    if (!first || first == last || last->t_ns <= first->t_ns) return false;
    double span = static_cast<double>(last->t_ns - first->t_ns) / 1e9;
    // A rank still waiting when the window closed: the stall after its last batch counts. Without
    // it, a burst of batches that all workers finished together, then nothing until the end,
    // read as AU ~100% at the demanded rate (capacity called 16 GPUs fed at 1,113 of 2,400
    // samples/s). The next batch is overdue once the time since the last one exceeds both that
    // batch's step and the rank's mean gap between batches (e); the overdue time is added to the
    // rate's span, and the AU counts the last step over the time from the first batch to the
    // window's end. Both equal the unextended figures at the time e, so a loader that keeps its
    // pace is not moved by where the window happens to end.
    const double tail_s = static_cast<double>(w1 - last->t_ns) / 1e9;
    const double gap_s = span / static_cast<double>(std::max<uint64_t>(1, deliveries_in - 1));
    const double due_s = std::max(gap_s, prev_step_s);
    double rate_span = span;
    if (tail_s > due_s) {
      rate_span += tail_s - due_s;
      wait_s += tail_s - due_s;
      if (step_time_s > 0) {
        nominal_s += prev_step_s;  // the last batch's step ran inside the window
        span += tail_s;
      } else {
        span += tail_s - due_s;
      }
    }
    sps += static_cast<double>(samples) / rate_span;
    bps += static_cast<double>(bytes) / rate_span;
    const double au = std::clamp(step_time_s > 0 ? nominal_s / span : 1.0 - wait_s / span, 0.0, 1.0);
    au_sum += au;
    au_min = std::min(au_min, au);
  }
  s.samples_per_s = sps;
  s.bytes_per_s = bps;
  s.au = au_sum / static_cast<double>(r.ranks.size());
  s.au_min = au_min;
  s.steady_samples = in_window;
  s.from_completions = true;
  return true;
}

}  // namespace

TuneSample steady_sample(const LoaderResult& r, uint32_t ranks, uint64_t min_steady_samples, double step_time_s,
                         uint32_t batch_size) {
  TuneSample s;
  s.elapsed_s = static_cast<double>(r.elapsed_ns) / 1e9;
  s.cpu_used = s.elapsed_s > 0 ? (r.cpu_user_s + r.cpu_sys_s) / s.elapsed_s : 0;
  double busy = 0;
  for (const auto& w : r.workers) busy += static_cast<double>(w.busy_ns);
  double wt = static_cast<double>(r.elapsed_ns) * static_cast<double>(std::max<size_t>(1, r.workers.size()));
  s.worker_busy = wt > 0 ? std::min(1.0, busy / wt) : 0;

  Timeline merged(r.ranks.empty() ? 1.0 : r.ranks.front().timeline.interval_s());
  for (const auto& rk : r.ranks) merged.merge(rk.timeline);
  const auto& pts = merged.points();
  s.intervals = pts.size();
  if (pts.size() >= kSteadyMinIntervals) {
    const int64_t w0 = merged.interval_ns(), w1 = merged.interval_ns() * static_cast<int64_t>(pts.size() - 1);
    if (!completion_rates(r, w0, w1, step_time_s, batch_size, s)) {
      uint64_t samples = 0, bytes = 0;
      double wait = 0;
      for (size_t i = 1; i + 1 < pts.size(); ++i) {
        samples += pts[i].samples;
        bytes += pts[i].bytes;
        wait += pts[i].wait_s;
      }
      const double span = merged.interval_s() * static_cast<double>(pts.size() - 2);
      s.samples_per_s = static_cast<double>(samples) / span;
      s.bytes_per_s = static_cast<double>(bytes) / span;
      s.au = s.au_min = std::clamp(1.0 - wait / (span * std::max<uint32_t>(1, ranks)), 0.0, 1.0);
      s.steady_samples = samples;
    }
    s.steady = s.steady_samples > 0 && s.steady_samples >= min_steady_samples;
    return s;
  }
  if (s.elapsed_s > 0) {
    s.samples_per_s = static_cast<double>(r.samples) / s.elapsed_s;
    s.bytes_per_s = static_cast<double>(r.bytes) / s.elapsed_s;
  }
  double au = 0, au_min = 1;
  for (const auto& rk : r.ranks) {
    au += rank_accelerator_utilization(rk);
    au_min = std::min(au_min, rank_accelerator_utilization(rk));
  }
  s.au = r.ranks.empty() ? 0 : au / static_cast<double>(r.ranks.size());
  s.au_min = r.ranks.empty() ? 0 : au_min;
  return s;
}

LoaderConfig timed_run_config(const LoaderConfig& base, double run_s, uint32_t repeat) {
  LoaderConfig c = base;
  c.duration_s = run_s;
  c.epochs = kMaxEpochs;  // the duration ends each run
  c.seed = base.seed + repeat;
  c.timeline_interval_s = kTuneIntervalS;
  c.record_deliveries = true;
  return c;
}

LoaderConfig setting_run_config(const LoaderConfig& base, const TunePoint& p, double run_s, uint32_t repeat) {
  LoaderConfig c = timed_run_config(base, run_s, repeat);
  c.num_workers = p.num_workers;
  c.prefetch_factor = p.prefetch_factor;
  c.placement = parse_placement(p.numa);
  return c;
}

TuneOutcome run_sweep(const FileIndex& index, const LoaderConfig& base, SweepPlan& plan, const Topology& topo,
                      int64_t deadline_ns, const TuneProgressFn& progress, const RecordLayout* layout,
                      const SweepAcross& across) {
  TuneOutcome out;
  const int64_t start = now_ns();
  const size_t runs = plan.points.size() * plan.repeats;
  double best_rate = -1;
  for (uint32_t rep = 0; rep < plan.repeats && !out.partial; ++rep) {
    for (size_t i = 0; i < plan.points.size(); ++i) {
      const double run_s = plan.points[i].run_s > 0 ? plan.points[i].run_s : plan.run_s;  // lengthen_runs
      int stop = interrupted() ? 2 : deadline_ns && now_ns() + static_cast<int64_t>(run_s * 1e9) > deadline_ns ? 1 : 0;
      if (across.agree_stop) stop = across.agree_stop(stop);
      if (stop) {
        out.partial = true;
        out.stop.kind = stop == 2 ? TuneStopKind::kInterrupted : TuneStopKind::kBudget;
        break;
      }
      TunePoint& p = plan.points[i];
      p.pin_memory = base.pin_memory;  // what this setting's runs measure, recorded for the recommendation
      const LoaderConfig c = setting_run_config(base, p, run_s, rep);
      if (progress) progress(out.runs_done, runs, p, rep, nullptr);
      LoaderResult r = run_loader(index, c, nullptr, &topo, layout, across.sync);
      if (across.merge) r = across.merge(r);
      if (interrupted() || r.partial) {
        out.partial = true;
        out.stop = tune_stop_of_run(r.stop);
        break;  // a run cut short by a signal is not a measurement of its setting
      }
      // A merged run holds every process's GPU ranks.
      const uint32_t ranks = std::max<uint32_t>(c.ranks, static_cast<uint32_t>(r.ranks.size()));
      const uint64_t min_steady = uint64_t{kSteadyBatchesPerWorker} * c.num_workers * ranks * c.batch_size;
      TuneSample s = steady_sample(r, ranks, min_steady, c.step_time_s, c.batch_size);
      p.runs.push_back(s);
      summarize_point(p);
      ++out.runs_done;
      if (progress) progress(out.runs_done, runs, p, rep, &s);
      if (s.samples_per_s > best_rate) {
        best_rate = s.samples_per_s;
        out.best_run = std::move(r);
        out.best_point = i;
      }
    }
  }
  out.elapsed_s = static_cast<double>(now_ns() - start) / 1e9;
  return out;
}

}  // namespace ioprobe
