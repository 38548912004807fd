// The plan's LoaderConfig stays read-only: each variation (a process's place in the job, ranks,
// workers, epoch marks, a tune setting's or a capacity repeat's run) is a new value made from it.
#include <catch2/catch.hpp>

#include "capacity/capacity_run.hpp"
#include "loader/config.hpp"
#include "tune/sweep.hpp"
#include "tune/tune_run.hpp"

using namespace ioprobe;

namespace {

LoaderConfig plan_loader() {
  LoaderConfig l;
  l.ranks = 2;
  l.num_workers = 4;
  l.prefetch_factor = 2;
  l.seed = 7;
  l.costs.worker.loop_us = 300;
  l.costs.main_cpu_per_batch_us = 900;
  return l;
}

}  // namespace

TEST_CASE("loader config: a variation is a new value and the plan's is left as it was", "[loader][config]") {
  const LoaderConfig plan = plan_loader();
  const LoaderConfig job = in_job(plan, 3, 1);  // process 1 of 3, each with 2 GPU ranks
  CHECK(job.world_ranks == 6);
  CHECK(job.first_rank == 2);
  CHECK(job.ranks == 2);
  CHECK(job.costs.worker == plan.costs.worker);  // the costs travel with the value
  CHECK(with_ranks(plan, 5).ranks == 5);
  CHECK(with_num_workers(plan, 16).num_workers == 16);
  int marks = 0;
  const LoaderConfig marked = with_epoch_mark(plan, [&marks] { ++marks; });
  marked.epoch_mark();
  CHECK(marks == 1);
  CHECK_FALSE(plan.epoch_mark);
  CHECK(plan.world_ranks == 0);
  CHECK(plan.first_rank == 0);
  CHECK(plan.ranks == 2);
  CHECK(plan.num_workers == 4);
}

TEST_CASE("loader config: tune's and capacity's runs are timed copies of the plan's", "[loader][config][tune]") {
  const LoaderConfig plan = plan_loader();
  TunePoint p;
  p.num_workers = 8;
  p.prefetch_factor = 4;
  p.numa = "none";
  const LoaderConfig s = setting_run_config(plan, p, 3.0, 2);
  CHECK(s.num_workers == 8);
  CHECK(s.prefetch_factor == 4);
  CHECK(s.duration_s == 3.0);
  CHECK(s.epochs == kMaxEpochs);
  CHECK(s.seed == 9);
  CHECK(s.timeline_interval_s == kTuneIntervalS);
  CHECK(s.record_deliveries);
  CHECK(s.costs.main_cpu_per_batch_us == 900);
  const LoaderConfig r = repeat_config(plan, 5, 10, 5, 4.0, 1);
  CHECK(r.ranks == 5);
  CHECK(r.world_ranks == 10);
  CHECK(r.first_rank == 5);
  CHECK(r.duration_s == 4.0);
  CHECK(r.seed == 8);
  CHECK(r.record_deliveries);
  CHECK(plan.num_workers == 4);
  CHECK(plan.duration_s == 0);
  CHECK_FALSE(plan.record_deliveries);
}
