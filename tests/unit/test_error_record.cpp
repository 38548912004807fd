// Failures as typed values (core/error_record.hpp) and their text, hints and JSON (report/error_text.hpp).
#include <catch2/catch.hpp>

#include <cerrno>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/error_record.hpp"
#include "report/error_text.hpp"
#include "report/run_document.hpp"

using namespace ioprobe;

TEST_CASE("error records: identical failures fold into one with a count, at most N distinct kept", "[errors]") {
  std::vector<ErrorRecord> list;
  const ErrorRecord a{.err = EIO, .op = "read", .path = "d/x.jpg"};
  for (int i = 0; i < 5; ++i) add_error(list, a, 3);  // the same file failing epoch after epoch
  REQUIRE(list.size() == 1);
  CHECK(list[0].count == 5);
  add_error(list, ErrorRecord{.err = ENOENT, .op = "open", .path = "d/x.jpg"}, 3);  // another errno: another record
  add_error(list, ErrorRecord{.err = EIO, .op = "read", .path = "d/y.jpg"}, 3);
  add_error(list, ErrorRecord{.err = EIO, .op = "read", .path = "d/z.jpg"}, 3);  // a fourth distinct one: dropped
  CHECK(list.size() == 3);
  add_error(list, ErrorRecord{.err = EIO, .op = "read", .path = "d/x.jpg", .count = 2}, 3);  // a merged part's
  CHECK(list[0].count == 7);
}

TEST_CASE("error records: the line has IoError's form; the count is added by the report", "[errors]") {
  const ErrorRecord e{.err = ENOENT, .op = "open", .path = "d/a\xff"};
  CHECK(error_line(e) == IoError(ENOENT, "open", "d/a\\xFF").what());  // escape_bytes: upper-case hex
  CHECK(error_text(e) == error_line(e));
  ErrorRecord twice = e;
  twice.count = 12;
  CHECK(error_text(twice) == error_line(e) + " (12 times)");
  CHECK(error_line(ErrorRecord{.op = "decode (libjpeg-turbo)", .path = "b.jpg", .detail = "Not a JPEG file"}) ==
        "decode (libjpeg-turbo) b.jpg: Not a JPEG file");
  CHECK(error_line(ErrorRecord{.op = "read of 4096 B at offset 0", .detail = "short transfer of 12 B"}) ==
        "read of 4096 B at offset 0: short transfer of 12 B");
}

TEST_CASE("error records: the hint comes from the errno, never from the text", "[errors]") {
  const ErrorRecord canceled{.err = ECANCELED, .op = "read", .path = "x"};
  CHECK_THAT(error_hint(canceled), Catch::Contains("io-wq") && Catch::Contains("pids.max"));
  // A text that merely mentions ECANCELED (a file named so, a detail) gets no hint.
  CHECK(error_hint(ErrorRecord{.err = EIO, .op = "read", .path = "(ECANCELED)"}).empty());
  CHECK(error_hint(ErrorRecord{.op = "read", .detail = "x (ECANCELED)"}).empty());
}

TEST_CASE("error records: a list's text shows each failure once with its count, each hint once", "[errors]") {
  std::vector<ErrorRecord> list;
  for (int i = 0; i < 4; ++i) add_error(list, ErrorRecord{.err = ECANCELED, .op = "read", .path = "a"}, 10);
  add_error(list, ErrorRecord{.err = ECANCELED, .op = "read", .path = "b"}, 10);
  const std::string t = error_list_text(list, "  ");
  CHECK(t.find("  read a: Operation canceled (ECANCELED) (4 times)\n") != std::string::npos);
  CHECK(t.find("  read b: Operation canceled (ECANCELED)\n") != std::string::npos);
  const std::string hint = error_hint(list[0]);
  REQUIRE_FALSE(hint.empty());
  CHECK(t.find(hint) == t.rfind(hint));  // once
  CHECK(error_list_text({}, "  ").empty());
}

TEST_CASE("error records: JSON keeps errno, op, path (escaped), detail and count", "[errors][json]") {
  const ErrorRecord e{.err = EIO, .op = "read", .path = "d/\xfe.bin", .count = 3};
  const nlohmann::json j = error_record_json(e);
  CHECK(j.at("errno") == EIO);
  CHECK(j.at("errno_name") == "EIO");
  CHECK(j.at("path") == "d/\\xFE.bin");
  CHECK(j.at("text") == error_line(e));
  const ErrorRecord back = error_record_from_json(nlohmann::json::parse(j.dump()), "t");
  CHECK(back.same_failure(e));
  CHECK(back.count == 3);
  CHECK_THROWS_AS(error_record_from_json(nlohmann::json{{"errno", "EIO"}}, "t"), UsageError);
}

TEST_CASE("run results: error_details round-trip; a document without them keeps its lines", "[errors][json]") {
  LoaderResult lr;
  lr.errors = 5;
  lr.error_samples = {ErrorRecord{.err = ECANCELED, .op = "read", .path = "f", .count = 5}};
  nlohmann::json j = loader_results_json(lr);
  CHECK(j.at("error_samples") == nlohmann::json::array({"read f: Operation canceled (ECANCELED) (5 times)"}));
  REQUIRE(j.at("error_details").size() == 1);
  LoaderResult back = run_results_from_json(j, "results");
  REQUIRE(back.error_samples.size() == 1);
  CHECK(back.error_samples[0].err == ECANCELED);
  CHECK(back.error_samples[0].count == 5);
  j.erase("error_details");  // as written before error_details existed
  back = run_results_from_json(j, "results");
  REQUIRE(back.error_samples.size() == 1);
  CHECK(back.error_samples[0].err == 0);
  CHECK(error_line(back.error_samples[0]) == j.at("error_samples")[0]);
}

TEST_CASE("error_spread counts reads and distinct files apart", "[errors]") {
  std::vector<ErrorRecord> list;
  ErrorRecord a{13, "open", "/d/a", "", 24};
  add_error(list, a, 10);
  ErrorSpread s = error_spread(list, 24);
  CHECK(s.files == 1);
  CHECK(s.complete);
  CHECK(failed_reads_text(24, s) == "24 failed reads of 1 file");
  ErrorRecord b{5, "read", "/d/a", "", 1};  // another failure of the same file
  ErrorRecord c{5, "read", "/d/b", "", 1};
  add_error(list, b, 10);
  add_error(list, c, 10);
  s = error_spread(list, 26);
  CHECK(s.files == 2);
  CHECK(failed_reads_text(26, s) == "26 failed reads of 2 files");
  // Failures beyond the kept records: the file count is a lower bound.
  s = error_spread(list, 40);
  CHECK_FALSE(s.complete);
  CHECK(failed_reads_text(40, s) == "40 failed reads of at least 2 files");
  CHECK(failed_reads_text(1, error_spread({}, 1)) == "1 failed read");
}

TEST_CASE("run results JSON: error_files counts the distinct files of the failures", "[errors][json]") {
  LoaderResult r;
  r.errors = 24;
  r.error_samples.push_back(ErrorRecord{.err = EACCES, .op = "open", .path = "d/a", .count = 24});
  nlohmann::json j = loader_results_json(r);
  CHECK(j.at("error_files") == 1);
  CHECK(j.at("error_files_complete") == true);
  r.errors = 30;  // 6 failures not kept: a lower bound
  j = loader_results_json(r);
  CHECK(j.at("error_files_complete") == false);
}
