// Any document kind as CSV (`ioprobe report FILE --csv OUT`).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// CSV of one document of any kind. A tune document gives its points table (render_tune_csv);
/// every other kind gives "ioprobe_field,value" rows: each number, string and boolean of the
/// document by its JSON pointer (/results/iops, /raw/results/latency_us/p99, ...), so that
/// the unit is in the key name as the schema has it (reports/result.schema.json). Strings are
/// quoted per RFC 4180.
std::string render_document_csv(const nlohmann::json& doc);

/// The first line of render_document_csv() for non-tune documents: the mark by which
/// written_by_ioprobe() (core/atomic_file.hpp) knows the file as ioprobe's.
constexpr const char* kDocumentCsvHeader = "ioprobe_field,value";

}  // namespace ioprobe
