#include "loader/worker_costs.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "loader/config.hpp"
#include "topology/numa.hpp"

namespace ioprobe {

namespace {

// A level on a measured point (the document's level and a run's ranks x workers / CPUs may
// differ in the last bits).
bool same_level(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(a, b); }

}  // namespace

WorkerCostLookup worker_costs_at(const WorkerCostCurve& curve, double workers_per_cpu) {
  const auto& p = curve.points;
  if (p.empty()) throw std::invalid_argument("worker cost curve: no points");
  for (size_t i = 1; i < p.size(); ++i)
    if (!(p[i].workers_per_cpu > p[i - 1].workers_per_cpu))
      throw std::invalid_argument("worker cost curve: workers_per_cpu not strictly increasing");
  WorkerCostLookup out;
  out.last_measured = p.back().workers_per_cpu;
  if (workers_per_cpu <= p.front().workers_per_cpu || same_level(workers_per_cpu, p.front().workers_per_cpu)) {
    out.costs = p.front().costs;
    if (same_level(workers_per_cpu, p.front().workers_per_cpu)) out.basis = "measured";
  } else if (workers_per_cpu >= p.back().workers_per_cpu || same_level(workers_per_cpu, p.back().workers_per_cpu)) {
    out.costs = p.back().costs;
    out.beyond = !same_level(workers_per_cpu, p.back().workers_per_cpu);
    out.basis = out.beyond ? "beyond" : "measured";
  } else {
    size_t i = 1;
    while (p[i].workers_per_cpu < workers_per_cpu) ++i;
    const WorkerCostPoint &a = p[i - 1], &b = p[i];
    if (same_level(b.workers_per_cpu, workers_per_cpu)) {  // on a measured point: its figures
      out.costs = b.costs;
      out.basis = "measured";
    } else {
      const double t = (workers_per_cpu - a.workers_per_cpu) / (b.workers_per_cpu - a.workers_per_cpu);
      auto lerp = [t](double x, double y) { return x + t * (y - x); };
      out.costs = {lerp(a.costs.loop_us, b.costs.loop_us), lerp(a.costs.put_us, b.costs.put_us),
                   lerp(a.costs.other_us, b.costs.other_us), lerp(a.costs.startup_cpu_us, b.costs.startup_cpu_us)};
      out.lower = a.workers_per_cpu;
      out.upper = b.workers_per_cpu;
      out.basis = "interpolated";
    }
  }
  out.workers_per_cpu = workers_per_cpu;
  return out;
}

int loader_cpus(const LoaderConfig& cfg) {
  const int cpus = cfg.cpus > 0 ? cfg.cpus : static_cast<int>(current_thread_cpus().size());
  return std::max(1, cpus);
}

double loader_workers_per_cpu(const LoaderConfig& cfg) {
  return static_cast<double>(cfg.ranks) * cfg.num_workers / loader_cpus(cfg);
}

WorkerCostLookup worker_costs_for(const LoaderConfig& cfg) {
  if (cfg.costs.worker_curve.empty()) return {};
  return worker_costs_at(cfg.costs.worker_curve, loader_workers_per_cpu(cfg));
}

LoaderConfig at_own_level(const LoaderConfig& cfg) {
  LoaderConfig c = cfg;
  if (!cfg.costs.worker_curve.empty()) c.costs.worker = worker_costs_for(cfg).costs;
  return c;
}

}  // namespace ioprobe
