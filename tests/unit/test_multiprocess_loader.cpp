// The loader's multi-host seams without MPI: several "processes" (threads here, each calling
// run_loader with its own first_rank) joined by an in-memory StepSync that reduces like the MPI
// one does. Checks that an epoch is read exactly once across all of them, that unequal shares
// finish without a hang, and that a stop on one process (its --duration) stops the others.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>

#include "comm/comm.hpp"
#include "dataset/walker.hpp"
#include "loader/loader_run.hpp"
#include "loader/sampler.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

namespace {

// A max-reduction of two values among `n` participants, as MPI_Allreduce(MPI_MAX) would do.
class FakeJob {
 public:
  explicit FakeJob(int n) : n_(n) {}
  void reduce(int64_t v[2]) {
    std::unique_lock<std::mutex> lk(mu_);
    acc_[0] = std::max(acc_[0], v[0]);
    acc_[1] = std::max(acc_[1], v[1]);
    const uint64_t gen = gen_;
    if (++arrived_ == n_) {
      res_[0] = acc_[0];
      res_[1] = acc_[1];
      acc_[0] = acc_[1] = 0;
      arrived_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lk, [&] { return gen_ != gen; });
    }
    v[0] = res_[0];
    v[1] = res_[1];
    ++rounds_;
  }
  uint64_t rounds() const { return rounds_; }

 private:
  int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t gen_ = 0;
  int64_t acc_[2] = {0, 0}, res_[2] = {0, 0};
  uint64_t rounds_ = 0;
};

class FakeSync final : public StepSync {
 public:
  explicit FakeSync(FakeJob& job) : job_(job) {}
  void start() override {
    int64_t v[2] = {0, 0};
    job_.reduce(v);
  }
  StopKind exchange(StopKind local) noexcept override {
    int64_t v[2] = {static_cast<int64_t>(local), 1};
    job_.reduce(v);
    return static_cast<StopKind>(v[0]);
  }
  void finish(StopKind local) noexcept override {
    for (;;) {
      int64_t v[2] = {static_cast<int64_t>(local), 0};
      job_.reduce(v);
      if (v[1] == 0) return;
    }
  }

 private:
  FakeJob& job_;
};

FileIndex make_files(const TempDir& d, int n) {
  for (int i = 0; i < n; ++i) std::ofstream(d.path + "/f" + std::to_string(i)) << std::string(100 + i, 'x');
  return walk_tree(d.path, false).index;
}

LoaderConfig base_config() {
  LoaderConfig c;
  c.num_workers = 2;
  c.batch_size = 4;
  c.prefetch_factor = 2;
  c.engine = EngineKind::kPsync;
  c.direct = false;
  c.timeline_interval_s = 0.5;
  return c;
}

}  // namespace

TEST_CASE("shard_for_rank over a job's world: each sample exactly once, shares differ by at most one",
          "[sampler][multihost]") {
  const auto order = sample_order(103, true, 7, 2);
  std::vector<int> seen(103, 0);
  size_t smallest = 1000, largest = 0;
  for (uint32_t r = 0; r < 5; ++r) {
    const auto share = shard_for_rank(order, r, 5);
    smallest = std::min(smallest, share.size());
    largest = std::max(largest, share.size());
    for (uint64_t s : share) ++seen[s];
  }
  for (int s : seen) REQUIRE(s == 1);
  CHECK(largest - smallest <= 1);
}

