// The replay document: its verdict from the batch timeline (or the streams' span without batch
// marks), the JSON round trip through the strict decoder, and the merge of two documents.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "report/replay_report.hpp"

using namespace ioprobe;

namespace {

ReplayDocument doc_with(int64_t step, int64_t rec_wait, int64_t wait) {
  ReplayDocument d;
  d.header = {{"schema", "ioprobe.result/1"},       {"ioprobe_version", "t"}, {"kind", "replay"},
              {"command", nlohmann::json::array()}, {"created_utc", "x"},     {"host", nlohmann::json::object()}};
  d.trace.path = "job.trace";
  d.trace.source = "ioprobe record";
  d.trace.ops = 10;
  d.result.timeline.batches = 4;
  d.result.timeline.recorded_step_ns = step;
  d.result.timeline.recorded_wait_ns = rec_wait;
  d.result.timeline.replayed_wait_ns = wait;
  replay::StreamResult main, w;
  main.role = "main";
  main.dependency_wait_ns = wait;
  w.role = "worker 0";
  w.reads = 3;
  w.bytes = 300;
  d.result.streams = {main, w};
  d.result.bytes = 300;
  d.result.elapsed_ns = 2000;
  d.result.recorded_elapsed_ns = 1000;
  return d;
}

}  // namespace

TEST_CASE("replay report: the verdict from the batch timeline", "[replay]") {
  // Recorded: 100 s of steps, 0 s waiting. Here: 80 s waiting -> 1.80x longer, 44% waiting.
  const ReplayAnalysis a = analyse_replay(doc_with(100'000'000'000, 0, 80'000'000'000));
  CHECK(a.from_batches);
  CHECK(a.elapsed_ratio == Approx(1.8));
  CHECK(a.wait_share == Approx(80.0 / 180));
  CHECK(a.recorded_au == Approx(1.0));
  CHECK(a.replayed_au == Approx(100.0 / 180));
  CHECK_THAT(a.verdict, Catch::StartsWith("on this target your job would have run 1.80x longer; 44% of it waiting for "
                                          "batches from worker processes, whose streams were blocked in reads"));
  ReplayDocument no_batches = doc_with(0, 0, 0);
  no_batches.result.timeline.batches = 0;
  const ReplayAnalysis b = analyse_replay(no_batches);
  CHECK_FALSE(b.from_batches);
  CHECK(b.elapsed_ratio == Approx(2.0));
  CHECK_THAT(b.verdict, Catch::Contains("no batch marks"));
}

TEST_CASE("replay report: the document round-trips and refuses a damaged one", "[replay]") {
  ReplayDocument d = doc_with(1000, 200, 300);
  d.settings.maps = {"/data=/mnt/x"};
  d.warnings = {"w1"};
  const nlohmann::json j = nlohmann::json::parse(replay_document_json(d).dump());
  const ReplayDocument back = replay_document_from_json(j, "doc");
  CHECK(back.trace.path == "job.trace");
  CHECK(back.settings.maps == d.settings.maps);
  CHECK(back.result.streams == d.result.streams);
  CHECK(back.warnings == d.warnings);
  CHECK(render_replay_text(back) == render_replay_text(d));
  nlohmann::json bad = j;
  bad["settings"].erase("gaps");
  CHECK_THROWS_WITH(replay_document_from_json(bad, "doc"), "doc.settings: missing key 'gaps'");
  bad = j;
  bad["trace"]["ops"] = "10";
  CHECK_THROWS_WITH(replay_document_from_json(bad, "doc"),
                    "doc.trace.ops: expected a non-negative integer in range, found \"10\"");
}

TEST_CASE("replay report: merging documents merges their results, refusing another trace", "[replay]") {
  const ReplayDocument a = doc_with(1000, 200, 300);
  ReplayDocument b = doc_with(1000, 200, 500);
  b.header["created_utc"] = "y";  // another replay of the same trace
  // One replay given twice (its path twice, or a copy) would count its bytes twice.
  CHECK_THROWS_WITH(merge_replay_documents({a, a}, {"a.json", "a2.json"}), Catch::Contains("are the same result"));
  const ReplayDocument m = merge_replay_documents({a, b}, {"a.json", "b.json"});
  CHECK(m.result.bytes == 600);
  CHECK(m.result.processes == 2);
  CHECK(m.result.timeline.replayed_wait_ns == 800);
  CHECK(m.sources == std::vector<std::string>{"a.json", "b.json"});
  // b's process is numbered after a's, so the stream rows tell the two replays apart.
  REQUIRE(m.result.streams.size() == 4);
  CHECK(m.result.streams[0].replay_rank == 0);
  CHECK(m.result.streams[2].replay_rank == 1);
  CHECK(m.warnings.empty());
  ReplayDocument elsewhere = b;
  elsewhere.target.path = "/mnt/b";
  elsewhere.target.fs_type = "ext4";
  const ReplayDocument m2 = merge_replay_documents({a, elsewhere}, {"a.json", "b.json"});
  REQUIRE(m2.warnings.size() == 1);
  CHECK_THAT(m2.warnings[0], Catch::Contains("/mnt/b (ext4)"));
  ReplayDocument other = b;
  other.trace.path = "other.trace";
  CHECK_THROWS_AS(merge_replay_documents({a, other}, {"a.json", "b.json"}), UsageError);
}
