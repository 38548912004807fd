// Side-by-side text comparison of result documents (`ioprobe report A.json B.json`), from the
// typed run and tune documents (report/run_document.hpp, report/tune_document.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/document_sections.hpp"
#include "report/run_document.hpp"
#include "report/tune_document.hpp"

namespace ioprobe {

/// The figures a comparison shows of one document; none where the document has none. Units:
/// samples/s, B/s, AU as a fraction 0..1, latency in µs, time in s.
struct ComparedFigures {
  std::optional<double> samples_per_s, bytes_per_s;
  std::optional<double> au;                              // a run's accelerator utilization
  std::optional<double> demand_samples_per_s;            // what the GPUs need, all of them
  std::optional<double> latency_p50_us, latency_p99_us;  // per file or per read (latency_measure)
  std::optional<double> num_workers, prefetch_factor, gpus, samples;
  std::optional<double> elapsed_s;
};

/// A run or tune document as a comparison reads it. A tune contributes its recommended point's
/// figures (else its fastest point's, when measured) and its fastest run's latency and samples.
struct ComparedDocument {
  std::string kind;  // "run" | "tune"
  std::string created_utc;
  bool partial = false;
  TargetSection target;  // with the read setting
  DatasetSection dataset;
  bool tune_point = false;  // a tune whose figures come from a measured point of its table
  std::string recommends;   // a tune's DataLoader(...) line; "" for a run
  ComparedFigures figures;
};
ComparedDocument compared_document(const RunDocument& d);
ComparedDocument compared_document(const TuneDocument& d);

/// A saved run or tune document decoded (run_document_from_json, tune_document_from_json: their
/// UsageError naming `where` and the field); UsageError for any other kind.
ComparedDocument compared_document_from_json(const nlohmann::json& doc, const std::string& where);

/// One row per figure (samples/s, MB/s, AU, latency p50/p99, num_workers, elapsed), one column per
/// document, and a B/A ratio column when there are exactly two. `names` label the columns.
/// Figures a document lacks print as "-". Tune documents contribute their recommended point's
/// figures, their fastest run's latency, and their recommendation.
std::string render_comparison_text(const std::vector<ComparedDocument>& docs, const std::vector<std::string>& names);

/// What a run or tune document's latency figures (results.file_latency_us) measured: per file
/// where a sample is a file (dataset kind "files", the default), per read where samples are
/// records or token windows read inside files (dataset kind "sharded", "token").
enum class LatencyMeasure { kPerFile, kPerRead };
LatencyMeasure latency_measure(const ComparedDocument& doc);

/// "" when every document of a comparison measured latency the same way, else one line naming
/// the columns (A, B, ...) of each measure and that the two are not divided.
std::string latency_measure_note(const std::vector<ComparedDocument>& docs);

/// What each document was measured under, for a comparison: `cache` ("cold, O_DIRECT",
/// "warm, buffered") and `target` ("/mnt/a (ext4 on nvme0n1)") per document, "?" where the document
/// does not say, and one warning line per document whose cache state or target differs from the
/// first's ("B was measured warm, buffered and A cold, O_DIRECT: B/A compares the page cache with
/// the device, not two settings"). Rendered beside the numbers by both comparisons.
struct MeasurementConditions {
  std::vector<std::string> cache, target, warnings;
};
MeasurementConditions measurement_conditions(const std::vector<ComparedDocument>& docs);

/// Whether `docs` can be compared: the comparison's rows are the figures of run documents
/// (ioprobe run) and of tune documents (ioprobe tune, by their fastest run); other kinds
/// (checkpoint, raw, probe) have none of them. Returns "" when every document is a run or a tune,
/// else one line naming each file (`names`) with its kind and what is supported.
std::string comparison_refusal(const std::vector<nlohmann::json>& docs, const std::vector<std::string>& names);

}  // namespace ioprobe
