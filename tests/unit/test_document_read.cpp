// read_json_file (report/document.hpp): what `ioprobe report FILE` says of a file that is not a
// result document: the file, where parsing failed (line, column, byte), and what it expects.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/error.hpp"
#include "report/document.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

namespace {
std::string refusal(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  try {
    read_json_file(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}
}  // namespace

TEST_CASE("read_json_file: not JSON, cut short, or not a result: the file, the place and what is expected",
          "[report][document]") {
  TempDir d("docread");
  const std::string f = d.path + "/r.json";
  auto no_library_text = [](const std::string& m) {
    CHECK(m.find("json.exception") == std::string::npos);
    CHECK(m.find("schema ioprobe.result/1") != std::string::npos);
    CHECK(m.find("r.json") != std::string::npos);
  };

  std::string m = refusal(f, "hello world\n");
  INFO(m);
  CHECK(m.find("is not valid JSON: parsing failed at line 1, column 1 (byte 1 of 12)") != std::string::npos);
  no_library_text(m);

  m = refusal(f, "{\n  \"schema\": \"ioprobe.result/1\",\n  \"kind\": \"run\",\n  \"results\": {\"samples\": 1");
  INFO(m);
  CHECK(m.find("parsing failed at line 4") != std::string::npos);
  CHECK(m.find("truncated?") != std::string::npos);
  no_library_text(m);

  m = refusal(f, "{\"a\": 1,\n \"b\": x}");
  INFO(m);
  CHECK(m.find("line 2, column 7") != std::string::npos);
  CHECK(m.find("truncated") == std::string::npos);

  m = refusal(f, "");
  CHECK(m.find("is empty") != std::string::npos);
  no_library_text(m);

  m = refusal(f, "[1, 2]");
  CHECK(m.find("its top level is an array") != std::string::npos);
  no_library_text(m);

  m = refusal(f, "{\"name\": \"x\", \"version\": 3}");
  CHECK(m.find("no \"schema\" string (keys: name, version)") != std::string::npos);
  no_library_text(m);

  m = refusal(f, "{\"schema\": 7}");  // a number where the schema name goes: no type_error escapes
  CHECK(m.find("no \"schema\" string") != std::string::npos);

  m = refusal(f, "{\"schema\": \"ioprobe.result/2\"}");
  CHECK(m.find("has schema 'ioprobe.result/2', not ioprobe.result/1") != std::string::npos);
  CHECK(m.find("another ioprobe version") != std::string::npos);

  CHECK(refusal(f, "{\"schema\": \"ioprobe.result/1\", \"kind\": \"run\"}") == "(accepted)");
}
