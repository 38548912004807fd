// The validated configuration of `ioprobe run` / `ioprobe gen`: built once from the command line
// and the preset INI, then each part receives only its slice.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "dataset/spec.hpp"
#include "engine/engine_kind.hpp"
#include "ingest/analysis.hpp"
#include "loader/config.hpp"
#include "topology/numa.hpp"

namespace ioprobe::cli {

/// --cache: cold (O_DIRECT, or buffered with eviction) or warm (buffered through the page cache).
enum class CacheMode { kCold, kWarm };
/// --direct, for cold runs: auto (O_DIRECT where accepted), on (O_DIRECT or stop), off (buffered + eviction).
enum class DirectMode { kAuto, kOn, kOff };
/// --ingest-rate: which of the catalog's published rates sets the demand.
enum class RateFamily { kTraining, kEmulation };

/// The option value each enum came from ("cold", "auto", "training", ...), as the
/// reports print it.
const char* name(CacheMode m);
const char* name(DirectMode m);
const char* name(RateFamily m);

/// Which command's options are read: gen relaxes the run-only ones; tune sweeps --workers and
/// --numa itself (its own lists), so those are left at their defaults here.
enum class RunCommandKind { kRun, kGen, kTune };

struct RunConfig {
  // Dataset: generated (spec + dir) or the user's own (data_dir / file_list).
  DatasetSpec spec;
  std::string dir;  // generated dataset location
  bool dir_is_default = false;
  std::string data_dir;   // --data
  std::string file_list;  // --file-list
  bool follow_symlinks = false;
  bool regenerate = false;
  bool dataset_reuse_only = false;  // many hosts: another process prepares the dataset; only reuse it        //
                                    // --regenerate: replace a dataset of another shape in --dir

  LoaderConfig loader;  // options only: engine, direct and placement are decided by prepare_run
  CacheMode cache = CacheMode::kCold;
  DirectMode direct = DirectMode::kAuto;                    // cold runs: O_DIRECT or evict + buffered
  EngineSelection engine_request = EngineSelection::kAuto;  // --engine; the plan resolves auto
  Placement numa;            // --numa none|local|interleave|node:N, parsed (Local resolved by prepare_run)
  bool drop_caches = false;  // --drop-caches

  // GPU side.
  std::string gpu = "h100";
  bool model_given = false;  // --model, or a model= line of the preset --dataset named (not the default's)
  RateFamily rate_family = RateFamily::kTraining;
  double user_samples_per_s = 0;  // --gpu-samples-per-s (0: from catalog)
  double user_step_time_s = -1;   // --step-time (-1: from the rate)
  double sample_bytes = 0;        // --sample-bytes (0: measured mean)
  double au_target = 0.9;
  bool au_target_given = false;  // --au-target (or a preset's au-target); else the model's floor (catalog)

  std::string json_path;
  bool quiet = false;

  // --calibration: the document (calibrate/calibration.hpp) whose figures set the loader's costs.
  std::string calibration_path;
  nlohmann::json calibration;                  // null without --calibration
  std::vector<std::string> calibration_notes;  // warnings for the result document (batch size scaled)
  // Warnings for the result document about the options themselves (which of a workload file's
  // gpu and the command line's --step-time set the GPU's step time).
  std::vector<std::string> notes;

  // Many hosts (mpirun / srun).
  bool stonewall = false;      // --stonewall: the first host to finish ends every host's measurement
  double mpi_timeout_s = 300;  // --mpi-timeout: longest wait in one collective step
};

/// The option table shared by the command line and workload INI files: the dataset, loader and
/// GPU groups below plus Output (--json, --quiet, --help).
po::options_description run_options_description();

/// Option groups, reused by `ioprobe tune`. `for_tune` leaves out --workers, --prefetch-factor,
/// --numa, --epochs and --duration, which tune sweeps or sets itself.
po::options_description dataset_options_description();
po::options_description loader_options_description(bool for_tune);
po::options_description gpu_options_description();
po::options_description hosts_options_description();

/// Fills `c` from parsed options `vm` (after loading the preset INI named by --dataset into vm,
/// checked against `desc`). Options absent from `desc` take their defaults; for kTune, --workers
/// and --numa (tune's own lists) are not read. Throws UsageError.
void run_config_from_vm(po::variables_map& vm, const po::options_description& desc, RunCommandKind kind, RunConfig& c);

/// Throws UsageError when `l.drop_last` leaves no batch at all: fewer than `l.batch_size` of
/// `samples` per rank (DistributedSampler's share, rounded up); `unit` names them ("samples",
/// "records"). Called before a synthetic dataset is generated, and once --data is enumerated.
void check_drop_last_batches(const LoaderConfig& l, uint64_t samples, const char* unit);

/// DistributedSampler deals an epoch's `units` (samples; shards for a sharded dataset, which an
/// IterableDataset deals whole) to the job's GPU ranks, `l.ranks` on each of `processes`, one rank
/// each. Throws UsageError (exit 2) naming the counts and what to do when some rank would get none
/// (`run --gpus 1000 --files 402`: it reads nothing, yet its GPU counts in the demand). Returns a
/// warning when, without drop_last, every rank gets fewer of the epoch's `samples` than one
/// batch (each step a partial batch), else "".
std::string check_rank_shares(const LoaderConfig& l, uint32_t processes, uint64_t units, const char* unit,
                              uint64_t samples);

/// Parses args (and the preset named by --dataset) into `c`. `for_gen` relaxes the
/// options that only a run uses. Throws UsageError with a clear message for any bad value.
/// Returns false when --help was printed.
bool build_run_config(const CommandContext& ctx, bool for_gen, RunConfig& c);

}  // namespace ioprobe::cli
