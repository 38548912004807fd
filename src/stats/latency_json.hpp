// JSON of the measured distributions (latency histograms, timelines), both ways, so that saved
// result documents can be merged offline (`ioprobe report --merge`).
//
// Latency object of a document ("..._us"): {count, mean, min, p50, p90, p99, p999, max} in µs,
// sum_ns (exact sum of the values, ns) and buckets [[lower_bound_ns, count], ...] (the non-empty
// buckets of stats/histogram.hpp, ascending). min and max in µs convert back to ns exactly
// (rounded to the ns) below 2^53 / 1000 ns (104 days).
// Histogram object of a full-fidelity result (loader/loader_result_json.hpp): {count, min_ns, max_ns,
// sum_ns, buckets}, all integers.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/json_field.hpp"
#include "stats/histogram.hpp"
#include "stats/timeline.hpp"

namespace ioprobe {

/// The latency object of a document, in µs, with sum_ns and buckets (above).
nlohmann::json latency_us_json(const LatencyHistogram& h);
/// Inverse of latency_us_json. Throws UsageError naming `where` and the key when a key is
/// missing (documents written before buckets were saved have none: the message says so) or a
/// bucket is not one of stats/histogram.hpp's.
LatencyHistogram latency_from_us_json(const nlohmann::json& j, const std::string& where);

/// {count, min_ns, max_ns, sum_ns, buckets}: exact, all in ns.
nlohmann::json histogram_ns_json(const LatencyHistogram& h);
/// Inverse of histogram_ns_json; throws UsageError as latency_from_us_json does.
LatencyHistogram histogram_from_ns_json(const nlohmann::json& j, const std::string& where);

/// The points of a timeline: [{t_s, samples, bytes, wait_s}, ...].
nlohmann::json timeline_points_json(const Timeline& t);
/// The points of a timeline (t_s is not read: point i starts at i x interval). Throws UsageError
/// naming `where` and the point for a missing key.
std::vector<TimelinePoint> timeline_points_from_json(const nlohmann::json& points, const std::string& where);
/// A timeline from its points and interval length (s, as written in timeline_interval_s).
/// Throws UsageError naming `where` for a missing key or an interval <= 0.
Timeline timeline_from_json(const nlohmann::json& points, double interval_s, const std::string& where);

/// A whole timeline, exact: {interval_ns, points [{t_s, samples, bytes, wait_s}, ...]}.
nlohmann::json timeline_ns_json(const Timeline& t);
/// Inverse of timeline_ns_json; throws UsageError naming `where` and the key for a missing or
/// mistyped key or an interval <= 0.
Timeline timeline_from_ns_json(const nlohmann::json& t, const std::string& where);

}  // namespace ioprobe
