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
#include "topology/target.hpp"

namespace ioprobe::cli {

/// The dataset to read and its "dataset" section of the result document.
struct PreparedData {
  FileIndex index;
  RecordLayout layout;  // sharded and token datasets; kind files otherwise
  nlohmann::json dataset;
  std::vector<std::string> warnings;
  std::string target_path;
  bool interrupted = false;  // generation stopped by a signal
  std::shared_ptr<DirLock> lock;  // generated datasets: held shared while this lives (dataset/generator.hpp)
};

/// Walks --data / reads --file-list, or generates (or checks) the synthetic dataset with a
/// progress line unless c.quiet. Throws UsageError for empty trees, IoError for I/O failures.
PreparedData prepare_dataset(const RunConfig& c);

/// The GPU demand from --gpu-samples-per-s / --step-time or the accelerator catalog.
/// Throws UsageError for an unknown accelerator or model.
Demand resolve_demand(const RunConfig& c, const std::string& model);

/// Decides O_DIRECT vs buffered (probed on the dataset's first file) and the engine, filling
/// l.direct/engine/eviction; returns the cache detail text for the report.
std::string resolve_cache_and_engine(const RunConfig& c, const FileIndex& index, const TargetInfo& target,
                                     LoaderConfig& l, std::string& engine_reason, std::vector<std::string>& warnings);

/// Throws Error (exit 1) when ranks x workers would exceed RLIMIT_NOFILE.
void check_open_files_limit(const LoaderConfig& l);

}  // namespace ioprobe::cli
