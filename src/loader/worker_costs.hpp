// A DataLoader worker's CPU costs as a function of how crowded the host's CPUs are. With more
// worker processes than CPUs, a real loader's workers burn more CPU per sample than on an idle
// host (time slices end in context switches that refill caches and TLBs), and each fresh worker's
// one-time start-up costs more; `ioprobe calibrate --oversubscribe` measures both at a few
// worker-processes-per-CPU levels (docs/benchmarks/calibration.md, "Fidelity": the rows with 4 and 8 workers on 2
// CPUs ran 19-34% slower than a model with the uncrowded figures). The loader takes its costs for
// its own level from the curve at each run (loader_run.cpp), so a tune sweep over num_workers or
// a capacity search over GPU ranks has each point's level's costs.
#pragma once

#include "loader/costs.hpp"

namespace ioprobe {

struct LoaderConfig;

/// Where a level falls on the curve.
struct WorkerCostLookup {
  WorkerCosts costs;            // the costs used
  double workers_per_cpu = 0;   // the level asked for
  bool beyond = false;          // the level is above the last measured point: its figures are used
  double last_measured = 0;     // the last point's workers_per_cpu
  double lower = 0, upper = 0;  // interpolated: the measured levels around it (else both 0)
  // How the costs were found: "uncrowded" (below the first point: its figures), "measured" (on a
  // point), "interpolated" (between two), "beyond" (above the last: its figures).
  const char* basis = "uncrowded";
};

/// The costs at `workers_per_cpu`. Throws std::invalid_argument when the curve is empty or its
/// points are not strictly increasing in workers_per_cpu.
WorkerCostLookup worker_costs_at(const WorkerCostCurve& curve, double workers_per_cpu);

/// The CPUs the loader's threads share: `cfg.cpus`, or when that is 0 the CPUs this process may
/// run on (sched_getaffinity); at least 1.
int loader_cpus(const LoaderConfig& cfg);

/// The loader's worker processes per CPU: ranks x num_workers / loader_cpus(cfg).
double loader_workers_per_cpu(const LoaderConfig& cfg);

/// The lookup of the config's own level (loader_workers_per_cpu) on cfg.costs.worker_curve; an
/// empty lookup (zero costs, workers_per_cpu 0) when there is no curve. Throws std::invalid_argument
/// as worker_costs_at does for a curve out of order.
WorkerCostLookup worker_costs_for(const LoaderConfig& cfg);

/// `cfg` with costs.worker taken from its curve at its own level (worker_costs_for): what each run
/// burns. A config without a curve comes back as it is. at_own_level(at_own_level(c)) is
/// at_own_level(c). Throws as worker_costs_for.
LoaderConfig at_own_level(const LoaderConfig& cfg);

}  // namespace ioprobe