TEST_CASE("three processes of 2 + 1 + 2 ranks read one epoch exactly once and all finish", "[loader][multihost]") {
  TempDir d("mp");
  const FileIndex index = make_files(d, 103);  // 103 over 5 ranks: shares of 21 and 20 (unequal steps)
  FakeJob job(3);
  const uint32_t ranks[3] = {2, 1, 2}, first[3] = {0, 2, 3};
  LoaderResult res[3];
  std::vector<std::thread> procs;
  for (int p = 0; p < 3; ++p)
    procs.emplace_back([&, p] {
      LoaderConfig c = base_config();
      c.ranks = ranks[p];
      c.world_ranks = 5;
      c.first_rank = first[p];
      c.epochs = 2;
      FakeSync sync(job);
      res[p] = run_loader(index, c, nullptr, nullptr, nullptr, &sync);
    });
  for (auto& t : procs) t.join();
  uint64_t samples = 0, bytes = 0;
  for (const auto& r : res) {
    samples += r.samples;
    bytes += r.bytes;
    CHECK(r.errors == 0);
    CHECK(r.epochs_completed == 2);
    CHECK(r.stop.kind == LoaderStopKind::kCompleted);
  }
  CHECK(samples == 2 * 103);
  uint64_t want = 0;
  for (int i = 0; i < 103; ++i) want += 100 + i;
  CHECK(bytes == 2 * want);
}

TEST_CASE("a stop on one process (its --duration) stops the others at the next step", "[loader][multihost]") {
  TempDir d("mpstop");
  const FileIndex index = make_files(d, 40);
  FakeJob job(2);
  LoaderResult res[2];
  std::vector<std::thread> procs;
  for (int p = 0; p < 2; ++p)
    procs.emplace_back([&, p] {
      LoaderConfig c = base_config();
      c.world_ranks = 2;
      c.first_rank = static_cast<uint32_t>(p);
      c.epochs = kMaxEpochs;  // would run for hours without the stop
      c.step_time_s = 0.005;
      c.duration_s = p == 1 ? 0.3 : 0;  // only process 1 has a deadline
      FakeSync sync(job);
      res[p] = run_loader(index, c, nullptr, nullptr, nullptr, &sync);
    });
  for (auto& t : procs) t.join();
  CHECK(res[1].stop.kind == LoaderStopKind::kDuration);
  CHECK(res[0].stop.kind == LoaderStopKind::kDuration);
  CHECK(res[0].elapsed_ns < 5'000'000'000LL);
  CHECK(res[0].samples > 0);
}

TEST_CASE("detect_launcher reads OpenMPI, PMIx, MPICH and Slurm variables", "[dist]") {
  using comm::detect_launcher;
  CHECK(detect_launcher({}).launcher == "none");
  CHECK(detect_launcher({}).size == 1);
  auto o = detect_launcher(
      {{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "3"}, {"PMIX_RANK", "3"}, {"PMIX_NAMESPACE", "x"}});
  CHECK(o.launcher == "OpenMPI mpirun");
  CHECK(o.size == 4);
  CHECK(o.rank == 3);
  auto p = detect_launcher({{"PMIX_RANK", "1"}, {"PMIX_NAMESPACE", "prterun-vm-1234@1"}, {"PMIX_SIZE", "8"}});
  CHECK(p.launcher == "PMIx (prterun)");
  CHECK(p.size == 8);
  CHECK(p.rank == 1);
  CHECK(detect_launcher({{"PMIX_RANK", "1"}, {"PMIX_NAMESPACE", "x"}}).size == 0);  // unknown: MPI_Init tells
  auto m = detect_launcher({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}});
  CHECK(m.launcher == "MPICH hydra (PMI)");
  CHECK(m.size == 2);
  auto s = detect_launcher({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}, {"SLURM_STEP_ID", "0"}});
  CHECK(s.launcher == "Slurm srun (no MPI plugin)");
  CHECK(s.mpi_plugin == "none");
  CHECK(s.rank == 5);
  CHECK(s.size == 6);
  // A batch script's environment (no step) is not a launch; junk sizes read as unknown.
  CHECK(detect_launcher({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "6"}}).launcher == "none");
  CHECK(detect_launcher({{"OMPI_COMM_WORLD_SIZE", "x"}}).size == 1);
}

