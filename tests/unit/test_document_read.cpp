// read_json_file (report/document.hpp): what `ioprobe report FILE` says of a file that is not a
// result document: the file, where parsing failed (line, column, byte), and what it expects.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/error.hpp"
#include "report/document.hpp"
#include "report/document_check.hpp"
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

  // ioprobe's own calibration document is named as such, with where it is used.
  m = refusal(f, "{\"schema\": \"ioprobe.calibration/1\", \"kind\": \"calibration\"}");
  CHECK(m.find("a calibration document") != std::string::npos);
  CHECK(m.find("--calibration") != std::string::npos);

  CHECK(refusal(f, "{\"schema\": \"ioprobe.result/1\", \"kind\": \"run\"}") == "(accepted)");
}

TEST_CASE("implausible_number: negative measures and fractions outside 0 to 1 are named by their place", "[report]") {
  nlohmann::json doc = {{"kind", "run"},
                        {"results", {{"samples", 10}, {"elapsed_s", 1.5}}},
                        {"ingest", {{"accelerator_utilization", 0.97}, {"worker_busy_fraction", 1.0}}},
                        {"numa", {{"node", -1}}},
                        {"cpu_fraction", 1.02}};
  CHECK(implausible_number(doc, "'a.json'").empty());  // NUMA node -1 and a CPU share just over 1 are as written
  doc["results"]["samples"] = -5;
  CHECK(implausible_number(doc, "'a.json'") == "'a.json'.results.samples: a count cannot be negative, found -5");
  doc["results"]["samples"] = 10;
  doc["ingest"]["accelerator_utilization"] = 7.5;  // a percentage typed over a fraction: "AU 750.0%"
  CHECK(implausible_number(doc, "'a.json'") ==
        "'a.json'.ingest.accelerator_utilization: a fraction (0 to 1) cannot be outside 0 to 1, found 7.5");
  doc["ingest"]["accelerator_utilization"] = 0.97;
  doc["ingest"]["worker_busy_fraction"] = -0.1;
  CHECK_THAT(implausible_number(doc, "'a.json'"), Catch::Contains("'a.json'.ingest.worker_busy_fraction: a fraction"));
  doc["ingest"]["worker_busy_fraction"] = 0.5;
  doc["epochs"] = nlohmann::json::array({{{"bytes", 1}}, {{"bytes", -2}}});
  CHECK(implausible_number(doc, "'a.json'") == "'a.json'.epochs[1].bytes: a size cannot be negative, found -2");
}
