#include "tune/recommend.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace ioprobe {

namespace {

double tolerance_of(const TunePoint& p) { return std::clamp(p.spread, 0.05, 0.25); }

// Best samples/s over prefetch_factor for each num_workers: worker count -> point index.
std::map<uint32_t, size_t> curve(const std::vector<TunePoint>& t, const std::vector<size_t>& idx) {
  std::map<uint32_t, size_t> c;
  for (size_t i : idx) {
    auto it = c.find(t[i].num_workers);
    if (it == c.end() || t[i].samples_per_s > t[it->second].samples_per_s) c[t[i].num_workers] = i;
  }
  return c;
}

size_t best_of(const std::vector<TunePoint>& t, const std::vector<size_t>& idx) {
  size_t b = idx.front();
  for (size_t i : idx)
    if (t[i].samples_per_s > t[b].samples_per_s) b = i;
  return b;
}

int node_of(const std::string& numa) { return numa.rfind("node:", 0) == 0 ? std::stoi(numa.substr(5)) : -1; }

}  // namespace

size_t find_knee(const std::vector<TunePoint>& table, const std::vector<size_t>& idx, double* tolerance) {
  size_t b = best_of(table, idx);
  double tol = tolerance_of(table[b]);
  if (tolerance) *tolerance = tol;
  for (const auto& [w, i] : curve(table, idx))
    if (table[i].samples_per_s >= (1 - tol) * table[b].samples_per_s) {
      // The smallest prefetch_factor at this worker count that is also within the tolerance.
      size_t k = i;
      for (size_t j : idx)
        if (table[j].num_workers == w && table[j].samples_per_s >= (1 - tol) * table[b].samples_per_s &&
            table[j].prefetch_factor < table[k].prefetch_factor)
          k = j;
      return k;
    }
  return b;
}

