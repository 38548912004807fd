// Preflight shared by `ioprobe run`, `gen` and `tune`: the dataset (generated or the user's own),
// the GPU demand, O_DIRECT vs buffered and the engine, and the open-files limit.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_config.hpp"
#include "core/dir_lock.hpp"
#include "dataset/file_index.hpp"
#include "dataset/record_layout.hpp"
#include "ingest/analysis.hpp"
#include "loader/config.hpp"
#include "report/document_sections.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

/// The dataset to read and its "dataset" section of the result document.
struct PreparedData {
  FileIndex index;
  RecordLayout layout;  // sharded and token datasets; kind files otherwise
  DatasetSection dataset;
  std::vector<std::string> warnings;
  std::string target_path;        // the directory probed (generated dataset, --data); empty for --file-list
  bool from_list = false;         // --file-list: paths as listed, possibly on several filesystems
  bool interrupted = false;       // generation stopped by a signal
  bool nothing_written = false;   // ... before anything was written (the size check or the planning)
  std::shared_ptr<DirLock> lock;  // generated datasets: held shared while this lives (dataset/generator.hpp)
};

/// Walks --data / reads --file-list, or generates (or checks) the synthetic dataset with a
/// progress line unless c.quiet. Throws UsageError for empty trees, IoError for I/O failures.
PreparedData prepare_dataset(const RunConfig& c);

/// The message for an interrupted preparation of c.dir (data.interrupted): that nothing was
/// written there, or that the dataset is marked incomplete and the next run regenerates it.
std::string interrupted_dataset_text(const RunConfig& c, const PreparedData& data);

/// The GPU demand from --gpu-samples-per-s / --step-time or the accelerator catalog. With the
/// user's rate, Demand::model is empty unless the user chose the model (RunConfig::model_given).
/// Throws UsageError for an unknown accelerator or model.
Demand resolve_demand(const RunConfig& c, const std::string& model);

/// The filesystems `data` lives on: for --file-list each filesystem its files are on (stat per
/// file, probed on one of its own files, most bytes first; a warning for listed paths that do not
/// exist); otherwise the one directory, probed without writing (its share: all files, the known bytes).
/// Throws UsageError when no listed file exists, IoError when statfs fails.
std::vector<TargetShare> probe_data_targets(PreparedData& data);

/// Decides O_DIRECT vs buffered and the engine for the whole run, filling
/// l.direct/engine/evict_before_epoch/drop_caches/measure_residency; returns the cache detail text
/// for the report. O_DIRECT: a directory is probed on the dataset's first file; a file list on
/// each filesystem's own probe (probe_data_targets), and O_DIRECT is used only when every
/// filesystem accepts it (the loader takes one setting per run). The engine is chosen for the
/// filesystem holding the most bytes, the reason naming the others when they would differ.
/// Throws UsageError for --direct on where a filesystem refuses O_DIRECT.
std::string resolve_cache_and_engine(const RunConfig& c, const PreparedData& data,
                                     const std::vector<TargetShare>& targets, LoaderConfig& l,
                                     std::string& engine_reason, std::vector<std::string>& warnings);

/// Throws Error (exit 1) when ranks x workers would exceed RLIMIT_NOFILE.
void check_open_files_limit(const LoaderConfig& l);

}  // namespace ioprobe::cli
