#include "tune/sweep.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "core/value_range.hpp"

namespace ioprobe {

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace

void summarize_point(TunePoint& p) {
  std::vector<double> sps, bps, au, cpu, busy;
  p.steady_runs = static_cast<size_t>(
      std::count_if(p.runs.begin(), p.runs.end(), [](const TuneSample& r) { return r.steady; }));
  for (const auto& r : p.runs) {
    if (p.steady_runs > 0 && !r.steady) continue;
    sps.push_back(r.samples_per_s);
    bps.push_back(r.bytes_per_s);
    au.push_back(r.au);
    cpu.push_back(r.cpu_used);
    busy.push_back(r.worker_busy);
  }
  p.samples_per_s = median(sps);
  p.bytes_per_s = median(bps);
  p.au = median(au);
  p.cpu_used = median(cpu);
  p.worker_busy = median(busy);
  p.samples_per_s_min = sps.empty() ? 0 : *std::min_element(sps.begin(), sps.end());
  p.samples_per_s_max = sps.empty() ? 0 : *std::max_element(sps.begin(), sps.end());
  p.spread = p.samples_per_s > 0 ? (p.samples_per_s_max - p.samples_per_s_min) / p.samples_per_s : 0;
}

std::vector<uint32_t> default_worker_list(int cpus_allowed) {
  uint32_t bound = std::min<uint32_t>(64, std::max<uint32_t>(4, 8u * static_cast<uint32_t>(std::max(1, cpus_allowed))));
  std::vector<uint32_t> out;
  for (uint32_t w = 1; w <= bound; w *= 2) out.push_back(w);
  return out;
}

std::vector<uint32_t> parse_uint_list(const std::string& text, const std::string& option, uint32_t lo, uint32_t hi) {
  std::vector<uint32_t> out;
  size_t pos = 0;
  if (text.empty()) throw UsageError(fmt::format("{}: empty list; give values like 4,8,16", option));
  // The list is split on commas, so "1,000" is the two values 1 and 000: every message names the
  // element, its place in the list and that commas separate values here.
  const bool thousands = text.find(',') != std::string::npos;
  for (size_t n = 1; pos <= text.size(); ++n) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::string which = thousands ? fmt::format("element {} of the comma-separated list, '{}',", n, item) : item;
    const std::string no_grouping =
        thousands ? "; commas separate the values here, so write a number without thousands separators (1000)" : "";
    uint64_t v = 0;
    const auto out_of_range = [&] {
      return UsageError(fmt::format("{} '{}': {} is out of range; give values from {} to {}{}", option, text, which, lo,
                                    hi, no_grouping));
    };
    try {
      v = parse_count(item, option);
    } catch (const ValueOutOfRange&) {  // over 2^64 - 1: a number, too large
      throw out_of_range();
    } catch (const UsageError&) {
      throw UsageError(fmt::format("{} '{}': {} is not a whole number; give a comma-separated list like 4,8,16{}",
                                   option, text, which, item.empty() ? " (no empty element)" : ""));
    }
    if (v < lo || v > hi) throw out_of_range();
    // A repeat is a thousands group ("1,000,000") only where the element has three digits.
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw UsageError(fmt::format("{} '{}': {} appears twice (the list is comma-separated){}", option, text, v,
                                   item.size() == 3 ? no_grouping : std::string()));
    out.push_back(static_cast<uint32_t>(v));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> placements_to_sweep(const Topology& topo, int device_node, std::string* why) {
  std::vector<std::string> out{"none"};
  if (topo.nodes.size() <= 1) {
    if (why)
      *why = topo.nodes.empty() ? "no NUMA nodes visible: only unbound runs"
                                : "single NUMA node: binding cannot change placement, only unbound runs";
    return out;
  }
  if (device_node >= 0 && topo.has_node(device_node)) out.push_back(fmt::format("node:{}", device_node));
  for (const auto& n : topo.nodes) {
    std::string s = fmt::format("node:{}", n.id);
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  if (why)
    *why = device_node >= 0 ? fmt::format("{} nodes; the device is on node {}", topo.nodes.size(), device_node)
                            : fmt::format("{} nodes; the device reports no node (-1)", topo.nodes.size());
  return out;
}

double lengthened_run_s(double run_s, double step_time_s, uint32_t steps) {
  return std::max(run_s, kMinWarmupS + steps * std::max(0.0, step_time_s));
}

uint32_t tune_steps(uint32_t num_workers) {
  return std::max<uint32_t>(kMinStepsPerPoint, kSteadyBatchesPerWorker * num_workers + 1);
}

void lengthen_runs(SweepPlan& plan, double step_time_s) {
  for (TunePoint& p : plan.points) {
    const double need = lengthened_run_s(plan.run_s, step_time_s, tune_steps(p.num_workers));
    p.run_s = need > plan.run_s ? std::ceil(need * 10) / 10 : plan.run_s;
    plan.estimated_s += plan.repeats * (p.run_s - plan.run_s);
  }
}

SweepPlan make_plan(const std::vector<uint32_t>& workers, const std::vector<uint32_t>& prefetch,
                    const std::vector<std::string>& placements, uint32_t repeats, double budget_s, double setup_s,
                    double min_run_s, double max_run_s) {
  SweepPlan plan;
  plan.repeats = std::max<uint32_t>(1, repeats);
  for (const auto& numa : placements)
    for (uint32_t pf : prefetch)
      for (uint32_t w : workers) {
        TunePoint p;
        p.num_workers = w;
        p.prefetch_factor = pf;
        p.numa = numa;
        plan.points.push_back(p);
      }
  const double runs = static_cast<double>(plan.points.size() * plan.repeats);
  const double share = (budget_s - setup_s) / runs - kRunOverheadS;
  if (share < min_run_s) {
    double need = setup_s + runs * (min_run_s + kRunOverheadS);
    throw UsageError(
        fmt::format("--budget {}: {} settings x {} repeats need at least {} ({} s per run); raise --budget, "
                    "or narrow the sweep with --workers, --prefetch-factors, --numa or --repeats",
                    format_seconds(budget_s), plan.points.size(), plan.repeats, format_seconds(std::ceil(need)),
                    min_run_s));
  }
  plan.run_s = std::min(max_run_s, share);
  plan.run_s = std::floor(plan.run_s * 10) / 10;
  plan.estimated_s = setup_s + runs * (plan.run_s + kRunOverheadS);
  return plan;
}

}  // namespace ioprobe