Recommendation recommend(const std::vector<TunePoint>& table, const RecommendInputs& in, const Topology& topo) {
  Recommendation r;
  std::map<std::string, std::vector<size_t>> by_numa;
  for (size_t i = 0; i < table.size(); ++i)
    if (table[i].steady_runs > 0) by_numa[table[i].numa].push_back(i);
  for (const auto& p : table)
    if (!p.runs.empty() && p.steady_runs == 0) {
      // Name the condition that failed: too short a run for a steady window, or too few batches in it.
      size_t short_runs = 0;
      for (const auto& s : p.runs) short_runs += s.intervals < kSteadyMinIntervals;
      const std::string too_short = fmt::format(
          "fewer than {} timeline intervals of {} s, so none between the warm-up interval and the cut-short last one",
          kSteadyMinIntervals, kTuneIntervalS);
      const std::string too_few = fmt::format("fewer than {} batches per worker between the warm-up interval and the "
                                              "last one",
                                              kSteadyBatchesPerWorker);
      const std::string why = short_runs == p.runs.size() ? too_short
                              : short_runs == 0           ? too_few
                                                : fmt::format("{} run(s) with {}; {} with {}", short_runs, too_short,
                                                              p.runs.size() - short_runs, too_few);
      r.notes.push_back(fmt::format(
          "num_workers={} prefetch_factor={} numa={}: no steady state in any of its {} runs ({}); left out of the "
          "recommendation: raise --point-time or --budget",
          p.num_workers, p.prefetch_factor, p.numa, p.runs.size(), why));
    }
  if (by_numa.empty()) return r;
  r.valid = true;

  // Placement: unbound unless a bound one beats it by more than the noise.
  std::string chosen = by_numa.count("none") ? "none" : by_numa.begin()->first;
  const size_t base_best = best_of(table, by_numa[chosen]);
  for (const auto& [numa, idx] : by_numa) {
    if (numa == "none") continue;
    size_t b = best_of(table, idx);
    double tol = std::max(tolerance_of(table[b]), tolerance_of(table[base_best]));
    if (table[b].samples_per_s > (1 + tol) * table[base_best].samples_per_s &&
        (chosen == "none" || table[b].samples_per_s > table[best_of(table, by_numa[chosen])].samples_per_s))
      chosen = numa;
  }
  r.numa = chosen;
  const std::vector<size_t>& idx = by_numa[chosen];
  r.best = best_of(table, idx);
  r.knee = find_knee(table, idx, &r.tolerance);

  // Smallest setting that feeds the GPUs.
  std::vector<size_t> sorted = idx;
  std::sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
    return std::tie(table[a].num_workers, table[a].prefetch_factor) <
           std::tie(table[b].num_workers, table[b].prefetch_factor);
  });
  r.meets_demand = false;
  for (size_t i : sorted)
    if (table[i].au >= in.au_target) {
      r.meets_demand = true;
      r.point = i;
      break;
    }
  if (!r.meets_demand) {
    // The GPUs are starved at every setting: every sample/s counts, so the best setting (highest
    // median) is recommended; the knee is named beside it when it differs.
    r.point = r.best;
    r.shortfall_samples_per_s = std::max(0.0, in.required_samples_per_s - table[r.best].samples_per_s);
    if (r.knee != r.best)
      r.notes.push_back(fmt::format(
          "num_workers={} prefetch_factor={} (the knee) reaches {:.0f} samples/s, {:.0f}% of the best, with fewer "
          "workers: within the noise ({:.0f}%), so choose it where CPU or memory are short",
          table[r.knee].num_workers, table[r.knee].prefetch_factor, table[r.knee].samples_per_s,
          100 * table[r.knee].samples_per_s / table[r.best].samples_per_s, 100 * r.tolerance));
  }
  const TunePoint& p = table[r.point];
  // pin_memory as the recommended point ran it: True is advised only where the sweep measured it.
  r.dataloader = fmt::format("DataLoader(num_workers={}, prefetch_factor={}, pin_memory={})", p.num_workers,
                             p.prefetch_factor, p.pin_memory ? "True" : "False");
  if (!p.pin_memory)
    r.pin_memory_note = "not measured: the sweep ran pin_memory=False (no pin thread), so the setting above is "
                        "pin_memory=False; pin_memory=True adds a thread per rank that copies each batch into "
                        "page-locked memory, which the figures above do not include: re-run tune with --pin-memory "
                        "to measure it";

  // NUMA advice.
  const bool multi = topo.nodes.size() > 1;
  if (!multi) {
    r.numa_reason = topo.nodes.empty() ? "no NUMA binding needed: no NUMA nodes visible"
                                       : "no NUMA binding needed: single NUMA node";
  } else if (chosen != "none") {
    NumactlAdvice a = numactl_line(topo, node_of(chosen));
    r.binding_helped = a.binding_needed;
    if (a.binding_needed) {
      r.numactl = a.command + " python train.py";
      r.numa_reason = fmt::format("binding to node {} raised the best rate from {:.0f} to {:.0f} samples/s; bind at "
                                  "launch so memory is first touched there",
                                  node_of(chosen), table[base_best].samples_per_s, table[r.best].samples_per_s);
    } else {
      r.numa_reason = a.reason;
    }
  } else if (by_numa.size() > 1) {
    r.numa_reason = fmt::format("no NUMA binding needed: no bound placement beat unbound ({:.0f} samples/s) by more "
                                "than the noise ({:.0f}%)",
                                table[base_best].samples_per_s, 100 * r.tolerance);
  } else {
    r.numa_reason = "NUMA binding not measured (only unbound runs); no binding advised";
  }

  // The GPUs' node: workers go on the node of the GPUs they feed (their pinned buffers and the
  // copy to the device stay local); the sweep measured only the reads.
  if (multi) {
    const GpuPlacementAdvice g = gpu_placement_advice(topo, -1);
    const int measured = r.binding_helped ? node_of(chosen) : -1;
    if (g.split) {
      r.numactl.clear();
      r.numa_reason = g.reason +
                      (measured >= 0 ? fmt::format(" (the sweep read fastest bound to node {})", measured) : "");
    } else if (!g.groups.empty() && g.groups.front().advice.binding_needed) {
      const int gpu_node = g.groups.front().node;
      if (measured >= 0 && measured != gpu_node) {
        r.numactl = g.command + " python train.py";
        r.numa_reason = fmt::format(
            "the GPUs are on node {}, the fastest reads bound to node {} ({:.0f} vs {:.0f} samples/s unbound): the "
            "data "
            "and the GPUs are on different nodes; bind to the GPUs' node {} so the workers' pinned buffers sit next to "
            "the GPUs they feed (the reads then cross the inter-socket link), or move the data to a device on node {}",
            gpu_node, measured, table[r.best].samples_per_s, table[base_best].samples_per_s, gpu_node, gpu_node);
      } else if (measured < 0) {
        r.notes.push_back(fmt::format("the GPUs are on node {}: when the training job's own work (decode, the copy "
                                      "to the GPU) is added, start it with {} python train.py",
                                      gpu_node, g.command));
      }
    }
  }

  // Notes: oversubscription, noise, the edge of the sweep.
  const uint64_t threads = static_cast<uint64_t>(p.num_workers) * in.gpus;
  if (threads > static_cast<uint64_t>(std::max(1, in.cpus_allowed))) {
    r.oversubscribed = true;
    // Did settings past the CPU count measurably beat the best one within it?
    double within = 0;
    for (size_t i : idx)
      if (static_cast<uint64_t>(table[i].num_workers) * in.gpus <= static_cast<uint64_t>(std::max(1, in.cpus_allowed)))
        within = std::max(within, table[i].samples_per_s);
    const bool helped = within > 0 && p.samples_per_s > (1 + r.tolerance) * within;
    r.notes.push_back(fmt::format(
        "oversubscribed: {} worker(s) x {} rank(s) = {} worker processes on {} allowed CPU(s){}. Each PyTorch worker "
        "is "
        "a process with its own memory; if your transforms cost CPU (decode, augmentation), fewer workers will do: "
        "re-run tune with --cpu-per-sample",
        p.num_workers, in.gpus, threads, in.cpus_allowed,
        helped ? fmt::format("; the sweep measured that more workers than CPUs help ({:.0f} vs {:.0f} samples/s at "
                             "most one worker per CPU) because they mostly wait on I/O (CPU use {:.2f} of {})",
                             p.samples_per_s, within, p.cpu_used, in.cpus_allowed)
        : within > 0 ? ""
                     : "; every setting swept puts more workers than CPUs with this many ranks"));
  }
  uint32_t max_w = 0, min_w = UINT32_MAX;
  for (size_t i : idx) {
    max_w = std::max(max_w, table[i].num_workers);
    min_w = std::min(min_w, table[i].num_workers);
  }
  // A rate can only be "still rising" over two or more num_workers values: one value has no trend.
  if (!r.meets_demand && min_w < max_w && table[r.knee].num_workers == max_w)
    r.notes.push_back(fmt::format("the rate was still rising at the largest num_workers swept ({}); sweep further with "
                                  "--workers",
                                  max_w));
  for (size_t i : idx)
    if (table[i].spread > 0.2) {
      r.notes.push_back(fmt::format("noisy measurements: spread up to {:.0f}% between repeats (e.g. num_workers={} "
                                    "prefetch_factor={}); settings closer than {:.0f}% are not told apart",
                                    100 * table[i].spread, table[i].num_workers, table[i].prefetch_factor,
                                    100 * r.tolerance));
      break;
    }
  return r;
}

}  // namespace ioprobe
