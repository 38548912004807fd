// `ioprobe raw` on many hosts: the steps of cmd_raw that differ when mpirun / srun started
// several ioprobe processes (cluster/ merges; this file wires it to the raw configuration).
//
// Which file each process uses: never one another's. A file path (existing or not) becomes
// PATH.rank<R> for MPI rank R, on a shared filesystem and on node-local disks alike, so no two
// processes ever write, or lay out, the same file; one that this run created is removed at its
// end (a file that existed is used and left, with the layout rules of raw/raw_target.hpp). A
// block device is read by every process as given, and only read: a write test on a device
// across processes is refused before anything is opened for writing.
#pragma once

#include <string>

#include "cluster/raw_parts.hpp"
#include "comm/comm.hpp"
#include "raw/raw_config.hpp"
#include "raw/raw_run.hpp"

namespace ioprobe::cli {

/// The path process `rank` of a multi-process job uses for `cfg.filename` (see above); `how`
/// receives one line for the report. Throws UsageError for a write test on a block device and
/// for a directory.
std::string process_raw_filename(const RawConfig& cfg, int rank, std::string* how);

/// The start of the raw jobs on every process: each learns whether any process failed to set up
/// its jobs (then JobFailure on every rank, naming host, rank and error), then two barriers
/// (`timeout_s` each, the watchdog's); the second one's duration is stored in `*skew_s`, an
/// upper bound on how far apart the processes started their clocks.
RawStartHook raw_start_on_hosts(comm::Comm& comm, double timeout_s, double* skew_s);

/// Sends this process's part to rank 0 and there merges every process's (merge_raw_parts).
/// `timeout_s` bounds the wait for the slowest process (0: none). Meaningful on rank 0 only.
cluster::ClusterRaw gather_raw(comm::Comm& comm, const cluster::RawProcessPart& mine, bool time_based,
                               double timeout_s);

}  // namespace ioprobe::cli
