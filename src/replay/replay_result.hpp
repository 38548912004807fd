// What a replay of a recorded trace measured, as one mergeable value: the streams of one process
// merge into the process's result, the processes of a multi-host replay into the cluster's, with
// the one merge() below (fio's sum_thread_stats: counts add, histograms add, elapsed is the
// longest). Its JSON codec lives beside it (to_json / from_json), so a result crosses hosts and
// files in one form; decoding is strict and names the path of a missing or mistyped field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error_record.hpp"
#include "stats/histogram.hpp"

namespace ioprobe::replay {

/// One replayed stream (one recorded thread). Times in ns, sizes in bytes.
struct StreamResult {
  int32_t pid = 0;  // the recorded process and thread
  int32_t tid = 0;
  int32_t rank = 0;                 // the recorded rank it replays
  int32_t replay_rank = 0;          // the process of this replay that ran it (MPI rank, 0 alone)
  std::string role;                 // "main", "worker N", "thread", "process"
  uint64_t ops = 0;                 // ops replayed (every kind)
  uint64_t reads = 0;               // read requests issued (mapped ranges included)
  uint64_t bytes = 0;               // bytes the reads returned (mapped ranges included)
  uint64_t mapped_bytes = 0;        // of `bytes`, read for mapped ranges (estimated: see MappedShare)
  uint64_t errors = 0;              // ops that failed here and had not failed in the recording
  int64_t elapsed_ns = 0;           // from the replay's start to the stream's last op
  int64_t recorded_elapsed_ns = 0;  // the same in the recording (its first op's start counts from 0)
  int64_t read_ns = 0;              // time blocked in reads (wall time of the read requests)
  int64_t recorded_read_ns = 0;     // the same ops' recorded durations
  int64_t stall_ns = 0;             // sum over reads of max(0, replayed duration - recorded duration)
  uint64_t slower_reads = 0;        // reads that took longer than recorded
  int64_t gap_ns = 0;               // compute replayed between ops (burned + slept)
  int64_t dependency_wait_ns = 0;   // time a main stream waited for its workers' progress (batches)
  bool operator==(const StreamResult&) const = default;
};

/// The training step timeline of the main process of one recorded rank: its batch waits as
/// recorded and as replayed. AU = compute / (compute + wait), MLPerf Storage's accelerator
/// utilization, where compute is the recorded step (time between a batch in hand and the next
/// request).
struct BatchTimeline {
  uint64_t batches = 0;            // batches waited for (batch_wait_begin/end pairs)
  int64_t recorded_step_ns = 0;    // summed training step between batches, as recorded
  int64_t recorded_wait_ns = 0;    // summed batch wait, as recorded
  int64_t replayed_step_ns = 0;    // summed step replayed (0 with --as-fast-as-possible)
  int64_t replayed_wait_ns = 0;    // summed batch wait on this storage
  LatencyHistogram replayed_wait;  // per-batch wait on this storage, ns

  /// Recorded AU, fraction 0..1 (0 with no batches).
  double recorded_au() const;
  /// AU on this storage, with the recorded step as compute, fraction 0..1.
  double replayed_au() const;
};

/// Everything measured by one replay (one process, or a whole cluster once merged).
struct ReplayResult {
  std::vector<StreamResult> streams;
  LatencyHistogram read_latency;  // per read request, ns
  LatencyHistogram open_latency;  // per open, ns
  BatchTimeline timeline;
  int64_t elapsed_ns = 0;           // from the common start to the last stream's end
  int64_t recorded_elapsed_ns = 0;  // the replayed streams' span in the recording
  uint64_t bytes = 0;               // read bytes, every stream
  uint64_t mapped_bytes = 0;        // of those, mapped ranges replayed as reads (estimated)
  uint64_t ops = 0;
  uint64_t errors = 0;
  ErrorRecord first_error;  // empty() when none
  bool partial = false;     // interrupted
  uint64_t processes = 1;   // replay processes merged into this one

  /// Adds `other` (another process's result of the same replay, started at the same moment):
  /// streams appended, counts and bytes added, histograms added bucket by bucket, elapsed the
  /// longest of the two, partial when either is, the first error this one's else other's.
  void merge(const ReplayResult& other);
  /// Bytes per second over elapsed (0 when nothing elapsed).
  double bytes_per_s() const;
  /// Share of the time the streams spent blocked in reads (read_ns summed / elapsed summed), 0..1.
  double read_share() const;
};

void to_json(nlohmann::json& j, const StreamResult& s);
void to_json(nlohmann::json& j, const BatchTimeline& t);
void to_json(nlohmann::json& j, const ReplayResult& r);
/// Histograms are stats/latency_json.hpp's histogram_ns_json objects. Strict decoding
/// (core/json_field.hpp): every field present and of its type, else UsageError "PATH: missing key
/// 'FIELD'" or "PATH.FIELD: expected TYPE, found VALUE". `path` names the object in messages.
StreamResult stream_result_from_json(const nlohmann::json& j, const std::string& path);
BatchTimeline batch_timeline_from_json(const nlohmann::json& j, const std::string& path);
ReplayResult replay_result_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace ioprobe::replay
