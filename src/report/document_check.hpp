// Plausibility of the numbers in a saved result document, before it is rendered again.
//
// A document may be edited or damaged after ioprobe wrote it. Counts, sizes, durations and rates
// are never negative in what ioprobe writes; rendered as unsigned they would show as
// 18,446,744,073,709,551,611. Keys follow the schema's naming
// (reports/result.schema.json): _s, _us, _ns seconds; _bytes, bytes; _per_s rates; and the
// count names listed in document_check.cpp.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// The first number in `doc` that cannot be what ioprobe wrote: a negative (or non-finite)
/// count, size, duration or rate, or a count above 2^63 (a wrapped negative), named by its path
/// from `where` as core/json_field.hpp names fields: "'a.json'.results.samples: a count cannot be
/// negative, found -5"; an accelerator utilization (au, au_min, au_target,
/// accelerator_utilization*) or a *_fraction outside 0 to 1 ("'a.json'.ingest.accelerator_utilization:
/// a fraction (0 to 1) cannot be outside 0 to 1, found 7.5"). "" when every such number is
/// plausible. Other numbers (NUMA node -1, CPU shares) are not checked.
std::string implausible_number(const nlohmann::json& doc, const std::string& where);

}  // namespace ioprobe
