#include "replay/replay_result.hpp"

#include <algorithm>

#include "core/json_field.hpp"
#include "core/text.hpp"
#include "stats/latency_json.hpp"

namespace ioprobe::replay {

using nlohmann::json;

namespace {

json error_to_json(const ErrorRecord& e) {
  return {{"err", e.err}, {"op", e.op}, {"path", escape_bytes(e.path)}, {"detail", e.detail}, {"count", e.count}};
}

ErrorRecord error_from_json(const json& j, const std::string& path) {
  ErrorRecord e;
  e.err = json_field<int32_t>(j, "err", path);
  e.op = json_field<std::string>(j, "op", path);
  e.path = unescape_bytes(json_field<std::string>(j, "path", path));
  e.detail = json_field<std::string>(j, "detail", path);
  e.count = json_field<uint64_t>(j, "count", path);
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
  s.pid = json_field<int32_t>(j, "pid", path);
  s.tid = json_field<int32_t>(j, "tid", path);
  s.rank = json_field<int32_t>(j, "rank", path);
  s.replay_rank = json_field<int32_t>(j, "replay_rank", path);
  s.role = unescape_bytes(json_field<std::string>(j, "role", path));
  s.ops = json_field<uint64_t>(j, "ops", path);
  s.reads = json_field<uint64_t>(j, "reads", path);
  s.bytes = json_field<uint64_t>(j, "bytes", path);
  s.mapped_bytes = json_field<uint64_t>(j, "mapped_bytes", path);
  s.errors = json_field<uint64_t>(j, "errors", path);
  s.elapsed_ns = json_field<int64_t>(j, "elapsed_ns", path);
  s.recorded_elapsed_ns = json_field<int64_t>(j, "recorded_elapsed_ns", path);
  s.read_ns = json_field<int64_t>(j, "read_ns", path);
  s.recorded_read_ns = json_field<int64_t>(j, "recorded_read_ns", path);
  s.stall_ns = json_field<int64_t>(j, "stall_ns", path);
  s.slower_reads = json_field<uint64_t>(j, "slower_reads", path);
  s.gap_ns = json_field<int64_t>(j, "gap_ns", path);
  s.dependency_wait_ns = json_field<int64_t>(j, "dependency_wait_ns", path);
  return s;
}

void to_json(json& j, const BatchTimeline& t) {
  j = {{"batches", t.batches},
       {"recorded_step_ns", t.recorded_step_ns},
       {"recorded_wait_ns", t.recorded_wait_ns},
       {"replayed_step_ns", t.replayed_step_ns},
       {"replayed_wait_ns", t.replayed_wait_ns},
       {"replayed_wait", histogram_ns_json(t.replayed_wait)}};
}

BatchTimeline batch_timeline_from_json(const json& j, const std::string& path) {
  BatchTimeline t;
  t.batches = json_field<uint64_t>(j, "batches", path);
  t.recorded_step_ns = json_field<int64_t>(j, "recorded_step_ns", path);
  t.recorded_wait_ns = json_field<int64_t>(j, "recorded_wait_ns", path);
  t.replayed_step_ns = json_field<int64_t>(j, "replayed_step_ns", path);
  t.replayed_wait_ns = json_field<int64_t>(j, "replayed_wait_ns", path);
  t.replayed_wait = histogram_from_ns_json(json_at(j, "replayed_wait", path), json_path(path, "replayed_wait"));
  return t;
}

void to_json(json& j, const ReplayResult& r) {
  j = {{"streams", r.streams},
       {"read_latency", histogram_ns_json(r.read_latency)},
       {"open_latency", histogram_ns_json(r.open_latency)},
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
  const json& streams = json_array_at(j, "streams", path);
  for (size_t i = 0; i < streams.size(); ++i)
    r.streams.push_back(stream_result_from_json(streams[i], json_path(json_path(path, "streams"), i)));
  r.read_latency = histogram_from_ns_json(json_at(j, "read_latency", path), json_path(path, "read_latency"));
  r.open_latency = histogram_from_ns_json(json_at(j, "open_latency", path), json_path(path, "open_latency"));
  r.timeline = batch_timeline_from_json(json_at(j, "timeline", path), json_path(path, "timeline"));
  r.elapsed_ns = json_field<int64_t>(j, "elapsed_ns", path);
  r.recorded_elapsed_ns = json_field<int64_t>(j, "recorded_elapsed_ns", path);
  r.bytes = json_field<uint64_t>(j, "bytes", path);
  r.mapped_bytes = json_field<uint64_t>(j, "mapped_bytes", path);
  r.ops = json_field<uint64_t>(j, "ops", path);
  r.errors = json_field<uint64_t>(j, "errors", path);
  r.first_error = error_from_json(json_at(j, "first_error", path), json_path(path, "first_error"));
  r.partial = json_field<bool>(j, "partial", path);
  r.processes = json_field<uint64_t>(j, "processes", path);
  return r;
}

}  // namespace ioprobe::replay
