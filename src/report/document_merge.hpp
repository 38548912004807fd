// `ioprobe report --merge A.json B.json ...`: several saved result documents of one run kind
// combined into one, as if one run had done all their work (fio's sum_thread_stats, IOR's
// rank-0 reduce): counts and bytes add, elapsed is the longest, rates are recomputed as totals /
// longest elapsed, latency percentiles are recomputed exactly (to the bucket) from the added
// histogram buckets, timelines add interval by interval.
//
// Kind "run": each document read into a RunDocument (report/run_document.hpp run_document_from_json, strict: a
// missing or mistyped field is refused naming the file and its path), the results merged by LoaderResult::merge,
// loader.gpus summed, partial if any input was; `sources` lists each input [{file, hostname, samples, bytes,
// samples_per_s, bytes_per_s, elapsed_s, file_latency_p99_us}]; `ingest` becomes {available: false, reason} (AU needs
// each rank's compute and wait times, which a document does not keep). Kind "raw": each document read into a
// RawDocument (report/raw_document.hpp raw_document_from_json, strict likewise), raw.results merged by
// RawResults::merge (ios, bytes, errors, CPU add; elapsed max; latency from the buckets; no stop_reason); `sources`
// rows {file, hostname, ios, bytes, iops, bytes_per_s, elapsed_s, p99_us}. Both kinds: "sources_apart" true when two
// inputs did not run at the same time (their device accounting intervals do not overlap: device_io_report.hpp
// merge_time_warning), absent otherwise.
#pragma once

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/raw_document.hpp"
#include "report/run_document.hpp"

namespace ioprobe {

/// A merged document, and the warnings that its inputs measured different work: one per document
/// whose dataset (run: dataset.root, preset, files, bytes) or workload (raw: raw.rw, bs) differs
/// from the first's, naming both files and each field that differs with both values (also first
/// in the document's warnings; the caller prints them before the merged figures).
struct MergedDocument {
  std::variant<RunDocument, RawDocument> doc;
  std::vector<std::string> workload_warnings;
};

/// The merged document of `docs` (2 or more), `names` their file names for messages and
/// `sources`. Throws UsageError (exit 2) naming the file when the kinds differ, a kind is not
/// "run" or "raw", a document is refused by its typed reader (a missing or mistyped field, named
/// by its path; a document without latency buckets, written before they were saved, is told so),
/// the timeline intervals differ, or two inputs are the same result (same host, creation time and
/// command: a copy, or a merged document with one of its inputs).
MergedDocument merge_documents(const std::vector<nlohmann::json>& docs, const std::vector<std::string>& names);

/// The merged document as its kind's writer writes it (run_document_json, raw_document_json).
nlohmann::json merged_document_json(const MergedDocument& merged);

/// The headline's words for a merged result whose `runs` inputs did not run at the same time
/// (the merged document's "sources_apart"): its rates are their sum, not one concurrent load.
std::string sum_of_apart_runs(size_t runs);

/// Text of a merged raw document (kind "raw" has no text renderer of its own): the merged
/// figures, then one line per source.
std::string render_merged_raw_text(const RawDocument& merged);

}  // namespace ioprobe