// The variables as Slurm 22.05's srun set them for task 1 of `srun --mpi=pmix -n 2` (recorded
// with `env` in a step on Debian 12; tests/integration/slurm_srun.sh runs the real thing).
TEST_CASE("detect_launcher names Slurm's srun and its MPI plugin", "[dist]") {
  using comm::detect_launcher;
  std::map<std::string, std::string> pmix = {{"PMIX_RANK", "1"},           {"PMIX_NAMESPACE", "slurm.pmix.2.0"},
                                             {"PMIX_HOSTNAME", "vm"},      {"SLURM_MPI_TYPE", "pmix"},
                                             {"SLURM_NTASKS", "2"},        {"SLURM_NPROCS", "2"},
                                             {"SLURM_PROCID", "1"},        {"SLURM_STEP_ID", "0"},
                                             {"SLURM_STEP_NUM_TASKS", "2"}};
  auto p = detect_launcher(pmix);
  CHECK(p.launcher == "Slurm srun --mpi=pmix");  // it read "PMIx (srun --mpi=pmix / prterun)"
  CHECK(p.mpi_plugin == "pmix");
  CHECK(p.rank == 1);
  CHECK(p.size == 2);
  CHECK(comm::srun_without_mpi_plugin(p).empty());
  // srun --mpi=pmi2 sets PMI_RANK/PMI_SIZE as MPICH's hydra does: still Slurm's srun.
  auto q = detect_launcher({{"PMI_RANK", "0"},
                            {"PMI_SIZE", "2"},
                            {"PMI_FD", "11"},
                            {"SLURM_MPI_TYPE", "pmi2"},
                            {"SLURM_PROCID", "0"},
                            {"SLURM_STEP_ID", "0"},
                            {"SLURM_STEP_NUM_TASKS", "2"},
                            {"SLURM_NTASKS", "2"}});
  CHECK(q.launcher == "Slurm srun --mpi=pmi2");
  CHECK(q.size == 2);
  // The step's own task count, not the allocation's (sbatch -n 4, then srun -n 2 in the script).
  auto st = detect_launcher({{"SLURM_PROCID", "1"},
                             {"SLURM_STEP_ID", "3"},
                             {"SLURM_STEP_NUM_TASKS", "2"},
                             {"SLURM_NTASKS", "4"},
                             {"SLURM_MPI_TYPE", "pmix"},
                             {"PMIX_RANK", "1"},
                             {"PMIX_NAMESPACE", "slurm.pmix.7.3"}});
  CHECK(st.size == 2);
  CHECK(st.rank == 1);
  // mpirun inside an allocation: its ranks inherit the batch's SLURM_* but are OpenMPI's.
  auto o = detect_launcher({{"OMPI_COMM_WORLD_SIZE", "4"},
                            {"OMPI_COMM_WORLD_RANK", "2"},
                            {"SLURM_PROCID", "0"},
                            {"SLURM_STEP_ID", "0"},
                            {"SLURM_NTASKS", "1"},
                            {"SLURM_JOB_ID", "9"}});
  CHECK(o.launcher == "OpenMPI mpirun");
  CHECK(o.size == 4);
  // MPICH's mpiexec inside an allocation: its ranks run under a daemon that srun started (a step
  // without an MPI plugin); hydra's PMI numbers them, not Slurm.
  auto h = detect_launcher({{"PMI_RANK", "5"},
                            {"PMI_SIZE", "8"},
                            {"SLURM_PROCID", "1"},
                            {"SLURM_STEP_ID", "0"},
                            {"SLURM_STEP_NUM_TASKS", "2"},
                            {"SLURM_NTASKS", "2"}});
  CHECK(h.launcher == "MPICH hydra (PMI)");
  CHECK(h.rank == 5);
  CHECK(h.size == 8);
  CHECK(comm::srun_without_mpi_plugin(h).empty());
  // A batch script run by sbatch -n 2 (no step): not a launch.
  CHECK(detect_launcher({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_ID", "5"}}).launcher == "none");
  // srun -n 2 without --mpi (MpiDefault=none): refused before MPI_Init, naming the count and the fix.
  auto none = detect_launcher(
      {{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_NTASKS", "2"}});
  const std::string why = comm::srun_without_mpi_plugin(none);
  CHECK(why.find("one of 2 tasks") != std::string::npos);
  CHECK(why.find("srun --mpi=pmix -n 2") != std::string::npos);
  // One task alone needs no MPI: nothing to refuse.
  CHECK(comm::srun_without_mpi_plugin(
            detect_launcher({{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"SLURM_STEP_NUM_TASKS", "1"}}))
            .empty());
}

// srun --mpi=pmi2 serves the tasks over Slurm's PMI-2: the variables as Slurm 22.05 set them for
// task 1 of `srun --mpi=pmi2 -n 2` (PMI_* and SLURM_MPI_TYPE recorded by slurm_srun.sh on Debian
// 12). Debian's Open MPI speaks PMIx only, so its MPI_Init would abort.
TEST_CASE("srun --mpi=pmi2 is recognised before MPI_Init and refused with the fix", "[dist]") {
  using comm::detect_launcher;
  using comm::srun_pmi2_needs_pmix;
  const std::map<std::string, std::string> pmi2 = {{"PMI_FD", "11"},           {"PMI_JOBID", "4.0"},
                                                   {"PMI_RANK", "1"},          {"PMI_SIZE", "2"},
                                                   {"SLURM_MPI_TYPE", "pmi2"}, {"SLURM_PROCID", "1"},
                                                   {"SLURM_STEP_ID", "0"},     {"SLURM_STEP_NUM_TASKS", "2"},
                                                   {"SLURM_NTASKS", "2"}};
  const comm::LaunchInfo li = detect_launcher(pmi2);
  CHECK(li.mpi_plugin == "pmi2");
  CHECK(li.launcher == "Slurm srun --mpi=pmi2");
  CHECK(li.rank == 1);
  CHECK(li.size == 2);
  const std::string why = srun_pmi2_needs_pmix(li);
  CHECK(why.rfind("started by srun --mpi=pmi2; this Open MPI needs PMIx: use srun --mpi=pmix", 0) == 0);
  CHECK(why.find("2 tasks") != std::string::npos);
  CHECK(comm::srun_without_mpi_plugin(li).empty());  // one refusal per cause

  // Without SLURM_MPI_TYPE, newer Slurm's PMI2_SUN_PATH says PMI-2 all the same; without it the
  // PMI variables could be hydra's (below).
  auto no_type = pmi2;
  no_type.erase("SLURM_MPI_TYPE");
  CHECK(srun_pmi2_needs_pmix(detect_launcher(no_type)).empty());
  no_type["PMI2_SUN_PATH"] = "/var/spool/slurmd/sock.pmi2.7.0";
  CHECK(detect_launcher(no_type).mpi_plugin == "pmi2");
  CHECK_FALSE(srun_pmi2_needs_pmix(detect_launcher(no_type)).empty());

  // Not PMI-2: srun --mpi=pmix, MPICH's hydra inside a step (PMI_FD and PMI_RANK, none of Slurm's
  // PMI-2 marks), mpirun, no launcher.
  CHECK(srun_pmi2_needs_pmix(detect_launcher({{"PMIX_RANK", "1"},
                                              {"PMIX_NAMESPACE", "slurm.pmix.2.0"},
                                              {"SLURM_MPI_TYPE", "pmix"},
                                              {"SLURM_PROCID", "1"},
                                              {"SLURM_STEP_ID", "0"},
                                              {"SLURM_STEP_NUM_TASKS", "2"}}))
            .empty());
  const auto hydra = detect_launcher({{"PMI_FD", "6"},
                                      {"PMI_RANK", "5"},
                                      {"PMI_SIZE", "8"},
                                      {"SLURM_PROCID", "1"},
                                      {"SLURM_STEP_ID", "0"},
                                      {"SLURM_STEP_NUM_TASKS", "2"}});
  CHECK(hydra.launcher == "MPICH hydra (PMI)");
  CHECK(srun_pmi2_needs_pmix(hydra).empty());
  CHECK(srun_pmi2_needs_pmix(detect_launcher({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "0"}})).empty());
  CHECK(srun_pmi2_needs_pmix(detect_launcher({})).empty());
}
