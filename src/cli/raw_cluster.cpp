#include "cli/raw_cluster.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "cluster/collective.hpp"
#include "cluster/gather.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe::cli {

std::string process_raw_filename(const RawConfig& cfg, int rank, std::string* how) {
  struct stat st {};
  if (stat(cfg.filename.c_str(), &st) == 0) {
    if (S_ISBLK(st.st_mode)) {
      if (pattern_is_write(cfg.rw))
        throw UsageError(fmt::format("--filename {} is a block device: across hosts ioprobe raw only reads a device "
                                     "(every process would write the same blocks); use --rw read or randread, or give "
                                     "a file path (each process then writes its own PATH.rank<R>)",
                                     escape_bytes(cfg.filename)));
      *how = fmt::format("the block device {}, read by every process", escape_bytes(cfg.filename));
      return cfg.filename;
    }
    if (S_ISDIR(st.st_mode))
      throw UsageError(fmt::format("--filename {} is a directory: give a file path; across hosts each process uses "
                                   "PATH.rank<R>, e.g. --filename {}/raw.bin",
                                   escape_bytes(cfg.filename), escape_bytes(cfg.filename)));
  }
  *how = fmt::format("one per process: {}.rank<R> for MPI rank R (laid out by ioprobe when missing, and then removed "
                     "at the end)",
                     escape_bytes(cfg.filename));
  return cfg.filename + ".rank" + std::to_string(rank);
}

RawStartHook raw_start_on_hosts(comm::Comm& comm, double timeout_s, double* skew_s) {
  return [&comm, timeout_s, skew_s](std::exception_ptr setup) {
    cluster::on_every_host(comm, "set up the raw jobs", [&] {
      if (setup) std::rethrow_exception(setup);
    });
    comm.barrier("start of the raw jobs", timeout_s);
    const int64_t t0 = now_ns();
    comm.barrier("start of the raw jobs (skew)", timeout_s);
    *skew_s = static_cast<double>(now_ns() - t0) / 1e9;
  };
}

cluster::ClusterRaw gather_raw(comm::Comm& comm, const cluster::RawProcessPart& mine, bool time_based,
                               double timeout_s) {
  std::vector<cluster::RawProcessPart> parts = cluster::gather_parts(comm, mine, "gather the raw results", timeout_s);
  if (comm.rank() != 0) return {};
  return cluster::merge_raw_parts(std::move(parts), time_based);
}

}  // namespace ioprobe::cli
