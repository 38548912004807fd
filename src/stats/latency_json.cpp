#include "stats/latency_json.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

// A non-negative integer (nlohmann keeps integers built in code signed, parsed ones unsigned).
bool is_count(const json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0); }

double us(uint64_t ns) { return static_cast<double>(ns) / 1e3; }

uint64_t ns_from_us(const json& v, const std::string& where) {
  if (!v.is_number() || v.get<double>() < 0)
    throw UsageError(fmt::format("{}: {} is not a latency in µs", where, v.dump()));
  return static_cast<uint64_t>(std::llround(v.get<double>() * 1e3));
}

// The exact sum as an integer when it fits in 64 bits (584 years of summed latency), else a double.
json sum_json(unsigned __int128 s) {
  if (s <= std::numeric_limits<uint64_t>::max()) return static_cast<uint64_t>(s);
  return static_cast<double>(s);
}

unsigned __int128 sum_from_json(const json& v, const std::string& where) {
  if (is_count(v)) return v.get<uint64_t>();
  if (v.is_number() && v.get<double>() >= 0) return static_cast<unsigned __int128>(v.get<double>());
  throw UsageError(fmt::format("{}: sum_ns {} is not a non-negative number", where, v.dump()));
}

json buckets_json(const LatencyHistogram& h) {
  json b = json::array();
  for (const auto& bk : h.buckets()) b.push_back({bk.lower_ns, bk.count});
  return b;
}

std::vector<HistogramBucket> buckets_from_json(const json& j, const std::string& where) {
  if (!j.contains("buckets"))
    throw UsageError(fmt::format("{}: missing key 'buckets' (the latency histogram's buckets, which the percentiles "
                                 "and merges are read from; a document written before ioprobe saved them is not "
                                 "read: rerun to get one)",
                                 where));
  const json& b = j.at("buckets");
  if (!b.is_array()) throw UsageError(fmt::format("{}: 'buckets' is not an array of [lower_bound_ns, count]", where));
  std::vector<HistogramBucket> out;
  for (const auto& e : b) {
    if (!e.is_array() || e.size() != 2 || !is_count(e[0]) || !is_count(e[1]))
      throw UsageError(
          fmt::format("{}: bucket {} is not [lower_bound_ns, count] (two unsigned integers)", where, e.dump()));
    out.push_back({e[0].get<uint64_t>(), e[1].get<uint64_t>()});
  }
  return out;
}

// An empty bucket list is an empty histogram, unless `count` says otherwise.
bool empty_ok(const std::vector<HistogramBucket>& b, const json& j, const std::string& where) {
  if (!b.empty()) return false;
  if (j.contains("count") && j["count"].is_number() && j["count"].get<double>() != 0)
    throw UsageError(fmt::format("{}: count {} but no buckets", where, j["count"].dump()));
  return true;
}

LatencyHistogram build(const std::vector<HistogramBucket>& b, uint64_t min, uint64_t max, unsigned __int128 sum,
                       const json& j, const std::string& where) {
  LatencyHistogram h;
  try {
    h = LatencyHistogram::from_buckets(b, min, max, sum);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{}: {}", where, e.what()));
  }
  if (j.contains("count") && is_count(j["count"]) && j["count"].get<uint64_t>() != h.count())
    throw UsageError(
        fmt::format("{}: count {} differs from the buckets' total {}", where, j["count"].get<uint64_t>(), h.count()));
  return h;
}

}  // namespace

json latency_us_json(const LatencyHistogram& h) {
  return {{"count", h.count()},
          {"mean", h.mean() / 1e3},
          {"min", us(h.min())},
          {"p50", us(h.percentile(50))},
          {"p90", us(h.percentile(90))},
          {"p99", us(h.percentile(99))},
          {"p999", us(h.percentile(99.9))},
          {"max", us(h.max())},
          {"sum_ns", sum_json(h.sum_ns())},
          {"buckets", buckets_json(h)}};
}

LatencyHistogram latency_from_us_json(const json& j, const std::string& where) {
  std::vector<HistogramBucket> b = buckets_from_json(j, where);
  if (empty_ok(b, j, where)) return {};
  return build(b, ns_from_us(json_at(j, "min", where), where), ns_from_us(json_at(j, "max", where), where),
               sum_from_json(json_at(j, "sum_ns", where), where), j, where);
}

json histogram_ns_json(const LatencyHistogram& h) {
  return {{"count", h.count()},
          {"min_ns", h.min()},
          {"max_ns", h.max()},
          {"sum_ns", sum_json(h.sum_ns())},
          {"buckets", buckets_json(h)}};
}

LatencyHistogram histogram_from_ns_json(const json& j, const std::string& where) {
  std::vector<HistogramBucket> b = buckets_from_json(j, where);
  if (empty_ok(b, j, where)) return {};
  auto u64 = [&](const char* k) {
    const json& v = json_at(j, k, where);
    if (!is_count(v)) throw UsageError(fmt::format("{}: '{}' is {}, not an unsigned integer", where, k, v.dump()));
    return v.get<uint64_t>();
  };
  return build(b, u64("min_ns"), u64("max_ns"), sum_from_json(json_at(j, "sum_ns", where), where), j, where);
}

json timeline_points_json(const Timeline& t) {
  json out = json::array();
  for (const auto& p : t.points())
    out.push_back({{"t_s", p.t_s}, {"samples", p.samples}, {"bytes", p.bytes}, {"wait_s", p.wait_s}});
  return out;
}

std::vector<TimelinePoint> timeline_points_from_json(const json& points, const std::string& where) {
  if (!points.is_array()) throw UsageError(fmt::format("{}: timeline is not an array", where));
  std::vector<TimelinePoint> pts;
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string w = fmt::format("{} timeline[{}]", where, i);
    pts.push_back({.samples = json_field<uint64_t>(points[i], "samples", w),
                   .bytes = json_field<uint64_t>(points[i], "bytes", w),
                   .wait_s = json_field<double>(points[i], "wait_s", w)});
  }
  return pts;
}

Timeline timeline_from_json(const json& points, double interval_s, const std::string& where) {
  const int64_t ns = interval_s > 0 && interval_s < 1e9 ? std::llround(interval_s * 1e9) : 0;
  if (ns <= 0)
    throw UsageError(fmt::format("{}: timeline interval {} s must be > 0 (and under 10^9 s)", where, interval_s));
  return Timeline::from_points(ns, timeline_points_from_json(points, where));
}

}  // namespace ioprobe

namespace ioprobe {

json timeline_ns_json(const Timeline& t) {
  return {{"interval_ns", t.interval_ns()}, {"points", timeline_points_json(t)}};
}

Timeline timeline_from_ns_json(const json& t, const std::string& where) {
  const auto ns = json_field<int64_t>(t, "interval_ns", where);
  if (ns <= 0) throw UsageError(fmt::format("{}.interval_ns: {} must be > 0", where, ns));
  return Timeline::from_points(ns, timeline_points_from_json(json_at(t, "points", where), where));
}

}  // namespace ioprobe
