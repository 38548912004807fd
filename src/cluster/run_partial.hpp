// A multi-host run's parts merged over a subtree of processes: what the run's gather sends up
// comm::Comm::reduce_tree's binomial tree, so rank 0 receives log2(processes) merged subtrees
// instead of one full part per process.
//
// What is kept, and why (the report's needs): the merged LoaderResult (every GPU rank's and
// worker's row, as the document lists them, with their counters; the latency histograms and
// timeline merged once for the whole job) and one row per host (the Hosts table: its processes,
// counters, first/last finish, lowest AU, target, device accounting, and the host's own
// file-latency histogram for its p99). Not kept: each worker's file and open latency histograms,
// each rank's batch-wait histogram and timeline, once they are added into the job's (the
// document shows only the job's), so bytes at rank 0 grow with the rows, not with histograms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/run_parts.hpp"
#include "stats/histogram.hpp"

namespace ioprobe::cluster {

/// One host's processes merged so far: the row's identity (from its lowest rank), its counters,
/// and its file-latency histogram (for the row's p99).
struct HostPartial {
  HostRow row;                    // counters summed, first/last done min/max, au_min = min over its GPU ranks
  LatencyHistogram file_latency;  // its processes' file latency, ns, added
  bool has_ranks = false;         // any GPU rank seen (else au_min reads 0)
};

/// A block of consecutive MPI ranks' parts, merged.
struct RunPartial {
  LoaderResult merged;             // LoaderResult::merge in rank order, compacted (see the file comment)
  std::vector<HostPartial> hosts;  // by host index
  int mpi_ranks = 0;
  double start_skew_s = 0;      // max over processes
  uint64_t step_exchanges = 0;  // max over processes
  double exchange_s = 0;        // max over processes
  double init_s = 0;            // max over processes: ProcessPart::init_s
  double setup_s = 0;           // max over processes: ProcessPart::setup_s
  double finish_wait_s = 0;     // max over processes: ProcessPart::finish_wait_s

  /// Adds `higher`, which covers the ranks just above this one's (comm::TreeMerge's order): the
  /// loader results merge in rank order; a host in both keeps this one's identity fields.
  /// Throws UsageError as LoaderResult::merge does.
  void merge(const RunPartial& higher);
};

/// One process's part as a partial of one rank (the per-worker and per-rank histograms and
/// timelines dropped once added into the totals).
RunPartial partial_of(const ProcessPart& p);

/// The cluster's result from a partial of every rank: host rows with their rates and p99,
/// resources summed once per host, warnings (stragglers, duplicate host names, targets that
/// differ, hosts without RAM size). The coordination's gather figures are left 0 (the caller
/// times the gather).
ClusterRun finish_partial(RunPartial p);

/// nlohmann's hooks (cluster/gather.hpp); from_json is strict (core/json_field.hpp).
void to_json(nlohmann::json& j, const RunPartial& p);
void from_json(const nlohmann::json& j, RunPartial& p);

}  // namespace ioprobe::cluster
