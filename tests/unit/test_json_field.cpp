#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/json_field.hpp"

using namespace ioprobe;
using nlohmann::json;

TEST_CASE("json_field: reads present fields of the right type", "[json]") {
  const json j = json::parse(R"({"n": 3, "neg": -2, "x": 1.5, "s": "a", "b": true, "v": [1, 2]})");
  CHECK(json_field<uint64_t>(j, "n", "doc") == 3);
  CHECK(json_field<int>(j, "neg", "doc") == -2);
  CHECK(json_field<double>(j, "x", "doc") == 1.5);
  CHECK(json_field<double>(j, "n", "doc") == 3.0);  // an integer is a number
  CHECK(json_field<std::string>(j, "s", "doc") == "a");
  CHECK(json_field<bool>(j, "b", "doc"));
  CHECK(json_field<std::vector<uint32_t>>(j, "v", "doc") == std::vector<uint32_t>{1, 2});
}

TEST_CASE("json_field: a missing or mistyped field is refused with its path", "[json]") {
  const json j = json::parse(R"({"n": -1, "x": 1.5, "s": "a", "big": 300, "v": [1, "two"], "o": {"k": null}})");
  CHECK_THROWS_WITH(json_field<int>(j, "nope", "'a.json'.results"),
                    Catch::Equals("'a.json'.results: missing key 'nope'"));
  CHECK_THROWS_WITH(json_field<uint64_t>(j, "n", "doc"), Catch::StartsWith("doc.n: expected a non-negative integer"));
  CHECK_THROWS_WITH(json_field<int>(j, "x", "doc"), Catch::StartsWith("doc.x: expected an integer"));
  CHECK_THROWS_WITH(json_field<double>(j, "s", "doc"), Catch::Equals("doc.s: expected a number, found \"a\""));
  CHECK_THROWS_WITH(json_field<uint8_t>(j, "big", "doc"), Catch::Contains("in range"));
  CHECK_THROWS_WITH(json_field<std::vector<int>>(j, "v", "doc"), Catch::StartsWith("doc.v[1]: expected an integer"));
  CHECK_THROWS_WITH(json_field<std::string>(json_at(j, "o", "doc"), "k", json_path("doc", "o")),
                    Catch::StartsWith("doc.o.k: expected a string"));
  CHECK_THROWS_AS(json_field<int>(json::array(), "n", "doc"), UsageError);
}

TEST_CASE("json_field_or: only an absent field takes the fallback", "[json]") {
  const json j = json::parse(R"({"n": "7"})");
  CHECK(json_field_or<int>(j, "absent", "doc", -1) == -1);
  CHECK_THROWS_WITH(json_field_or<int>(j, "n", "doc", -1), Catch::StartsWith("doc.n: expected an integer"));
}
