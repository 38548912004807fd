#include "ingest/calibration_effect.hpp"

#include <algorithm>

#include "loader/worker_costs.hpp"

namespace ioprobe {

namespace {

// The lowest positive bound of `c` into samples_per_s and bound.
void take_lowest(CpuCeiling& c) {
  const std::pair<double, const char*> parts[] = {{c.workers_samples_per_s, "workers"},
                                                  {c.gil_samples_per_s, "GIL"},
                                                  {c.main_samples_per_s, "main process"},
                                                  {c.cpus_samples_per_s, "CPUs"}};
  for (const auto& [v, name] : parts)
    if (v > 0 && (c.samples_per_s <= 0 || v < c.samples_per_s)) {
      c.samples_per_s = v;
      c.bound = name;
    }
}

}  // namespace

CpuCeiling modelled_cpu_ceiling(const LoaderConfig& l) {
  WorkerCosts w = l.costs.worker;
  if (!l.costs.worker_curve.empty()) {
    try {
      w = worker_costs_for(l).costs;
    } catch (const std::exception&) {  // a malformed curve: the figures as they stand
    }
  }
  const double loop = std::max(0.0, w.loop_us);
  const double put = std::max(0.0, w.put_us);
  const double other = std::max(0.0, w.other_us);
  const double share = std::clamp(l.costs.put_gil_share, 0.0, 1.0);
  CpuCeiling c;
  c.worker_us_per_sample = l.costs.python_gil ? loop + put * share + other : std::max({loop, put, other});
  const double main_per_sample = l.batch_size > 0 ? std::max(0.0, l.costs.main_cpu_per_batch_us) / l.batch_size : 0;
  c.cpu_us_per_sample = loop + put + other + main_per_sample;
  const double ranks = std::max<uint32_t>(1, l.ranks);
  if (c.worker_us_per_sample > 0 && l.num_workers > 0)
    c.workers_samples_per_s = ranks * l.num_workers * 1e6 / c.worker_us_per_sample;
  // A thread pipeline's threads hold one lock for loop_gil_share of each sample's CPU: however many
  // threads, a rank's process delivers at most 1e6 / (loop x share) samples/s.
  const double loop_share = std::clamp(l.costs.loop_gil_share, 0.0, 1.0);
  if (l.costs.python_gil && l.costs.threads_share_gil && loop * loop_share > 0)
    c.gil_samples_per_s = ranks * 1e6 / (loop * loop_share);
  if (main_per_sample > 0) c.main_samples_per_s = ranks * 1e6 / main_per_sample;
  if (c.cpu_us_per_sample > 0) c.cpus_samples_per_s = loader_cpus(l) * 1e6 / c.cpu_us_per_sample;
  take_lowest(c);
  return c;
}

LoaderConfig without_calibration(LoaderConfig l) {
  l.costs = LoaderCosts{};
  return l;
}

CalibrationEffect calibration_effect(const LoaderConfig& l) {
  CalibrationEffect e;
  e.ranks = std::max<uint32_t>(1, l.ranks);
  e.num_workers = l.num_workers;
  e.batch_size = l.batch_size;
  e.cpus = loader_cpus(l);
  e.calibrated = modelled_cpu_ceiling(l);
  e.uncalibrated = modelled_cpu_ceiling(without_calibration(l));
  return e;
}

}  // namespace ioprobe
