// The engine names as values (engine/engine_kind.hpp): one spelling each way, and the strict
// readers' refusal of a name that is not an engine.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/engine_kind.hpp"

using namespace ioprobe;
using nlohmann::json;

TEST_CASE("engine kind: to_string and from_string are each other's inverse", "[engine]") {
  for (const EngineKind k : {EngineKind::kIoUring, EngineKind::kPsync}) {
    CAPTURE(to_string(k));
    CHECK(engine_kind_from_string(to_string(k)) == k);
    CHECK(to_string(selection_of(k)) == std::string(to_string(k)));
  }
  CHECK(std::string(to_string(EngineKind::kIoUring)) == "io_uring");
  CHECK(std::string(to_string(EngineKind::kPsync)) == "psync");
  for (const EngineSelection s : {EngineSelection::kAuto, EngineSelection::kIoUring, EngineSelection::kPsync})
    CHECK(engine_selection_from_string(to_string(s)) == s);
  CHECK(std::string(to_string(EngineSelection::kAuto)) == "auto");
  // auto is a selection, never an engine; gds and the others are neither.
  CHECK_FALSE(engine_kind_from_string("auto"));
  for (const char* other : {"gds", "aio", "IO_URING", "", "psync "}) {
    CAPTURE(other);
    CHECK_FALSE(engine_kind_from_string(other));
    CHECK_FALSE(engine_selection_from_string(other));
  }
  CHECK(std::string(to_string_or_empty(std::nullopt)) == "");
  CHECK(std::string(to_string_or_empty(EngineKind::kPsync)) == "psync");
}

TEST_CASE("engine kind: a document field that is not an engine is refused naming its path", "[engine]") {
  const json j = {{"engine", "io_uring"}, {"requested", "auto"}, {"none", ""}, {"bad", "gds"}, {"num", 3}};
  CHECK(engine_kind_field(j, "engine", "'a.json'.target") == EngineKind::kIoUring);
  CHECK(engine_selection_field(j, "requested", "'a.json'.raw") == EngineSelection::kAuto);
  CHECK_FALSE(engine_kind_or_none_field(j, "none", "'a.json'"));
  CHECK(engine_kind_or_none_field(j, "engine", "'a.json'") == EngineKind::kIoUring);
  CHECK_THROWS_WITH(engine_kind_field(j, "bad", "'a.json'.target"),
                    "'a.json'.target.bad: 'gds' is not an engine (io_uring, psync)");
  CHECK_THROWS_AS(engine_kind_field(j, "bad", "'a.json'.target"), UsageError);
  CHECK_THROWS_WITH(engine_kind_field(j, "requested", "'a.json'.target"),
                    "'a.json'.target.requested: 'auto' is not an engine (io_uring, psync)");
  CHECK_THROWS_WITH(engine_selection_field(j, "bad", "'a.json'.raw"),
                    "'a.json'.raw.bad: 'gds' is not an engine selection (auto, io_uring, psync)");
  CHECK_THROWS_WITH(engine_kind_or_none_field(j, "bad", "'a.json'"),
                    "'a.json'.bad: 'gds' is not an engine (io_uring, psync)");
  CHECK_THROWS_WITH(engine_kind_field(j, "num", "'a.json'"), Catch::Contains("'a.json'.num: expected a string"));
  CHECK_THROWS_WITH(engine_kind_field(j, "missing", "'a.json'"), Catch::Contains("missing key 'missing'"));
}
