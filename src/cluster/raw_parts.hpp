// A multi-host `ioprobe raw` run's results: what each process sends to rank 0 after its jobs
// finished, and what rank 0 makes of them (the merged result, one row per host).
//
// Merge rules as for the loader (cluster/run_parts.hpp): every process times its jobs on its
// own monotonic clock from the common start barrier; the cluster's elapsed time is the maximum
// over processes; I/Os and bytes add, so aggregate IOPS and MB/s = totals / that time; latency
// percentiles come from the histograms added bucket by bucket (RawResults::merge).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "raw/raw_results.hpp"
#include "topology/device_io.hpp"

namespace ioprobe::cluster {

/// One process's share of a raw run, as sent to rank 0.
struct RawProcessPart {
  int rank = 0;        // MPI rank
  int host_index = 0;  // comm::Comm::host_index()
  std::string hostname;
  std::string filename;     // the file or device this process read or wrote (escaped for display)
  double start_skew_s = 0;  // seconds this process waited in the second start barrier (upper bound)
  nlohmann::json target;    // the raw document's "target" section as this process saw it
  RawResults result;
  // Its host's devices from before the common start barrier to the end of its own jobs
  // (DeviceIoRecorder marks; every process of a host counts the same devices).
  DeviceIo device_io;
};

/// nlohmann's hooks (cluster/gather.hpp): every field, the result by raw/raw_results_json.hpp and
/// the accounting by topology/device_io_json.hpp. from_json is strict: a missing or mistyped
/// field throws UsageError naming its path ("raw part.result.ios").
void to_json(nlohmann::json& j, const RawProcessPart& p);
void from_json(const nlohmann::json& j, RawProcessPart& p);

/// One host: its processes' results merged.
struct RawHostRow {
  std::string hostname;
  int host_index = 0;
  std::vector<int> mpi_ranks;
  std::vector<std::string> files;  // one per process, in rank order
  RawResults result;               // its processes merged (elapsed = its slowest process)
  double first_done_s = 0;         // its earliest process to finish, from the common start (s)
  double last_done_s = 0;          // its latest (= result.elapsed_s)
  nlohmann::json target;           // its first process's target section
  bool straggler = false;          // see merge_raw_parts
  DeviceIo device_io;              // its devices, counted once for the host (host_device_io of its processes')
};

struct ClusterRaw {
  RawResults merged;              // every process's result merged (RawResults::merge), rank 0's first
  std::vector<RawHostRow> hosts;  // by host index
  int mpi_ranks = 0;
  double start_skew_s = 0;            // max over processes (s)
  DeviceIo device_io;                 // the host rows' device_io added (DeviceIo::merge): each host counted once
  std::vector<std::string> warnings;  // stragglers, duplicate host names, targets that differ
};

/// How far below the fastest host's IOPS a host may deliver (a --runtime run: every host ran
/// equally long), or how far behind the fastest host it may finish (one pass over the region),
/// before it is flagged a straggler: 10%, as for `run` (cluster/run_parts.hpp kStragglerMargin).
constexpr double kRawStragglerMargin = 0.10;
/// A one-pass run's host is flagged only when it also finished this many seconds after the first
/// host: in runs of a few milliseconds a 10% gap is scheduling noise, not a slow host. Chosen by us.
constexpr double kRawStragglerMinLagS = 0.1;

/// Merges the parts (one per process, any order) into the cluster's result and host rows; each
/// host's device accounting is its processes' host_device_io (counted once per host, not per
/// process), and the cluster's is the hosts' added.
/// `time_based`: the run had a --runtime (stragglers judged by rate, else by finish time).
ClusterRaw merge_raw_parts(std::vector<RawProcessPart> parts, bool time_based);

}  // namespace ioprobe::cluster
