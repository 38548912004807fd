// The worker's costs by crowding (loader/worker_costs.hpp): the curve's lookup, the loader's
// worker processes per CPU, and the resolution into a LoaderConfig's worker costs.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "loader/config.hpp"
#include "loader/worker_costs.hpp"

using namespace ioprobe;

namespace {

// A calibration's shape: the uncrowded figures at 1 worker process per CPU, measured points at 2 and 4.
WorkerCostCurve curve() {
  WorkerCostCurve c;
  c.points = {{1.0, {3000, 20, 2, 400000}}, {2.0, {3100, 30, 2, 500000}}, {4.0, {3300, 50, 4, 700000}}};
  return c;
}

}  // namespace

TEST_CASE("worker costs: the first point below it, linear between points, the last beyond it (said so)",
          "[worker_costs]") {
  const WorkerCostCurve c = curve();
  WorkerCostLookup l = worker_costs_at(c, 0.5);  // fewer workers than CPUs: the uncrowded figures
  CHECK(l.costs.loop_us == 3000);
  CHECK(l.costs.startup_cpu_us == 400000);
  CHECK(l.workers_per_cpu == 0.5);
  CHECK_FALSE(l.beyond);
  l = worker_costs_at(c, 2.0);  // on a point: its figures
  CHECK(l.costs.loop_us == Approx(3100));
  CHECK(l.costs.put_us == Approx(30));
  CHECK(l.lower == 0);  // measured there: not interpolated
  CHECK(std::string(l.basis) == "measured");
  CHECK(std::string(worker_costs_at(c, 0.5).basis) == "uncrowded");
  CHECK(std::string(worker_costs_at(c, 1.0).basis) == "measured");
  CHECK(std::string(worker_costs_at(c, 3.0).basis) == "interpolated");
  CHECK(std::string(worker_costs_at(c, 4.0 + 1e-12).basis) == "measured");  // the last bits of a division
  CHECK_FALSE(worker_costs_at(c, 4.0 + 1e-12).beyond);
  CHECK(std::string(worker_costs_at(c, 8.0).basis) == "beyond");
  l = worker_costs_at(c, 3.0);  // half way from 2 to 4
  CHECK(l.costs.loop_us == Approx(3200));
  CHECK(l.costs.put_us == Approx(40));
  CHECK(l.costs.other_us == Approx(3));
  CHECK(l.costs.startup_cpu_us == Approx(600000));
  CHECK_FALSE(l.beyond);
  CHECK(l.lower == 2.0);  // the levels it lies between, for the run's note
  CHECK(l.upper == 4.0);
  l = worker_costs_at(c, 1.5);
  CHECK(l.costs.loop_us == Approx(3050));
  CHECK(l.lower == 1.0);
  CHECK(l.upper == 2.0);
  l = worker_costs_at(c, 8.0);  // beyond the last measured level: held, and flagged
  CHECK(l.costs.loop_us == Approx(3300));
  CHECK(l.costs.startup_cpu_us == Approx(700000));
  CHECK(l.beyond);
  CHECK(l.last_measured == 4.0);
  CHECK_FALSE(worker_costs_at(c, 4.0).beyond);
}

TEST_CASE("worker costs: an empty or unordered curve is refused", "[worker_costs]") {
  CHECK_THROWS_AS(worker_costs_at(WorkerCostCurve{}, 1.0), std::invalid_argument);
  WorkerCostCurve c = curve();
  c.points[2].workers_per_cpu = 2.0;  // a repeated level
  CHECK_THROWS_AS(worker_costs_at(c, 3.0), std::invalid_argument);
}

TEST_CASE("worker costs: a config takes the figures of its own ranks x workers per CPU", "[worker_costs]") {
  LoaderConfig cfg;
  cfg.costs.worker.loop_us = 11;  // a hand-given cost, kept without a curve
  cfg.num_workers = 8;
  cfg.ranks = 1;
  cfg.cpus = 2;
  CHECK(loader_workers_per_cpu(cfg) == Approx(4.0));
  CHECK(worker_costs_for(cfg).workers_per_cpu == 0);
  CHECK(at_own_level(cfg).costs.worker.loop_us == 11);

  cfg.costs.worker_curve = curve();
  WorkerCostLookup l = worker_costs_for(cfg);
  CHECK(l.workers_per_cpu == Approx(4.0));
  const LoaderConfig at = at_own_level(cfg);
  CHECK(at.costs.worker == l.costs);  // the point's costs, in one value
  CHECK(at.costs.worker.loop_us == Approx(3300));
  CHECK(at.costs.worker.put_us == Approx(50));
  CHECK(at.costs.worker.other_us == Approx(4));
  CHECK(at.costs.worker.startup_cpu_us == Approx(700000));
  CHECK(cfg.costs.worker.loop_us == 11);                    // a new value: the config is left as it is
  CHECK(at_own_level(at).costs.worker == at.costs.worker);  // idempotent: from the curve, not the costs it set

  cfg.num_workers = 3;  // 3 ranks x 3 workers on 8 CPUs = 1.125 per CPU
  cfg.ranks = 3;
  cfg.cpus = 8;
  l = worker_costs_for(cfg);
  CHECK(l.workers_per_cpu == Approx(1.125));
  CHECK(at_own_level(cfg).costs.worker.loop_us == Approx(3000 + 0.125 * 100));
  cfg.num_workers = 2;  // 6 on 8 CPUs: uncrowded
  CHECK(at_own_level(cfg).costs.worker.loop_us == Approx(3000));

  cfg.cpus = 0;  // this process's CPUs (sched_getaffinity): at least one
  CHECK(loader_workers_per_cpu(cfg) > 0);
  CHECK(loader_workers_per_cpu(cfg) <= 6.0);
}
