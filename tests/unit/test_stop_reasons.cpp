// Why a run stopped, as values: the loader's, raw's, a checkpoint series' and capacity's stops
// read back from their texts (the ones documents hold), and a text that is none of them refused.
#include <catch2/catch.hpp>

#include <csignal>

#include <nlohmann/json.hpp>

#include "checkpoint/save_series.hpp"
#include "core/error.hpp"
#include "loader/loader_result.hpp"
#include "loader/loader_result_json.hpp"
#include "loader/loader_stop.hpp"
#include "raw/raw_results.hpp"
#include "raw/raw_stop.hpp"
#include "report/capacity_document.hpp"

using namespace ioprobe;
using nlohmann::json;

TEST_CASE("loader stop: every kind reads back from its text, which is the documents' text", "[loader]") {
  const std::vector<std::pair<LoaderStop, std::string>> cases = {
      {LoaderStop{}, ""},
      {{.kind = LoaderStopKind::kCompleted}, "completed"},
      {{.kind = LoaderStopKind::kDuration}, "duration reached"},
      {loader_stop_interrupted(SIGINT), "interrupted (SIGINT)"},
      {loader_stop_interrupted(SIGTERM), "interrupted (SIGTERM)"},
      {{.kind = LoaderStopKind::kCanceledReads, .canceled_reads = 8},
       "stopped early: io_uring canceled 8 reads (ECANCELED, see ERRORS)"},
      {{.kind = LoaderStopKind::kStonewall}, "stonewall: the first host to read its share ended the measurement"},
      {{.kind = LoaderStopKind::kPeerFailed}, "stopped: a rank of another process failed (see its error)"},
  };
  for (const auto& [stop, text] : cases) {
    CAPTURE(text);
    CHECK(to_string(stop) == text);
    CHECK(loader_stop_from_string(text) == stop);
  }
  for (const char* other : {"Completed", "interrupted", "interrupted (SIGHUP)",
                            "stopped early: io_uring canceled x reads "
                            "(ECANCELED, see ERRORS)",
                            "stopped early: io_uring canceled -1 reads (ECANCELED, see "
                            "ERRORS)",
                            "stopped early: io_uring canceled 08 reads (ECANCELED, see ERRORS)"}) {
    CAPTURE(other);
    CHECK_FALSE(loader_stop_from_string(other));
  }
}

TEST_CASE("loader stop: merged parts keep a stop over completed, compared as values", "[loader]") {
  // Each part has a rank: merging into a result without ranks or workers would just copy the part.
  LoaderResult a, b, c;
  for (LoaderResult* r : {&a, &b, &c}) r->ranks.emplace_back();
  a.stop = {.kind = LoaderStopKind::kCompleted};
  b.stop = {.kind = LoaderStopKind::kDuration};
  c.stop = loader_stop_interrupted(SIGTERM);
  LoaderResult none;
  none.merge(a);
  CHECK(none.stop.completed());
  a.merge(b);
  CHECK(a.stop.kind == LoaderStopKind::kDuration);
  a.merge(c);  // the first stop that is not completed stays
  CHECK(a.stop.kind == LoaderStopKind::kDuration);
}

TEST_CASE("loader stop: a result whose stop_reason is not a stop is refused naming the path", "[loader]") {
  LoaderResult r;
  r.stop = {.kind = LoaderStopKind::kCanceledReads, .canceled_reads = 3};
  json j = loader_result_to_json(r);
  CHECK(j["stop_reason"] == "stopped early: io_uring canceled 3 reads (ECANCELED, see ERRORS)");
  CHECK(loader_result_from_json(j, "part").stop == r.stop);
  j["stop_reason"] = "finished";
  CHECK_THROWS_AS(loader_result_from_json(j, "part"), UsageError);
  CHECK_THROWS_WITH(loader_result_from_json(j, "part"),
                    Catch::StartsWith("part.stop_reason: 'finished' is not a loader "
                                      "stop reason (completed, duration reached"));
}

TEST_CASE("raw stop: every kind reads back from its text; others are refused", "[raw]") {
  const std::vector<std::pair<RawStop, std::string>> cases = {
      {RawStop{}, ""},
      {{.kind = RawStopKind::kOnePass}, "one pass over the region"},
      {{.kind = RawStopKind::kRuntime}, "runtime reached"},
      {{.kind = RawStopKind::kErrors}, "stopped early by I/O errors"},
      {raw_stop_interrupted(SIGINT), "interrupted (SIGINT)"},
      {raw_stop_interrupted(SIGTERM), "interrupted (SIGTERM)"},
  };
  for (const auto& [stop, text] : cases) {
    CAPTURE(text);
    CHECK(to_string(stop) == text);
    CHECK(raw_stop_from_string(text) == stop);
  }
  CHECK_FALSE(raw_stop_from_string("completed"));
  CHECK_FALSE(raw_stop_from_string("runtime"));
  const json j = {{"stop_reason", "runtime"}};
  CHECK_THROWS_WITH(raw_stop_field(j, "stop_reason", "'r.json'.raw.results"),
                    Catch::StartsWith("'r.json'.raw.results.stop_reason: 'runtime' is not a raw stop reason ("));
  // A partial part's stop wins over a complete one's.
  RawResults a, b;
  a.stop = {.kind = RawStopKind::kRuntime};
  b.partial = true;
  b.stop = raw_stop_interrupted(SIGTERM);
  a.merge(b);
  CHECK(a.stop == raw_stop_interrupted(SIGTERM));
}

TEST_CASE("series and capacity stops: every kind reads back from its text; others are refused",
          "[checkpoint][capacity]") {
  using checkpoint::SeriesStop;
  for (const SeriesStop s : {SeriesStop::kNone, SeriesStop::kRepeat, SeriesStop::kDuration, SeriesStop::kInterrupted,
                             SeriesStop::kSaveFailed, SeriesStop::kRestoreFailed})
    CHECK(checkpoint::series_stop_from_string(to_string(s)) == s);
  CHECK(std::string(to_string(SeriesStop::kSaveFailed)) == "save failed");
  CHECK(std::string(to_string(SeriesStop::kNone)).empty());
  CHECK_FALSE(checkpoint::series_stop_from_string("count reached"));
  for (const CapacityStop s :
       {CapacityStop::kCompleted, CapacityStop::kLimit, CapacityStop::kBudget, CapacityStop::kInterrupted})
    CHECK(capacity_stop_from_string(to_string(s)) == s);
  CHECK(std::string(to_string(CapacityStop::kBudget)) == "budget");
  CHECK_FALSE(capacity_stop_from_string(""));
  CHECK_FALSE(capacity_stop_from_string("interrupted (SIGINT)"));
}
