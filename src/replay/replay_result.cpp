#include "replay/replay_result.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "replay/strict_json.hpp"

namespace ioprobe::replay {

using nlohmann::json;

namespace {

std::string u128_text(unsigned __int128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v) {
    s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

unsigned __int128 parse_u128(const std::string& s, const std::string& where) {
  if (s.empty() || s.size() > 39) throw UsageError(fmt::format("{}: '{}' is not a decimal count", where, s));
  unsigned __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') throw UsageError(fmt::format("{}: '{}' is not a decimal count", where, s));
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v;
}

json error_to_json(const ErrorRecord& e) {
  return {{"err", e.err}, {"op", e.op}, {"path", escape_bytes(e.path)}, {"detail", e.detail}, {"count", e.count}};
}

ErrorRecord error_from_json(const json& j, const std::string& path) {
  ErrorRecord e;
  e.err = strict::i32(j, "err", path);
  e.op = strict::str(j, "op", path);
  e.path = unescape_bytes(strict::str(j, "path", path));
  e.detail = strict::str(j, "detail", path);
  e.count = strict::u64(j, "count", path);
  return e;
}

double ratio(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

}  // namespace

double BatchTimeline::recorded_au() const {
  return batches ? ratio(recorded_step_ns, recorded_step_ns + recorded_wait_ns) : 0.0;
}

double BatchTimeline::replayed_au() const {
  return batches ? ratio(recorded_step_ns, recorded_step_ns + replayed_wait_ns) : 0.0;
}

void ReplayResult::merge(const ReplayResult& other) {
  streams.insert(streams.end(), other.streams.begin(), other.streams.end());
  read_latency.merge(other.read_latency);
  open_latency.merge(other.open_latency);
  timeline.batches += other.timeline.batches;
  timeline.recorded_step_ns += other.timeline.recorded_step_ns;
  timeline.recorded_wait_ns += other.timeline.recorded_wait_ns;
  timeline.replayed_step_ns += other.timeline.replayed_step_ns;
  timeline.replayed_wait_ns += other.timeline.replayed_wait_ns;
  timeline.replayed_wait.merge(other.timeline.replayed_wait);
  elapsed_ns = std::max(elapsed_ns, other.elapsed_ns);
  recorded_elapsed_ns = std::max(recorded_elapsed_ns, other.recorded_elapsed_ns);
  bytes += other.bytes;
  mapped_bytes += other.mapped_bytes;
  ops += other.ops;
  errors += other.errors;
  if (first_error.empty()) first_error = other.first_error;
  partial = partial || other.partial;
  processes += other.processes;
}

double ReplayResult::bytes_per_s() const {
  return elapsed_ns > 0 ? static_cast<double>(bytes) * 1e9 / static_cast<double>(elapsed_ns) : 0.0;
}

double ReplayResult::read_share() const {
  int64_t read = 0, elapsed = 0;
  for (const auto& s : streams) {
    read += s.read_ns;
    elapsed += s.elapsed_ns;
  }
  return ratio(read, elapsed);
}

json histogram_to_json(const LatencyHistogram& h) {
  json buckets = json::array();
  for (const auto& b : h.buckets()) buckets.push_back({b.lower_ns, b.count});
  return {{"count", h.count()},
          {"min_ns", h.min()},
          {"max_ns", h.max()},
          {"sum_ns", u128_text(h.sum_ns())},
          {"buckets", buckets}};
}

LatencyHistogram histogram_from_json(const json& j, const std::string& path) {
  const uint64_t count = strict::u64(j, "count", path);
  const uint64_t min_ns = strict::u64(j, "min_ns", path);
  const uint64_t max_ns = strict::u64(j, "max_ns", path);
  const unsigned __int128 sum = parse_u128(strict::str(j, "sum_ns", path), path + ".sum_ns");
  const json& arr = strict::array(j, "buckets", path);
  std::vector<HistogramBucket> buckets;
  uint64_t total = 0;
  for (size_t i = 0; i < arr.size(); ++i) {
    const json& b = arr[i];
    const std::string where = fmt::format("{}.buckets[{}]", path, i);
    auto count_like = [](const json& v) {
      return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    };
    if (!b.is_array() || b.size() != 2 || !count_like(b[0]) || !count_like(b[1]))
      throw UsageError(fmt::format("{}: expected [lower_ns, count] (two unsigned integers)", where));
    buckets.push_back({b[0].get<uint64_t>(), b[1].get<uint64_t>()});
    total += buckets.back().count;
  }
  if (total != count) throw UsageError(fmt::format("{}.count: {} but the buckets hold {}", path, count, total));
  if (buckets.empty()) return {};
  try {
    return LatencyHistogram::from_buckets(buckets, min_ns, max_ns, sum);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{}.buckets: {}", path, e.what()));
  }
}

void to_json(json& j, const StreamResult& s) {
  j = {{"pid", s.pid},
       {"tid", s.tid},
       {"rank", s.rank},
       {"replay_rank", s.replay_rank},
       {"role", escape_bytes(s.role)},
       {"ops", s.ops},
       {"reads", s.reads},
       {"bytes", s.bytes},
       {"mapped_bytes", s.mapped_bytes},
       {"errors", s.errors},
       {"elapsed_ns", s.elapsed_ns},
       {"recorded_elapsed_ns", s.recorded_elapsed_ns},
       {"read_ns", s.read_ns},
       {"recorded_read_ns", s.recorded_read_ns},
       {"stall_ns", s.stall_ns},
       {"slower_reads", s.slower_reads},
       {"gap_ns", s.gap_ns},
       {"dependency_wait_ns", s.dependency_wait_ns}};
}

StreamResult stream_result_from_json(const json& j, const std::string& path) {
  StreamResult s;
  s.pid = strict::i32(j, "pid", path);
  s.tid = strict::i32(j, "tid", path);
  s.rank = strict::i32(j, "rank", path);
  s.replay_rank = strict::i32(j, "replay_rank", path);
  s.role = unescape_bytes(strict::str(j, "role", path));
  s.ops = strict::u64(j, "ops", path);
  s.reads = strict::u64(j, "reads", path);
  s.bytes = strict::u64(j, "bytes", path);
  s.mapped_bytes = strict::u64(j, "mapped_bytes", path);
  s.errors = strict::u64(j, "errors", path);
  s.elapsed_ns = strict::i64(j, "elapsed_ns", path);
  s.recorded_elapsed_ns = strict::i64(j, "recorded_elapsed_ns", path);
  s.read_ns = strict::i64(j, "read_ns", path);
  s.recorded_read_ns = strict::i64(j, "recorded_read_ns", path);
  s.stall_ns = strict::i64(j, "stall_ns", path);
  s.slower_reads = strict::u64(j, "slower_reads", path);
  s.gap_ns = strict::i64(j, "gap_ns", path);
  s.dependency_wait_ns = strict::i64(j, "dependency_wait_ns", path);
  return s;
}

void to_json(json& j, const BatchTimeline& t) {
  j = {{"batches", t.batches},
       {"recorded_step_ns", t.recorded_step_ns},
       {"recorded_wait_ns", t.recorded_wait_ns},
       {"replayed_step_ns", t.replayed_step_ns},
       {"replayed_wait_ns", t.replayed_wait_ns},
       {"replayed_wait", histogram_to_json(t.replayed_wait)}};
}

BatchTimeline batch_timeline_from_json(const json& j, const std::string& path) {
  BatchTimeline t;
  t.batches = strict::u64(j, "batches", path);
  t.recorded_step_ns = strict::i64(j, "recorded_step_ns", path);
  t.recorded_wait_ns = strict::i64(j, "recorded_wait_ns", path);
  t.replayed_step_ns = strict::i64(j, "replayed_step_ns", path);
  t.replayed_wait_ns = strict::i64(j, "replayed_wait_ns", path);
  t.replayed_wait = histogram_from_json(strict::object(j, "replayed_wait", path), path + ".replayed_wait");
  return t;
}

void to_json(json& j, const ReplayResult& r) {
  j = {{"streams", r.streams},
       {"read_latency", histogram_to_json(r.read_latency)},
       {"open_latency", histogram_to_json(r.open_latency)},
       {"timeline", r.timeline},
       {"elapsed_ns", r.elapsed_ns},
       {"recorded_elapsed_ns", r.recorded_elapsed_ns},
       {"bytes", r.bytes},
       {"mapped_bytes", r.mapped_bytes},
       {"ops", r.ops},
       {"errors", r.errors},
       {"first_error", error_to_json(r.first_error)},
       {"partial", r.partial},
       {"processes", r.processes}};
}

ReplayResult replay_result_from_json(const json& j, const std::string& path) {
  ReplayResult r;
  const json& streams = strict::array(j, "streams", path);
  for (size_t i = 0; i < streams.size(); ++i)
    r.streams.push_back(stream_result_from_json(streams[i], fmt::format("{}.streams[{}]", path, i)));
  r.read_latency = histogram_from_json(strict::object(j, "read_latency", path), path + ".read_latency");
  r.open_latency = histogram_from_json(strict::object(j, "open_latency", path), path + ".open_latency");
  r.timeline = batch_timeline_from_json(strict::object(j, "timeline", path), path + ".timeline");
  r.elapsed_ns = strict::i64(j, "elapsed_ns", path);
  r.recorded_elapsed_ns = strict::i64(j, "recorded_elapsed_ns", path);
  r.bytes = strict::u64(j, "bytes", path);
  r.mapped_bytes = strict::u64(j, "mapped_bytes", path);
  r.ops = strict::u64(j, "ops", path);
  r.errors = strict::u64(j, "errors", path);
  r.first_error = error_from_json(strict::object(j, "first_error", path), path + ".first_error");
  r.partial = strict::boolean(j, "partial", path);
  r.processes = strict::u64(j, "processes", path);
  return r;
}

}  // namespace ioprobe::replay
