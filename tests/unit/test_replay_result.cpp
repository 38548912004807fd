// The replay result: one merge (counts add, histograms add, elapsed the longest), AU of the batch
// timeline, and the JSON codec's round trip and refusals naming the field's path.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "replay/replay_result.hpp"

using namespace ioprobe;
using namespace ioprobe::replay;

namespace {

ReplayResult part(uint64_t bytes, int64_t elapsed, uint64_t lat) {
  ReplayResult r;
  StreamResult s;
  s.pid = 7;
  s.tid = 8;
  s.role = "worker 0";
  s.bytes = bytes;
  s.reads = 2;
  s.read_ns = 1000;
  s.elapsed_ns = elapsed;
  r.streams = {s};
  r.read_latency.record(lat);
  r.read_latency.record(lat * 3);
  r.timeline.batches = 2;
  r.timeline.recorded_step_ns = 900;
  r.timeline.recorded_wait_ns = 100;
  r.timeline.replayed_wait_ns = 300;
  r.timeline.replayed_wait.record(150);
  r.timeline.replayed_wait.record(150);
  r.elapsed_ns = elapsed;
  r.recorded_elapsed_ns = 1000;
  r.bytes = bytes;
  r.ops = 3;
  return r;
}

}  // namespace

TEST_CASE("replay result: merge adds counts and histograms, elapsed is the longest", "[replay]") {
  ReplayResult a = part(100, 5000, 1000), b = part(50, 7000, 2000);
  b.errors = 1;
  b.first_error = {5, "read of 4096 B at offset 0", "/x", "", 1};
  b.partial = true;
  a.merge(b);
  CHECK(a.bytes == 150);
  CHECK(a.ops == 6);
  CHECK(a.elapsed_ns == 7000);
  CHECK(a.streams.size() == 2);
  CHECK(a.read_latency.count() == 4);
  CHECK(a.read_latency.max() == 6000);
  CHECK(a.timeline.batches == 4);
  CHECK(a.timeline.replayed_wait.count() == 4);
  CHECK(a.errors == 1);
  CHECK(a.first_error.err == 5);
  CHECK(a.partial);
  CHECK(a.processes == 2);
  CHECK(a.bytes_per_s() == Approx(150 * 1e9 / 7000));
}

TEST_CASE("replay result: AU is compute over compute plus wait", "[replay]") {
  BatchTimeline t;
  CHECK(t.recorded_au() == 0);
  t.batches = 1;
  t.recorded_step_ns = 900;
  t.recorded_wait_ns = 100;
  t.replayed_wait_ns = 2100;
  CHECK(t.recorded_au() == Approx(0.9));
  CHECK(t.replayed_au() == Approx(0.3));
}

TEST_CASE("replay result: the JSON codec round-trips every field", "[replay]") {
  ReplayResult r = part(4096, 123456, 777);
  r.first_error = {2, "open", "/data/\xff", "", 3};
  r.open_latency.record(42);
  const nlohmann::json j = r;
  const ReplayResult back = replay_result_from_json(nlohmann::json::parse(j.dump()), "replay");
  CHECK(back.streams == r.streams);
  CHECK(back.read_latency.buckets() == r.read_latency.buckets());
  CHECK(back.read_latency.sum_ns() == r.read_latency.sum_ns());
  CHECK(back.open_latency.count() == 1);
  CHECK(back.timeline.replayed_wait.count() == 2);
  CHECK(back.timeline.replayed_wait_ns == 300);
  CHECK(back.first_error.same_failure(r.first_error));
  CHECK(back.first_error.count == 3);
  CHECK(back.elapsed_ns == 123456);
  CHECK(back.processes == 1);
}

TEST_CASE("replay result: decoding refuses a missing or mistyped field, naming its path", "[replay]") {
  const nlohmann::json good = part(1, 2, 3);
  auto refusal = [](const nlohmann::json& j) -> std::string {
    try {
      replay_result_from_json(j, "replay");
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  nlohmann::json j = good;
  j.erase("bytes");
  CHECK(refusal(j) == "replay: missing key 'bytes'");
  j = good;
  j["streams"][0]["bytes"] = "12";
  CHECK(refusal(j) == "replay.streams[0].bytes: expected a non-negative integer in range, found \"12\"");
  j = good;
  j["timeline"]["replayed_wait"]["count"] = 5;
  CHECK_THAT(refusal(j), Catch::Contains("replay.timeline.replayed_wait: count 5 differs from the buckets' total 2"));
  j = good;
  j["read_latency"]["buckets"][0] = {1, 2, 3};
  CHECK_THAT(refusal(j), Catch::Contains("replay.read_latency: bucket [1,2,3]"));
  j = good;
  j["partial"] = 0;
  CHECK(refusal(j) == "replay.partial: expected true or false, found 0");
  j = good;
  j["first_error"].erase("op");
  CHECK(refusal(j) == "replay.first_error: missing key 'op'");
}
