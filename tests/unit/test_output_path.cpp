// Output files (--json, --html, --csv): ioprobe replaces only its own outputs (or empty files).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

namespace {
void put(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string get(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
}  // namespace

TEST_CASE("an output path that holds someone else's file is refused and the file kept", "[output]") {
  TempDir tmp("outpath");
  const std::string& d = tmp.path;
  put(d + "/user.json", "precious\n");
  CHECK_THROWS_WITH(check_output_path(d + "/user.json", "--json", "run"), Catch::Contains("--json") &&
                                                                              Catch::Contains("user.json") &&
                                                                              Catch::Contains("not an ioprobe output"));
  CHECK(get(d + "/user.json") == "precious\n");
  put(d + "/page.html", "<html><title>my notes</title></html>");
  CHECK_THROWS_AS(check_output_path(d + "/page.html", "--html", kHtmlOutput), UsageError);

  // ioprobe's own outputs and empty files may be replaced; a new name is fine.
  put(d + "/r.json", "{\n  \"command\": \"x\",\n  \"schema\": \"ioprobe.result/1\"\n}\n");
  CHECK_NOTHROW(check_output_path(d + "/r.json", "--json", "run"));
  put(d + "/r.html", "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ioprobe report</title>");
  CHECK_NOTHROW(check_output_path(d + "/r.html", "--html", kHtmlOutput));
  put(d + "/t.csv", "num_workers,prefetch_factor,numa,repeats\n1,2,none,3\n");
  CHECK_NOTHROW(check_output_path(d + "/t.csv", "--csv", kTuneCsvOutput));
  put(d + "/f.csv", "ioprobe_field,value\nkind,run\n");
  CHECK_NOTHROW(check_output_path(d + "/f.csv", "--csv", kFieldsCsvOutput));
  // A tune's table and a document's figures are different outputs: neither replaces the other.
  CHECK_THROWS_WITH(check_output_path(d + "/f.csv", "--csv", kTuneCsvOutput),
                    Catch::Contains("is a CSV table of a document's figures"));
  CHECK_THROWS_WITH(check_output_path(d + "/t.csv", "--csv", kFieldsCsvOutput), Catch::Contains("is a tune CSV table"));
  put(d + "/empty.json", "");
  CHECK_NOTHROW(check_output_path(d + "/empty.json", "--json", "run"));
  CHECK_NOTHROW(check_output_path(d + "/new.json", "--json", "run"));
  // A CSV that merely mentions the header later is not ours.
  put(d + "/other.csv", "a,b\nnum_workers,prefetch_factor,numa,\n");
  CHECK_THROWS_AS(check_output_path(d + "/other.csv", "--csv", kTuneCsvOutput), UsageError);
}

TEST_CASE("an output that is one of the inputs is refused, by file identity", "[output]") {
  // `ioprobe report ck.json --html ck.json` replaced its own input (an ioprobe output, so
  // check_output_path let it through).
  TempDir tmp("outin");
  const std::string& d = tmp.path;
  const std::string doc = "{\n  \"kind\": \"checkpoint\",\n  \"schema\": \"ioprobe.result/1\"\n}\n";
  put(d + "/ck.json", doc);
  CHECK_NOTHROW(check_output_path(d + "/ck.json", "--json", "checkpoint"));  // ours, so replaceable as such...
  CHECK_THROWS_WITH(check_output_not_input(d + "/ck.json", "--html", {d + "/other.json", d + "/ck.json"}),
                    Catch::Contains("--html") && Catch::Contains("ck.json") && Catch::Contains("input"));
  // The same file under another name: a symlink, a hard link, a path with "./" in it.
  REQUIRE(symlink((d + "/ck.json").c_str(), (d + "/sym.json").c_str()) == 0);
  REQUIRE(link((d + "/ck.json").c_str(), (d + "/hard.json").c_str()) == 0);
  CHECK_THROWS_AS(check_output_not_input(d + "/sym.json", "--html", {d + "/ck.json"}), UsageError);
  CHECK_THROWS_AS(check_output_not_input(d + "/hard.json", "--csv", {d + "/ck.json"}), UsageError);
  CHECK_THROWS_AS(check_output_not_input(d + "/./ck.json", "--json", {d + "/ck.json"}), UsageError);
  CHECK(get(d + "/ck.json") == doc);
  // Another existing output, or one not written yet, is fine.
  put(d + "/old.html", "<title>ioprobe report</title>");
  CHECK_NOTHROW(check_output_not_input(d + "/old.html", "--html", {d + "/ck.json"}));
  CHECK_NOTHROW(check_output_not_input(d + "/new.html", "--html", {d + "/ck.json"}));
}

TEST_CASE("two outputs of one command naming the same file are refused", "[output]") {
  TempDir dir("outdistinct");
  const std::string a = dir.path + "/a.out";
  CHECK_NOTHROW(check_outputs_distinct({{"--json", a}, {"--html", ""}, {"--csv", dir.path + "/b.csv"}}));
  try {
    check_outputs_distinct({{"--json", a}, {"--csv", dir.path + "/./a.out"}});
    FAIL("the same file twice was accepted");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("--json and --csv both name") != std::string::npos);
  }
}

TEST_CASE("an ioprobe output of another kind is refused naming the file, its kind and what to do", "[output]") {
  // `ioprobe run --json cal.json` replaced a calibration document without a word.
  TempDir tmp("outkind");
  const std::string& d = tmp.path;
  const std::string cal = "{\n  \"kind\": \"calibration\",\n  \"schema\": \"ioprobe.calibration/1\"\n}\n";
  put(d + "/cal.json", cal);
  CHECK(output_kind(d + "/cal.json") == "calibration");
  try {
    check_output_path(d + "/cal.json", "--json", "run");
    FAIL("a run result over a calibration document was accepted");
  } catch (const UsageError& e) {
    CHECK(e.exit_code() == 2);
    CHECK_THAT(std::string(e.what()), Catch::Contains("--json '" + d + "/cal.json' is a calibration document") &&
                                          Catch::Contains("a 'run' result document") &&
                                          Catch::Contains("choose another file name"));
  }
  CHECK(get(d + "/cal.json") == cal);
  CHECK_NOTHROW(check_output_path(d + "/cal.json", "--json", "calibration"));  // the same kind, as today

  // Another command's result: a tune document is not replaced by a run's, nor by an HTML page or a CSV.
  put(d + "/tune.json", "{\n  \"kind\": \"tune\",\n  \"schema\": \"ioprobe.result/1\"\n}\n");
  CHECK(output_kind(d + "/tune.json") == "tune");
  CHECK_THROWS_WITH(check_output_path(d + "/tune.json", "--json", "run"),
                    Catch::Contains("is a 'tune' result document") && Catch::Contains("a 'run' result document"));
  CHECK_THROWS_WITH(check_output_path(d + "/tune.json", "--html", kHtmlOutput), Catch::Contains("an HTML report"));
  CHECK_THROWS_AS(check_output_path(d + "/tune.json", "--csv", kTuneCsvOutput), UsageError);
  CHECK_NOTHROW(check_output_path(d + "/tune.json", "--json", "tune"));
  put(d + "/r.html", "<title>ioprobe report</title>");
  CHECK(output_kind(d + "/r.html") == kHtmlOutput);
  CHECK_THROWS_WITH(check_output_path(d + "/r.html", "--json", "run"), Catch::Contains("is an HTML report"));
  put(d + "/t.csv", "num_workers,prefetch_factor,numa,repeats\n1,2,none,3\n");
  CHECK_THROWS_WITH(check_output_path(d + "/t.csv", "--json", "tune"), Catch::Contains("is a tune CSV table"));
  // The same rule where documents are written (check_replaceable, used by report/'s write_json_file).
  CHECK_THROWS_WITH(check_replaceable(d + "/cal.json", "", "scaling"),
                    Catch::Contains("'" + d + "/cal.json' is a calibration document"));
  CHECK(output_kind(d + "/none.json").empty());
}
