// The resolved, read-only plan of a DataLoader run, shared by `ioprobe run` and `ioprobe tune`:
// options flow one way, RunConfig (validated options, enums) -> prepare_run (the one preflight)
// -> RunPlan, from which each part takes its slice (the loader its finished LoaderConfig, the
// ingest analysis its Demand, the report the target and dataset sections).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/run_config.hpp"
#include "cli/run_prepare.hpp"
#include "dataset/size_sample.hpp"
#include "ingest/analysis.hpp"
#include "loader/config.hpp"
#include "topology/numa.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

/// What the command adds to the preflight.
struct PrepareOptions {
  /// The most num_workers any run of the command will use (tune: its largest), for the open-files
  /// check made before a dataset is generated; 0: the config's --workers.
  uint32_t max_workers = 0;
  /// The job's processes (a launcher's ranks), each running the config's --gpus ranks: the
  /// DistributedSampler's world is their product (check_rank_shares, the drop_last check).
  uint32_t processes = 1;
  /// Capacity varies the rank count per point: no rank-share check here (it bounds its search).
  bool check_rank_shares = true;
};

/// Everything decided before the first read. Built once by prepare_run and then only read (the
/// commands hold it const): a run's place in the job, tune's settings and capacity's points are
/// new LoaderConfig values made from `loader` (loader/config.hpp in_job, with_ranks, ...;
/// tune/tune_run.hpp setting_run_config; capacity/capacity_run.hpp repeat_config).
struct RunPlan {
  RunConfig config;                  // the validated options the plan was made from
  std::string model;                 // catalog model key (the preset's, else resnet50)
  Demand demand;                     // the GPUs' ingest demand
  PreparedData data;                 // files, record layout, "dataset" section, warnings so far
  std::vector<TargetShare> targets;  // filesystems read, most bytes first (one unless a file list spans several)
  std::string cache_detail;          // how cold/warm is achieved (report text)
  std::string engine_reason;         // why loader.engine
  std::string numa_reason;           // why loader.placement
  LoaderConfig loader;               // finished: engine, direct, eviction, placement and step time decided
  Topology topo;                     // NUMA nodes and PCI devices (topology/numa.hpp)
  uint64_t samples_per_epoch = 0;    // records for sharded/token datasets, files otherwise
  uint64_t rank_units = 0;           // what ranks are dealt per epoch: shards of a sharded dataset, else samples
  const char* rank_unit = "samples";
  /// The files' sizes: those the index knows, plus a stat of up to 1,000 files spread over the
  /// index where it does not (a --data walk lists names only); dataset/size_sample.hpp.
  SizeSample sizes;
  /// Bytes per sample for the bytes/s demand before any read: --sample-bytes, else the dataset's
  /// mean (bytes of its records or files / samples; a file list: of the listed files that exist;
  /// a --data walk: the mean of the stat'ed sample, `dataset_bytes_basis` then says so); 0 when
  /// no size is known.
  double dataset_sample_bytes = 0;
  /// How the dataset's bytes are known when not exactly ("estimated from the sizes of 1000 of the
  /// 4096 files"); empty when exact (or unknown).
  std::string dataset_bytes_basis;
  bool interrupted = false;  // dataset generation stopped by a signal: nothing else is set

  /// The target reported as "target": the filesystem holding the most bytes.
  const TargetInfo& target() const { return targets.front().info; }
};

/// The catalog model a run's demand is for: the preset's, else resnet50.
std::string plan_model(const RunConfig& c);

/// The GPU step time of one batch in seconds, as prepare_run sets it: --step-time, else the batch
/// size over the demand's samples/s per GPU. Known before the dataset (capacity checks its budget
/// with it).
double plan_step_time_s(const RunConfig& c, const Demand& d);

/// The preflight of run and tune, in order: the GPU demand (a typo in --gpu costs nothing), the
/// open-files limit, the dataset (generated, walked or listed), the filesystems it lives on, the
/// NUMA placement, O_DIRECT / buffered and the engine, the step time, and the checks that need
/// the enumerated dataset (drop_last; every GPU rank gets a share, check_rank_shares). Throws UsageError (exit 2) and
/// Error/IoError (exit 1) as the steps above document; returns with `interrupted` set when generation was stopped.
RunPlan prepare_run(const RunConfig& c, const PrepareOptions& o = {});

/// The result document's "dataset" section before any read (tune, capacity): the prepared
/// dataset's section with "bytes" (its files' bytes: exact, or estimated from `sizes`; 0 when
/// unknown) and, for an estimate, "bytes_basis".
DatasetSection plan_dataset_section(const RunPlan& plan);

/// The result document's "target" section of a plan read with loader settings `l` (run: its
/// loader; tune: the sweep's base): the probed target plus cache, direct, engine and their reasons.
TargetSection plan_target_section(const RunPlan& plan, const LoaderConfig& l);

}  // namespace ioprobe::cli
