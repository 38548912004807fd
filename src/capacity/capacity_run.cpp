#include "capacity/capacity_run.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/error_record.hpp"
#include "core/interrupt.hpp"
#include "ingest/analysis.hpp"
#include "loader/loader_run.hpp"
#include "tune/sweep.hpp"
#include "tune/tune_run.hpp"

namespace ioprobe {

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace

RepeatSample repeat_sample(const LoaderResult& r, const LoaderConfig& c, int cpus_allowed,
                           uint64_t min_steady_samples) {
  const TuneSample t = steady_sample(r, c.ranks, min_steady_samples, c.step_time_s, c.batch_size);
  RepeatSample s;
  s.samples_per_s = t.samples_per_s;
  s.bytes_per_s = t.bytes_per_s;
  s.au = t.au;
  s.au_min = t.au_min;
  s.steady = t.steady && t.from_completions;
  if (!t.from_completions) {
    // No completion times to divide by (a rank had fewer than two batches in the window): the
    // whole run's figures, never whole batches counted per interval.
    const double el = static_cast<double>(r.elapsed_ns) / 1e9;
    s.samples_per_s = el > 0 ? static_cast<double>(r.samples) / el : 0;
    s.bytes_per_s = el > 0 ? static_cast<double>(r.bytes) / el : 0;
    double sum = 0, lo = 1;
    for (const auto& rk : r.ranks) {
      sum += rank_accelerator_utilization(rk);
      lo = std::min(lo, rank_accelerator_utilization(rk));
    }
    s.au = r.ranks.empty() ? 0 : sum / static_cast<double>(r.ranks.size());
    s.au_min = r.ranks.empty() ? 0 : lo;
  }
  s.bytes = r.bytes;
  s.cpu_fraction = t.cpu_used / std::max(1, cpus_allowed);
  double elapsed = 0, lag = 0;
  for (const auto& rk : r.ranks) {
    elapsed += static_cast<double>(rk.elapsed_ns);
    lag += std::max<double>(0, static_cast<double>(rk.elapsed_ns - rk.wait_ns - rk.nominal_compute_ns));
  }
  s.consumer_lag = elapsed > 0 ? lag / elapsed : 0;
  uint64_t decoded = 0;
  int64_t decode_ns = 0;
  for (const auto& w : r.workers) {
    decoded += w.decoded + w.decode_errors;
    decode_ns += w.decode_cpu_ns;
  }
  s.decode_us_per_sample = decoded ? static_cast<double>(decode_ns) / 1e3 / static_cast<double>(decoded) : 0;
  const double file_ns = r.file_latency.mean() * static_cast<double>(r.file_latency.count());
  const double open_ns = r.open_latency.mean() * static_cast<double>(r.open_latency.count());
  s.open_share = file_ns > 0 ? open_ns / file_ns : 0;
  const WorkerLoad load = worker_load(r);
  s.worker_busy = load.busy;
  s.worker_cpu_share = load.cpu_share;
  s.worker_runq_share = load.runq_share;
  return s;
}

std::vector<std::string> client_notes(double cpu_fraction, double consumer_lag, double runq_share) {
  std::vector<std::string> notes;
  if (runq_share >= kCpuStarvedShare)
    notes.push_back(fmt::format("its workers waited for a CPU {:.0f}% of the time they had work (other processes "
                                "took the host's CPUs)",
                                runq_share * 100));
  if (cpu_fraction >= kClientCpuSaturated)
    notes.push_back(fmt::format("the process used {:.0f}% of its allowed CPUs", cpu_fraction * 100));
  if (consumer_lag >= kClientLagMax)
    notes.push_back(
        fmt::format("the emulated GPUs' threads overran their steps by {:.0f}% of their time", consumer_lag * 100));
  return notes;
}

CapacityPoint summarize_repeats(uint32_t gpus, const std::vector<RepeatSample>& runs,
                                const std::vector<CapacityHostRow>* hosts) {
  CapacityPoint p;
  p.gpus = gpus;
  p.repeats = static_cast<uint32_t>(runs.size());
  if (runs.empty()) return p;
  std::vector<double> sps, bps, au, cpu, lag, open, decode, wbusy, wcpu, wrunq;
  p.au_min = 1;
  for (const auto& r : runs) {
    sps.push_back(r.samples_per_s);
    bps.push_back(r.bytes_per_s);
    au.push_back(r.au);
    cpu.push_back(r.cpu_fraction);
    lag.push_back(r.consumer_lag);
    open.push_back(r.open_share);
    decode.push_back(r.decode_us_per_sample);
    wbusy.push_back(r.worker_busy);
    wcpu.push_back(r.worker_cpu_share);
    wrunq.push_back(r.worker_runq_share);
    p.au_min = std::min(p.au_min, r.au_min);
    p.delivered_bytes += r.bytes;
    p.steady = p.steady && r.steady;
  }
  p.samples_per_s = median(sps);
  p.bytes_per_s = median(bps);
  p.au = median(au);
  p.cpu_fraction = median(cpu);
  p.consumer_lag = median(lag);
  p.decode_us_per_sample = median(decode);
  p.worker_runq_share = std::any_of(wrunq.begin(), wrunq.end(), [](double x) { return x < 0; }) ? -1 : median(wrunq);
  const auto [mn, mx] = std::minmax_element(sps.begin(), sps.end());
  p.spread = p.samples_per_s > 0 ? (*mx - *mn) / p.samples_per_s : 0;
  std::vector<std::string> notes;
  if (hosts) {
    p.hosts = *hosts;
    for (const auto& h : *hosts) {
      if (!h.client_bound) continue;
      if (p.client_host.empty()) p.client_host = h.hostname;
      notes.push_back(fmt::format("on host {}: {}", h.hostname, h.note));
    }
  } else {
    notes = client_notes(p.cpu_fraction, p.consumer_lag, p.worker_runq_share);
  }
  p.client_bound = !notes.empty();
  const WorkerLoad load{median(wbusy), median(wcpu)};
  p.workers_bound = !p.client_bound && (workers_bound(load) || feeder_bound(load));
  if (p.workers_bound)
    notes.push_back(fmt::format("the workers fetched {:.0f}% of the time, {:.0f}% of it per-sample CPU work",
                                load.busy * 100, load.cpu_share * 100));
  p.metadata_bound = !p.client_bound && !p.workers_bound && median(open) >= 0.5;
  if (p.metadata_bound) notes.push_back(fmt::format("open+close took {:.0f}% of each file's time", median(open) * 100));
  if (!p.steady) notes.emplace_back("a repeat had no steady window (too few batches); lengthen the points");
  for (const auto& n : notes) p.note += (p.note.empty() ? "" : "; ") + n;
  return p;
}

double point_run_s(double point_s, double step_time_s) {
  return lengthened_run_s(point_s, step_time_s, kMinStepsPerPoint);
}

double point_need_s(uint32_t repeats, double point_s, double step_time_s) {
  return repeats * (point_run_s(point_s, step_time_s) + kRunOverheadS);
}

LoaderConfig repeat_config(const LoaderConfig& base, uint32_t ranks, uint32_t world_ranks, uint32_t first_rank,
                           double run_s, uint32_t repeat) {
  LoaderConfig c = timed_run_config(base, run_s, repeat);
  c.ranks = ranks;
  c.world_ranks = world_ranks;
  c.first_rank = first_rank;
  return c;
}

std::string lengthened_note(double run_s, double point_s, double step_time_s) {
  if (run_s <= point_s) return "";
  return fmt::format("runs lengthened to {:.1f} s ({} GPU steps of {:.3f} s after {:.0f} s of warm-up)", run_s,
                     kMinStepsPerPoint, step_time_s, kMinWarmupS);
}

std::optional<CapacityPoint> measure_point(const FileIndex& index, const LoaderConfig& base, uint32_t gpus,
                                           const PointRunOptions& o, const Topology& topo, const RecordLayout* layout,
                                           const RepeatDoneFn& done) {
  // Long enough for every rank to complete several steps after the warm-up: a point whose window
  // holds one or two batches per rank has no rate between completions.
  const double run_s = point_run_s(o.point_s, base.step_time_s);
  const double need_s = point_need_s(o.repeats, o.point_s, base.step_time_s);
  if (interrupted() || (o.deadline_ns && now_ns() + static_cast<int64_t>(need_s * 1e9) > o.deadline_ns))
    return std::nullopt;
  std::vector<RepeatSample> runs;
  for (uint32_t rep = 0; rep < o.repeats; ++rep) {
    const LoaderConfig c = repeat_config(base, gpus, 0, 0, run_s, rep);
    if (o.before_repeat) o.before_repeat(gpus, rep);
    LoaderResult r = run_loader(index, c, nullptr, &topo, layout);
    if (interrupted()) return std::nullopt;
    if (r.stopped_on_errors || (r.samples == 0 && r.errors > 0))
      throw Error(fmt::format("{} GPU ranks: reads failed ({}; first: {}); the capacity search stops, as its rates "
                              "would measure the failure",
                              gpus, to_string(r.stop),
                              r.error_samples.empty() ? "?" : error_line(r.error_samples.front())),
                  kExitFailure);
    // A window with three batches per rank gives every rank two intervals between completions.
    const uint64_t min_steady = uint64_t{3} * c.ranks * c.batch_size;
    runs.push_back(repeat_sample(r, c, o.cpus_allowed, min_steady));
    if (done) done(gpus, rep, runs.back());
  }
  CapacityPoint p = summarize_repeats(gpus, runs);
  const std::string longer = lengthened_note(run_s, o.point_s, base.step_time_s);
  if (!longer.empty()) p.note += (p.note.empty() ? "" : "; ") + longer;
  return p;
}

}  // namespace ioprobe
