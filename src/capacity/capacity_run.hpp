// Measures one point of the capacity search: `gpus` emulated accelerators (GPU ranks, each with
// its own DataLoader of the plan's num_workers), run `repeats` times for `point_s` seconds with
// the loader (loader/loader_run.hpp), rates from sample completion times (tune/tune_run.hpp
// steady_sample), and whether the client rather than the storage set the limit.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "capacity/search.hpp"
#include "dataset/file_index.hpp"
#include "dataset/record_layout.hpp"
#include "loader/config.hpp"
#include "loader/loader_result.hpp"
#include "topology/numa.hpp"
#include "tune/sweep.hpp"

namespace ioprobe {

/// A point is client-bound when the process used at least this fraction of its allowed CPUs
/// (user + sys CPU time / wall time / CPUs allowed). Chosen by us, the same 0.85 the run's
/// CPU-bound verdict uses (ingest/analysis.cpp).
constexpr double kClientCpuSaturated = 0.85;

/// ... or when the emulated GPUs' threads overran their steps by at least this fraction of their
/// time (elapsed - waited - nominal step time, over elapsed; a host too busy to wake its
/// consumers on time). Chosen by us: 5%, half the 10% AU margin of MLPerf Storage's 90% floor.
constexpr double kClientLagMax = 0.05;

/// ... or when its workers waited for a CPU at least ingest/analysis.hpp kCpuStarvedShare of
/// their busy time (other processes on the host took its CPUs).

// Each run of a point lasts at least kMinWarmupS + kMinStepsPerPoint GPU step times (longer than
// --point-time when the steps are long), so that every rank completes several batches in the
// steady window: point_run_s below, through tune/sweep.hpp lengthened_run_s (tune's settings too).

/// What one repeat of a point measured.
struct RepeatSample {
  double samples_per_s = 0, bytes_per_s = 0;     // steady window, from completion times
  double au = 0, au_min = 0;                     // mean and lowest rank, fraction
  double cpu_fraction = 0;                       // CPU s / wall s / allowed CPUs
  double consumer_lag = 0;                       // fraction, see kClientLagMax
  double decode_us_per_sample = 0;               // --decode jpeg: workers' decode CPU per sample decoded, µs (0: none)
  double open_share = 0;                         // open+close share of each file's time, fraction
  double worker_busy = 0, worker_cpu_share = 0;  // ingest/analysis.hpp WorkerLoad, fractions
  double worker_runq_share = 0;                  // WorkerLoad::runq_share; -1 not measured
  uint64_t bytes = 0;                            // bytes the GPU ranks took over the whole run
  bool steady = false;
};

/// The repeat's figures from a loader result: steady_sample for the rates and AU when it could
/// take them from completion times, else the whole run's (samples / elapsed, each rank's
/// nominal step time / elapsed) with `steady` false; plus CPU, consumer lag and open share.
/// `min_steady_samples`: as steady_sample's. Pure.
RepeatSample repeat_sample(const LoaderResult& r, const LoaderConfig& c, int cpus_allowed, uint64_t min_steady_samples);

/// Summarizes the repeats of `gpus`: medians of AU, samples/s, bytes/s, CPU and lag; the lowest
/// au_min; spread of samples/s; client_bound when the median CPU fraction >= kClientCpuSaturated
/// or the median lag >= kClientLagMax or the workers' median run-queue share >= kCpuStarvedShare
/// (the note says which, with the figure); else workers_bound
/// when the median worker load is (ingest/analysis.hpp workers_bound); else metadata_bound when
/// the median open share >= 0.5; delivered_bytes the repeats' bytes summed. With `hosts` (a point
/// measured across hosts) the client is judged per host instead: client_bound when a host row is,
/// client_host the first such host, the note "on host X: why" for each. Pure.
CapacityPoint summarize_repeats(uint32_t gpus, const std::vector<RepeatSample>& runs,
                                const std::vector<CapacityHostRow>* hosts = nullptr);

/// Why a client with this CPU fraction, consumer lag and workers' run-queue share limited a point
/// (kClientCpuSaturated, kClientLagMax, kCpuStarvedShare; a negative runq_share is not measured);
/// empty when it did not. Pure.
std::vector<std::string> client_notes(double cpu_fraction, double consumer_lag, double runq_share = -1);

struct PointRunOptions {
  uint32_t repeats = 2;
  double point_s = 3;  // seconds per repeat (the loader's duration)
  int cpus_allowed = 1;
  int64_t deadline_ns = 0;  // core/clock now_ns() scale; 0 = none
  /// Called just before each repeat's loader run (device accounting marks its start).
  std::function<void(uint32_t gpus, uint32_t repeat)> before_repeat;
};

/// How long each repeat of a point with `step_time_s` GPU steps runs: max(point_s, kMinWarmupS +
/// kMinStepsPerPoint x step_time_s).
double point_run_s(double point_s, double step_time_s);

/// The least time a point of `repeats` runs needs, seconds: repeats x (point_run_s(point_s,
/// step_time_s) + kRunOverheadS). measure_point() skips a point when less is left before the
/// deadline, so a search budget below this measures nothing.
double point_need_s(uint32_t repeats, double point_s, double step_time_s);

/// The loader configuration of one repeat: `base` with `ranks` GPU ranks of a job of
/// `world_ranks` (0: this process alone) starting at `first_rank`, `run_s` seconds, seed + repeat,
/// the tune timeline interval, deliveries recorded.
LoaderConfig repeat_config(const LoaderConfig& base, uint32_t ranks, uint32_t world_ranks, uint32_t first_rank,
                           double run_s, uint32_t repeat);

/// The note a point gets when its runs were lengthened past point_s ("" when not).
std::string lengthened_note(double run_s, double point_s, double step_time_s);

/// Called after each repeat (for progress lines).
using RepeatDoneFn = std::function<void(uint32_t gpus, uint32_t repeat, const RepeatSample& s)>;

/// Runs `gpus` ranks `o.repeats` times on copies of `base` (ranks, duration = max(o.point_s,
/// kMinWarmupS + kMinStepsPerPoint x step time; the note says when lengthened), seed per repeat,
/// 0.5 s timeline, deliveries recorded). std::nullopt when the deadline leaves no room for every
/// repeat of the point, or on SIGINT/SIGTERM. Throws Error when reads failed so that the run
/// stopped (naming the first failure) or a worker's engine cannot be set up.
std::optional<CapacityPoint> measure_point(const FileIndex& index, const LoaderConfig& base, uint32_t gpus,
                                           const PointRunOptions& o, const Topology& topo, const RecordLayout* layout,
                                           const RepeatDoneFn& done = {});

}  // namespace ioprobe
