// The transport between ioprobe processes on several hosts: rank, size, host grouping, barrier,
// gather and a small max-reduction. It knows no loader, dataset or report: cli/ decides what
// crosses it (result documents as JSON strings) and merges with the results' own merge().
//
// Two implementations: LocalComm (one process, always built) and MpiComm (src/comm/mpi_comm.cpp,
// built when CMake finds an MPI library). make_comm() picks MPI only when a launcher started the
// process with more than one rank, so a plain single-host run never calls MPI_Init.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ioprobe::comm {

/// How this process was started, read from the launcher's environment without MPI_Init.
/// Variables (documented by each launcher): OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE/_RANK;
/// a task of a Slurm job step (srun) has SLURM_STEP_ID, SLURM_PROCID, SLURM_STEP_NUM_TASKS and,
/// when srun started an MPI plugin (--mpi=pmix, --mpi=pmi2 or slurm.conf's MpiDefault),
/// SLURM_MPI_TYPE; a batch script itself has no SLURM_STEP_ID and is no launch. Other PMIx
/// launchers (prterun) set PMIX_RANK and PMIX_NAMESPACE; MPICH's hydra sets PMI_RANK/PMI_SIZE.
/// Slurm's PMI-2 plugin sets PMI_FD, PMI_JOBID, PMI_RANK, PMI_SIZE in each task (22.05, recorded
/// in tests/integration/slurm_srun.sh; newer Slurm adds PMI2_SUN_PATH): src/plugins/mpi/pmi2.
struct LaunchInfo {
  /// "none" | "OpenMPI mpirun" | "Slurm srun --mpi=<plugin>" | "Slurm srun (no MPI plugin)" |
  /// "PMIx (prterun)" | "MPICH hydra (PMI)". Reported as the cluster's launcher.
  std::string launcher = "none";
  std::string mpi_plugin;  // under srun: SLURM_MPI_TYPE ("pmix", "pmi2", ...), "none" when unset; else empty.
                           // "pmi2" also for a step without SLURM_MPI_TYPE that carries the PMI-2 plugin's
                           // variables (PMI_FD and PMI_RANK, no PMIX_RANK, and PMI2_SUN_PATH)
  int rank = 0;            // this process's rank as the launcher numbered it (0 when unknown)
  int size = 1;            // processes in the job (1 when not launched; 0 when a PMIx launcher does not say)
  bool launched() const { return launcher != "none"; }
};

/// Reads the launcher variables from `env` (name -> value; tests pass their own map).
LaunchInfo detect_launcher(const std::map<std::string, std::string>& env);
/// The same from the process environment.
LaunchInfo detect_launcher();

/// The refusal of a Slurm step of several tasks that srun started without an MPI plugin
/// (li.mpi_plugin == "none": no --mpi and slurm.conf's MpiDefault=none): the message, naming the
/// launch and the fix (srun --mpi=pmix); empty for any other launch. Open MPI connects srun's
/// tasks only through the PMIx (or, when built --with-pmi, PMI-2) server that such a plugin starts;
/// without one its MPI_Init aborts every task with a message that suggests rebuilding Open MPI.
std::string srun_without_mpi_plugin(const LaunchInfo& li);

/// The refusal of a Slurm step that srun started with its PMI-2 plugin (li.mpi_plugin == "pmi2":
/// srun --mpi=pmi2 or MpiDefault=pmi2) when this MPI speaks PMIx only (Debian's Open MPI is built
/// --with-pmix and without Slurm's PMI-2; Open MPI 5 has no PMI-2 at all): the message, naming the
/// launch and the fix (srun --mpi=pmix); empty for any other launch. Open MPI's MPI_Init would abort
/// every task ("OMPI was not built with SLURM's PMI support").
std::string srun_pmi2_needs_pmix(const LaunchInfo& li);

/// One rank's side of a tree reduction (Comm::reduce_tree): it starts as this rank's own part and
/// adds each child subtree's, as bytes; each child covers the ranks just above everything added
/// so far, so a merge that appends in rank order keeps rank order.
class TreeFold {
 public:
  virtual ~TreeFold() = default;
  /// Adds a child subtree's merged part, as its encoded() gave it; `from` is the child's rank.
  virtual void add(int from, const std::string& child) = 0;
  /// What this rank holds now, encoded, for its parent.
  virtual std::string encoded() const = 0;
};

