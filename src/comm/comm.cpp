#include "comm/comm.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"

extern char** environ;

namespace ioprobe::comm {

#ifdef IOPROBE_HAVE_MPI
std::unique_ptr<Comm> make_mpi_comm(int* argc, char*** argv, const LaunchInfo& launch);  // mpi_comm.cpp
#endif

namespace {

int to_int(const std::map<std::string, std::string>& env, const char* name, int fallback) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return fallback;
  char* end = nullptr;
  long v = std::strtol(it->second.c_str(), &end, 10);
  return (end && *end == '\0' && v >= 0 && v < (1L << 30)) ? static_cast<int>(v) : fallback;
}

std::string this_hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

LaunchInfo detect_launcher(const std::map<std::string, std::string>& env) {
  LaunchInfo li;
  auto has = [&](const char* n) { return env.count(n) != 0; };
  auto value = [&](const char* n) {
    auto it = env.find(n);
    return it == env.end() ? std::string() : it->second;
  };
  // A step without SLURM_MPI_TYPE whose PMI variables are Slurm's PMI-2 plugin's, not another
  // launcher's: hydra also sets PMI_FD and PMI_RANK, but not the plugin's PMI2_SUN_PATH.
  const bool slurm_pmi2_vars = has("PMI_FD") && has("PMI_RANK") && !has("PMIX_RANK") && has("PMI2_SUN_PATH");
  if (has("OMPI_COMM_WORLD_SIZE")) {
    // mpirun inside a Slurm allocation also passes SLURM_* on: OpenMPI's own variables come first.
    li.launcher = "OpenMPI mpirun";
    li.size = to_int(env, "OMPI_COMM_WORLD_SIZE", 1);
    li.rank = to_int(env, "OMPI_COMM_WORLD_RANK", 0);
    // OpenMPI 4's mpirun also sets PMIX_RANK; under srun --mpi=pmix only the PMIx variables exist.
  } else if (has("SLURM_STEP_ID") && has("SLURM_PROCID") && (has("SLURM_STEP_NUM_TASKS") || has("SLURM_NTASKS")) &&
             (has("SLURM_MPI_TYPE") || slurm_pmi2_vars || (!has("PMIX_RANK") && !has("PMI_RANK")))) {
    // A task of a Slurm job step (a batch script itself has no SLURM_STEP_ID). srun names the MPI
    // plugin it started in SLURM_MPI_TYPE (from --mpi or slurm.conf's MpiDefault); that plugin's
    // server (PMIx, PMI-2) is what lets MPI_Init connect the tasks. Without one ("none" or unset)
    // each task is on its own. PMI variables in a step without SLURM_MPI_TYPE are another
    // launcher's (MPICH's hydra or prterun inside an allocation start their daemons with srun),
    // unless they carry the PMI-2 plugin's marks (slurm_pmi2_vars).
    const std::string plugin = value("SLURM_MPI_TYPE");
    li.mpi_plugin = !plugin.empty() ? plugin : slurm_pmi2_vars ? "pmi2" : "none";
    li.launcher = li.mpi_plugin == "none" ? "Slurm srun (no MPI plugin)" : "Slurm srun --mpi=" + li.mpi_plugin;
    li.rank = to_int(env, "SLURM_PROCID", 0);
    li.size = to_int(env, "SLURM_STEP_NUM_TASKS", to_int(env, "SLURM_NTASKS", 1));
  } else if (has("PMIX_RANK") && has("PMIX_NAMESPACE")) {
    li.launcher = "PMIx (prterun)";
    li.rank = to_int(env, "PMIX_RANK", 0);
    // PMIx publishes the job size through its API, not the environment.
    li.size = to_int(env, "PMIX_SIZE", 0);  // 0: unknown, MPI_Init tells
  } else if (has("PMI_RANK") && has("PMI_SIZE")) {
    li.launcher = "MPICH hydra (PMI)";
    li.rank = to_int(env, "PMI_RANK", 0);
    li.size = to_int(env, "PMI_SIZE", 1);
  }
  return li;
}

LaunchInfo detect_launcher() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    std::string name(*e, static_cast<size_t>(eq - *e));
    if (name.rfind("OMPI_COMM_WORLD_", 0) == 0 || name.rfind("PMIX_", 0) == 0 || name.rfind("PMI_", 0) == 0 ||
        name.rfind("PMI2_", 0) == 0 || name.rfind("SLURM_", 0) == 0)
      env.emplace(std::move(name), eq + 1);
  }
  return detect_launcher(env);
}

std::string srun_without_mpi_plugin(const LaunchInfo& li) {
  if (li.mpi_plugin != "none" || li.size <= 1) return {};
  return fmt::format(
      "started by {} as one of {} tasks: srun started no MPI plugin (SLURM_MPI_TYPE is not set: no --mpi option "
      "and slurm.conf's MpiDefault is none), so MPI cannot connect the tasks and each would run alone. Run "
      "'srun --mpi=pmix -n {} ioprobe ...' ('srun --mpi=list' lists this Slurm's plugins; MpiDefault=pmix in "
      "slurm.conf makes it the default), or mpirun inside the allocation",
      li.launcher, li.size, li.size);
}

std::string srun_pmi2_needs_pmix(const LaunchInfo& li) {
  if (li.mpi_plugin != "pmi2") return {};
  return fmt::format(
      "started by srun --mpi=pmi2; this Open MPI needs PMIx: use srun --mpi=pmix ({}, {} tasks: Slurm's PMI-2 plugin "
      "served the tasks, which this Open MPI cannot use, so MPI_Init would abort every task; 'srun --mpi=list' lists "
      "this Slurm's plugins, MpiDefault=pmix in slurm.conf makes it the default; or mpirun inside the allocation)",
      li.launcher, li.size);
}

uint64_t binomial_reduce(int rank, int size, TreeFold& fold,
                         const std::function<void(int to, const std::string& bytes)>& send,
                         const std::function<std::string(int from)>& recv) {
  uint64_t got = 0;
  for (int step = 1; step < size; step *= 2) {
    if ((rank & step) != 0) {  // this subtree is complete: hand it to the parent and leave
      send(rank - step, fold.encoded());
      break;
    }
    if (rank + step < size) {
      const std::string child = recv(rank + step);
      got += child.size();
      fold.add(rank + step, child);
    }
  }
  return got;
}

LocalComm::LocalComm() : hostname_(this_hostname()) {}

void LocalComm::abort(int exit_code) { std::exit(exit_code); }

std::unique_ptr<Comm> make_comm(int* argc, char*** argv) {
  const LaunchInfo li = detect_launcher();
  if (!li.launched() || li.size == 1) return std::make_unique<LocalComm>();
#ifdef IOPROBE_HAVE_MPI
  const int64_t t0 = now_ns();
  std::unique_ptr<Comm> comm = make_mpi_comm(argc, argv, li);
  const int64_t ready = now_ns();
  comm->set_init_times(static_cast<double>(ready - t0) / 1e9, ready);
  return comm;
#else
  (void)argc;
  (void)argv;
  if (li.size == 0) return std::make_unique<LocalComm>();  // a PMIx launch of unknown size: nothing to refuse
  // A Slurm step without an MPI plugin runs independent copies: refuse rather than have N
  // processes each write the same files and print N reports.
  throw UsageError(fmt::format(
      "started by {} as one of {} processes, but this ioprobe was built without MPI: each process would run alone "
      "and report alone. Install an MPI library (Debian: apt-get install libopenmpi-dev openmpi-bin) and rebuild "
      "(tools/build), or run ioprobe without a launcher on one host",
      li.launcher, li.size));
#endif
}

}  // namespace ioprobe::comm
