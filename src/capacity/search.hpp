// The capacity search: how many emulated accelerators of one kind the storage feeds at AU >= the
// target. Grows the GPU rank count by doubling until a count fails, then bisects between the
// last count that passed and the first that failed, so the answer N passes and N+1 fails, both
// measured. A pure function over a "measure point" callback (capacity/capacity_run.hpp measures
// with the loader; the unit tests replay recorded tables).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ioprobe {

/// One host's share of a point measured across hosts (capacity/capacity_across.hpp): its repeats
/// summarized as the point's are, from the host's own processes merged.
struct CapacityHostRow {
  std::string hostname;
  int host_index = 0;
  std::vector<int> mpi_ranks;  // the processes of this host that sent their part of every repeat
  uint32_t gpus = 0;           // emulated accelerators (GPU ranks) it ran at this point
  int cpus_allowed = 0;        // the host's CPUs its processes may use (its first process's)
  double au = 0, au_min = 0;   // as CapacityPoint, over this host's GPU ranks (0 with no GPU rank)
  double samples_per_s = 0, bytes_per_s = 0;
  uint64_t delivered_bytes = 0;  // bytes its GPU ranks took, all repeats
  double cpu_fraction = 0;       // median over repeats: its processes' CPU s / wall s / cpus_allowed
  double consumer_lag = 0;       // median over repeats, as CapacityPoint
  bool client_bound = false;     // this host's client limited the point (kClientCpuSaturated, kClientLagMax)
  std::string note;              // why client-bound; "" otherwise
};

/// One measured GPU count: its repeats summarized (capacity/capacity_run.hpp summarize_repeats).
struct CapacityPoint {
  uint32_t gpus = 0;
  double au = 0;                       // median over repeats of the mean AU over ranks, fraction 0..1
  double au_min = 0;                   // lowest rank's AU over all repeats, fraction 0..1
  double samples_per_s = 0;            // median over repeats, from sample completion times
  double bytes_per_s = 0;              // median over repeats, B/s
  uint32_t repeats = 0;                // repeats measured
  double spread = 0;                   // (max - min) / median of samples/s over repeats, fraction
  double cpu_fraction = 0;             // median over repeats of process CPU time / wall / allowed CPUs, 0..1+
  double decode_us_per_sample = 0;     // --decode jpeg: median over repeats of the workers' decode CPU per sample, µs
  double consumer_lag = 0;             // median over repeats: fraction of the emulated GPUs' time they overran their
                                       // step (a busy host's threads could not keep up), 0..1
  double worker_runq_share = 0;        // median over repeats: the workers' wait for a CPU / their busy time
                                       // (ingest/analysis.hpp WorkerLoad), 0..1; -1 not measured
  bool client_bound = false;           // the client, not the storage, limited this point (see capacity_run.hpp)
  bool workers_bound = false;          // the workers fetched nearly all the time, mostly per-sample CPU work
                                       // (ingest/analysis.hpp workers_bound): num_workers, not the storage, limited it
  bool metadata_bound = false;         // open+close took most of each file's time
  bool steady = true;                  // every repeat reached a steady window
  std::string note;                    // why client-, worker- or metadata-bound, or not steady; "" otherwise
  uint64_t delivered_bytes = 0;        // bytes the GPU ranks took over all repeats (next to the devices' reads)
  std::string client_host;             // across hosts: the first host judged client-bound ("" otherwise or on one host)
  std::vector<CapacityHostRow> hosts;  // across hosts: one row per host, by host index; empty on one host
};

/// Does `p` feed its GPUs: median AU >= au_target.
bool point_passes(const CapacityPoint& p, double au_target);

/// Measures `gpus` emulated accelerators; std::nullopt when the budget (or a signal) left no time
/// for the point, which ends the search.
using MeasurePointFn = std::function<std::optional<CapacityPoint>(uint32_t gpus)>;

struct CapacitySearchOptions {
  double au_target = 0.9;    // fraction
  uint32_t max_gpus = 1024;  // the search never measures more ranks than this
  /// Asked when the callback returned nullopt: true when a signal (SIGINT/SIGTERM, on any host)
  /// rather than the budget ended the point. Unset: the budget.
  std::function<bool()> interrupted;
};

struct CapacityAnswer {
  uint32_t gpus_fed = 0;              // N: the largest count measured to pass with N+1 measured to fail
                                      // (or the largest passing count when the search stopped early)
  std::string bound;                  // what stopped it at N+1: "storage" | "metadata" | "workers" | "client-cpu" |
                                      // "limit" (every count up to max_gpus passed) | "budget" | "interrupted"
  bool boundary_measured = false;     // N (or N = 0) and N+1 both measured
  std::vector<CapacityPoint> points;  // every measured count, ascending
  std::string text;                   // one sentence for the report
};

/// Runs the search: counts 1, 2, 4, ... (capped at max_gpus) until one fails, then bisection
/// between the largest passing and the smallest failing count until they are adjacent. The
/// search stops at the first failing count; a larger count is never measured after a failure, so
/// a table that is not monotone (noise) gives the largest passing count below the first failure
/// the search met. The bound comes from the failing count N+1: client-cpu when the client was
/// the limit there ("client-bound at N: add hosts"; across hosts "client-bound on host X at N: add
/// hosts", X its client_host), metadata when opens dominated, else storage;
/// "budget" when the callback returned nullopt (out of time) before N+1 was measured, "interrupted"
/// when it did so because of a signal (o.interrupted); "limit" when
/// every count up to max_gpus passed. When N itself passed but was client-bound, the text says so
/// (whatever the bound at N+1): N is then this client's count, not necessarily the storage's.
/// Each count is measured once. Pure apart from the callback.
CapacityAnswer search_capacity(const MeasurePointFn& measure, const CapacitySearchOptions& o);

}  // namespace ioprobe