/// A binomial-tree reduction to rank 0 over point-to-point messages: in round k (k = 0, 1, ...)
/// a rank r with bit k set sends fold.encoded() to r - 2^k and leaves; a rank without it
/// receives from r + 2^k (when that rank exists) and adds it. ceil(log2(size)) rounds; rank 0
/// receives at most that many messages, each a subtree already merged, and its fold then holds
/// every rank's. Returns the bytes this rank received. `send` and `recv` move one message; their
/// errors, and fold.add's, propagate. Shared by MpiComm and the tests' in-process Comm.
uint64_t binomial_reduce(int rank, int size, TreeFold& fold,
                         const std::function<void(int to, const std::string& bytes)>& send,
                         const std::function<std::string(int from)>& recv);

/// One ioprobe process among `size()`. Rank 0 drives: it alone prints and writes files.
/// Collectives must be called by every rank in the same order. A collective given a timeout
/// (seconds, 0 = none) that has not completed by then prints which rank and host waited in which
/// step and ends the whole job (exit 1): no rank hangs on a peer that is stuck or gone.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Hosts in the job: groups of ranks that share memory (MPI_COMM_TYPE_SHARED), numbered
  /// 0..host_count()-1 in the order of their lowest rank.
  virtual int host_count() const = 0;
  virtual int host_index() const = 0;
  virtual int local_rank() const = 0;  // rank among the ranks of this host
  virtual int local_size() const = 0;
  virtual const std::string& launcher() const = 0;
  virtual const std::string& hostname() const = 0;
  bool multi() const { return size() > 1; }

  /// Waits for every rank.
  virtual void barrier(const char* step, double timeout_s) = 0;
  /// Waits for every rank of this host only.
  virtual void host_barrier(const char* step) = 0;
  /// Every rank's `mine`, in rank order, on rank 0 (an empty vector on the others).
  virtual std::vector<std::string> gather(const std::string& mine, const char* step, double timeout_s) = 0;
  /// Every rank's `mine`, in rank order, on every rank.
  virtual std::vector<std::string> allgather(const std::string& mine, const char* step, double timeout_s) = 0;
  /// Rank 0's `value` on every rank.
  virtual std::string broadcast(const std::string& value, const char* step, double timeout_s) = 0;
  /// Element-wise maximum over ranks of `values` (n elements), in place on every rank.
  virtual void allreduce_max(int64_t* values, int n, const char* step, double timeout_s) = 0;
  /// Every rank's fold merged into rank 0's along a binomial tree (binomial_reduce): rank 0
  /// receives ceil(log2(size)) merged subtrees instead of size - 1 parts. Returns the bytes this
  /// rank received. An exception from fold.add propagates on the rank that merged; the ranks
  /// waiting for it are then ended by the watchdog (`timeout_s`) or by that rank's abort.
  virtual uint64_t reduce_tree(TreeFold& fold, const char* step, double timeout_s) = 0;
  /// Ends every rank of the job with `exit_code` (MPI_Abort); the local one simply exits.
  [[noreturn]] virtual void abort(int exit_code) = 0;

  /// Seconds make_comm took to set the job up (MPI_Init, the host grouping, the watchdog);
  /// 0 for a LocalComm.
  double init_s() const { return init_s_; }
  /// core/clock.hpp's now_ns() when make_comm returned: the start of the command's own set-up.
  int64_t ready_ns() const { return ready_ns_; }
  /// Set by make_comm.
  void set_init_times(double init_s, int64_t ready_ns) {
    init_s_ = init_s;
    ready_ns_ = ready_ns;
  }

 private:
  double init_s_ = 0;
  int64_t ready_ns_ = 0;
};

/// A job of one process: every collective returns at once with this rank's own values.
class LocalComm final : public Comm {
 public:
  LocalComm();
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int host_count() const override { return 1; }
  int host_index() const override { return 0; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  const std::string& launcher() const override { return launcher_; }
  const std::string& hostname() const override { return hostname_; }
  void barrier(const char*, double) override {}
  void host_barrier(const char*) override {}
  std::vector<std::string> gather(const std::string& mine, const char*, double) override { return {mine}; }
  std::vector<std::string> allgather(const std::string& mine, const char*, double) override { return {mine}; }
  std::string broadcast(const std::string& value, const char*, double) override { return value; }
  void allreduce_max(int64_t*, int, const char*, double) override {}
  uint64_t reduce_tree(TreeFold&, const char*, double) override { return 0; }
  [[noreturn]] void abort(int exit_code) override;

 private:
  std::string launcher_ = "none";
  std::string hostname_;
};

/// The job's communicator: MpiComm when a launcher started more than one process (MPI_Init is
/// called here, MPI_Finalize at exit), LocalComm otherwise. Throws UsageError when a launcher
/// started several processes but this binary was built without MPI, naming the launcher and
/// the fix. Call once, before any thread starts.
std::unique_ptr<Comm> make_comm(int* argc, char*** argv);

}  // namespace ioprobe::comm
