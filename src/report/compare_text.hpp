// Side-by-side text comparison of result documents (`ioprobe report A.json B.json`).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// One row per figure (samples/s, MB/s, AU, latency p50/p99, num_workers, elapsed), one column per
/// document, and a B/A ratio column when there are exactly two. `names` label the columns.
/// Figures a document lacks print as "-". Tune documents contribute their fastest run's figures
/// and their recommendation.
std::string render_comparison_text(const std::vector<nlohmann::json>& docs, const std::vector<std::string>& names);

/// What a run or tune document's latency figures (results.file_latency_us) measured: per file
/// where a sample is a file (dataset kind "files", the default), per read where samples are
/// records or token windows read inside files (dataset kind "sharded", "token").
enum class LatencyMeasure { kPerFile, kPerRead };
LatencyMeasure latency_measure(const nlohmann::json& doc);

/// "" when every document of a comparison measured latency the same way, else one line naming
/// the columns (A, B, ...) of each measure and that the two are not divided.
std::string latency_measure_note(const std::vector<nlohmann::json>& docs);

/// What each document was measured under, for a comparison: `cache` ("cold, O_DIRECT",
/// "warm, buffered") and `target` ("/mnt/a (ext4 on nvme0n1)") per document, "?" where the document
/// does not say, and one warning line per document whose cache state or target differs from the
/// first's ("B was measured warm, buffered and A cold, O_DIRECT: B/A compares the page cache with
/// the device, not two settings"). Rendered beside the numbers by both comparisons.
struct MeasurementConditions {
  std::vector<std::string> cache, target, warnings;
};
MeasurementConditions measurement_conditions(const std::vector<nlohmann::json>& docs);

/// Whether `docs` can be compared: the comparison's rows are the figures of run documents
/// (ioprobe run) and of tune documents (ioprobe tune, by their fastest run); other kinds
/// (checkpoint, raw, probe) have none of them. Returns "" when every document is a run or a tune,
/// else one line naming each file (`names`) with its kind and what is supported.
std::string comparison_refusal(const std::vector<nlohmann::json>& docs, const std::vector<std::string>& names);

}  // namespace ioprobe
