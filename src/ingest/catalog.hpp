// The accelerator catalog (workloads/accelerators.json): what one GPU of a kind consumes while
// training a model, in samples/s, with the public source of each figure (MLPerf Training results, DLIO and
// mlcommons/storage workload configs).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ioprobe {

/// One published rate: samples/s per GPU and where it comes from.
struct IngestRate {
  double samples_per_s = 0;
  double step_time_s = 0;   // DLIO computation_time per batch (emulation rows), 0 if not given
  uint32_t batch_size = 0;  // DLIO batch size (emulation rows), 0 if not given
  std::string source;
};

struct CatalogRow {
  std::string accelerator;  // key as typed with --gpu: "h100"
  std::string name;         // "H100-SXM"
  std::string model;        // "resnet50"
  double bytes_per_sample = 0;
  std::string bytes_source;
  std::optional<IngestRate> training;   // best published training rate (MLPerf Training, ...)
  std::optional<IngestRate> emulation;  // MLPerf Storage / DLIO emulation rate
};

/// Loads the catalog from `path`. Throws UsageError when unreadable or malformed.
std::vector<CatalogRow> load_catalog(const std::string& path);

/// The AU floor of `model` from the catalog's "au_floors" (the model's entry, else "default"), a
/// fraction 0..1, and its source in `*source` when given. A catalog without "au_floors": 0.9.
/// Throws UsageError when unreadable or malformed.
double load_au_floor(const std::string& path, const std::string& model, std::string* source = nullptr);

/// The catalog key ("h100") of the accelerator `given` names: a row's key or its label
/// ("H100-SXM", as reports print it), compared whole and ignoring case; "" when none matches.
std::string accelerator_key(const std::vector<CatalogRow>& rows, const std::string& given);

/// The row for (given, model). `given` is a row's key ("h100") or its label
/// ("H100-SXM", as reports print it), compared whole and ignoring case. Throws UsageError listing
/// what the catalog has for that model (or accelerator) and pointing at --gpu-samples-per-s /
/// --step-time.
const CatalogRow& find_row(const std::vector<CatalogRow>& rows, const std::string& given, const std::string& model);

}  // namespace ioprobe
