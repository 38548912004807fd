// The trace file: a round trip keeps every field (a non-UTF-8 path included), and each kind of bad
// trace is refused with its line number named.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "core/error.hpp"
#include "temp_dir.hpp"
#include "trace/trace.hpp"
#include "trace/trace_format.hpp"

using namespace ioprobe;
using namespace ioprobe::trace;

namespace {

Trace sample_trace() {
  Trace t;
  t.source = "ioprobe record";
  t.command = {"python3", "train.py", std::string("--data=/d/\xff\xfe")};
  t.host = "node7";
  t.duration_ns = 5'000'000'000;
  t.limits = {"page faults of mapped files are not calls"};
  t.mapped = {1 << 20, 0, false};
  t.files = {{"/data/a.bin", 110'000, true}, {std::string("/data/caf\xe9\x01.npy"), 0, false}};
  Stream main;
  main.pid = 100;
  main.tid = 100;
  main.role = "main";
  main.rank = 3;
  Op open;
  open.kind = OpKind::open;
  open.start_ns = 10;
  open.dur_ns = 2;
  open.file = 0;
  open.call = "openat";
  Op rd;
  rd.kind = OpKind::read;
  rd.start_ns = 20;
  rd.dur_ns = 7;
  rd.gap_cpu_ns = 5;
  rd.file = 0;
  rd.offset = 4096;
  rd.requested = 65536;
  rd.bytes = 1000;
  rd.call = "pread64";
  Op bad;
  bad.kind = OpKind::open;
  bad.start_ns = 30;
  bad.dur_ns = 1;
  bad.file = 1;
  bad.error = 2;
  bad.call = "open";
  main.ops = {open, rd, bad};
  main.marks = {{MarkKind::batch_wait_begin, 15, 0}, {MarkKind::batch_wait_end, 40, 0}};
  Stream worker;
  worker.pid = 101;
  worker.tid = 101;
  worker.ppid = 100;
  worker.role = "worker 0";
  Op mm;
  mm.kind = OpKind::mmap;
  mm.start_ns = 12;
  mm.dur_ns = 3;
  mm.file = 1;
  mm.offset = 0;
  mm.requested = 1 << 20;
  mm.call = "mmap";
  worker.ops = {mm};
  worker.marks = {{MarkKind::worker_start, 11, 0}};
  t.streams = {main, worker};
  return t;
}

std::string write_text(const TempDir& dir, const std::string& text, const std::string& name = "t.jsonl") {
  std::string path = dir.path + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message of the UsageError read_trace throws for `text`, or "" when it reads.
std::string refusal(const std::string& text) {
  TempDir dir("trace");
  std::string path = write_text(dir, text);
  try {
    read_trace(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

const std::string kHeader =
    R"({"format":"ioprobe-trace","version":1,"source":"test","command":[],"host":"h","anonymized":false,)"
    R"("clock":"CLOCK_MONOTONIC","duration_ns":100,"limits":[],"mapped":{"mapped_bytes":0}})"
    "\n";
const std::string kDecls = "{\"file\":0,\"path\":\"/d/x\",\"size\":10}\n{\"stream\":0,\"pid\":1,\"tid\":1}\n";
const std::string kRead = R"({"op":"read","s":0,"t":5,"d":1,"f":0,"off":0,"len":10,"ret":10,"call":"read"})"
                          "\n";

}  // namespace

TEST_CASE("a partial trace says so and why; a complete one and an older header read as complete", "[trace]") {
  TempDir dir("trace");
  Trace t = sample_trace();
  t.partial = "interrupted: ioprobe record got SIGINT";
  std::string path = dir.path + "/partial.jsonl";
  write_trace(t, path);
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  CHECK_THAT(header, Catch::Contains("\"partial\":true"));
  CHECK(read_trace(path).partial == t.partial);
  t.partial.clear();
  write_trace(t, path);
  CHECK(read_trace(path).partial.empty());
  std::string end1 = "{\"end\":true,\"events\":1}\n";
  CHECK(read_trace(write_text(dir, kHeader + kDecls + kRead + end1, "old.jsonl")).partial.empty());
  std::string h = kHeader;
  h.insert(h.find("\"clock\""), "\"partial\":1,");
  CHECK_THAT(refusal(h + kDecls + kRead + end1), Catch::Contains("\"partial\" must be true or false"));
}

TEST_CASE("trace round trip keeps every field, non-UTF-8 paths included", "[trace]") {
  TempDir dir("trace");
  Trace t = sample_trace();
  std::string path = dir.path + "/rt.jsonl";
  write_trace(t, path);
  REQUIRE(is_trace_file(path));
  Trace r = read_trace(path);
  CHECK(r.source == t.source);
  CHECK(r.command == t.command);
  CHECK(r.host == t.host);
  CHECK(r.duration_ns == t.duration_ns);
  CHECK(r.limits == t.limits);
  CHECK(r.mapped.mapped_bytes == t.mapped.mapped_bytes);
  REQUIRE(r.files.size() == 2);
  CHECK(r.files[0].path == "/data/a.bin");
  CHECK(r.files[0].size_bytes == 110'000);
  CHECK(r.files[0].size_known);
  CHECK(r.files[1].path == t.files[1].path);
  CHECK_FALSE(r.files[1].size_known);
  REQUIRE(r.streams.size() == 2);
  CHECK(r.streams[0].role == "main");
  CHECK(r.streams[0].rank == 3);
  CHECK(r.streams[1].ppid == 100);
  REQUIRE(r.streams[0].ops.size() == 3);
  const Op& rd = r.streams[0].ops[1];
  CHECK(rd.kind == OpKind::read);
  CHECK(rd.start_ns == 20);
  CHECK(rd.dur_ns == 7);
  CHECK(rd.gap_cpu_ns == 5);
  CHECK(rd.offset == 4096);
  CHECK(rd.requested == 65536);
  CHECK(rd.bytes == 1000);
  CHECK(rd.call == "pread64");
  CHECK(r.streams[0].ops[0].gap_cpu_ns == -1);
  CHECK(r.streams[0].ops[2].error == 2);
  CHECK(r.streams[0].marks.size() == 2);
  CHECK(r.streams[1].marks[0].kind == MarkKind::worker_start);
  CHECK(r.streams[1].ops[0].requested == (1u << 20));
  CHECK(r.read_bytes() == 1000);
  CHECK(r.op_count() == 4);
  // Written again, the text is the same.
  CHECK(format_trace(r) == format_trace(t));
}

TEST_CASE("trace: a minimal hand-written trace reads", "[trace]") {
  CHECK(refusal(kHeader + kDecls + kRead + "{\"end\":true,\"events\":1}\n").empty());
}

TEST_CASE("trace refusals name the line", "[trace]") {
  const std::string end1 = "{\"end\":true,\"events\":1}\n";
  SECTION("no end line") {
    std::string msg = refusal(kHeader + kDecls + kRead);
    CHECK_THAT(msg, Catch::Contains("line 4") && Catch::Contains("truncated"));
  }
  SECTION("last line cut off") {
    std::string msg = refusal(kHeader + kDecls + kRead + "{\"end\":true,\"ev");
    CHECK_THAT(msg, Catch::Contains("line 5") && Catch::Contains("cut off"));
  }
  SECTION("last line complete JSON but no newline") {
    std::string msg = refusal(kHeader + kDecls + kRead + "{\"end\":true,\"events\":1}");
    CHECK_THAT(msg, Catch::Contains("line 5") && Catch::Contains("truncated"));
  }
  SECTION("wrong format") {
    std::string h = kHeader;
    h.replace(h.find("ioprobe-trace"), 13, "dlio-trace");
    CHECK_THAT(refusal(h + kDecls + kRead + end1),
               Catch::Contains("line 1") && Catch::Contains("not an ioprobe trace"));
  }
  SECTION("not JSON at all") {
    CHECK_THAT(refusal("hello\n"), Catch::Contains("line 1") && Catch::Contains("not an ioprobe trace"));
  }
  SECTION("wrong version") {
    std::string h = kHeader;
    h.replace(h.find("\"version\":1"), 11, "\"version\":7");
    std::string msg = refusal(h + kDecls + kRead + end1);
    CHECK_THAT(msg, Catch::Contains("line 1") && Catch::Contains("version 7"));
    // The advice is given once, not followed by the generic "re-record it" hint again.
    CHECK(msg.find("re-record") == msg.rfind("re-record"));
  }
  SECTION("unknown op") {
    std::string msg = refusal(kHeader + kDecls +
                              R"({"op":"write","s":0,"t":5,"d":1})"
                              "\n" +
                              end1);
    CHECK_THAT(msg, Catch::Contains("line 4") && Catch::Contains("unknown op \"write\""));
  }
  SECTION("unknown mark") {
    std::string msg = refusal(kHeader + kDecls +
                              R"({"mark":"step","s":0,"t":5})"
                              "\n" +
                              end1);
    CHECK_THAT(msg, Catch::Contains("line 4") && Catch::Contains("unknown mark \"step\""));
  }
  SECTION("unknown line kind") {
    std::string msg = refusal(kHeader + kDecls +
                              R"({"event":"x"})"
                              "\n" +
                              end1);
    CHECK_THAT(msg, Catch::Contains("line 4") && Catch::Contains("unknown line kind"));
  }
  SECTION("time goes backwards within a stream") {
    std::string r2 = R"({"op":"read","s":0,"t":3,"d":1,"f":0})"
                     "\n";
    std::string msg = refusal(kHeader + kDecls + kRead + r2 + "{\"end\":true,\"events\":2}\n");
    CHECK_THAT(msg, Catch::Contains("line 5") && Catch::Contains("backwards") && Catch::Contains("line 4"));
  }
  SECTION("marks going backwards") {
    std::string m = R"({"mark":"batch_wait_begin","s":0,"t":9})"
                    "\n"
                    R"({"mark":"batch_wait_end","s":0,"t":8})"
                    "\n";
    std::string msg = refusal(kHeader + kDecls + m + "{\"end\":true,\"events\":2}\n");
    CHECK_THAT(msg, Catch::Contains("line 5") && Catch::Contains("backwards"));
  }
  SECTION("earlier time in another stream is fine") {
    std::string decl2 = "{\"stream\":1,\"pid\":2,\"tid\":2}\n";
    std::string r2 = R"({"op":"read","s":1,"t":1,"d":1,"f":0})"
                     "\n";
    CHECK(refusal(kHeader + kDecls + decl2 + kRead + r2 + "{\"end\":true,\"events\":2}\n").empty());
  }
  SECTION("unknown stream") {
    std::string msg = refusal(kHeader + kDecls +
                              R"({"op":"read","s":4,"t":5,"d":1})"
                              "\n" +
                              end1);
    CHECK_THAT(msg, Catch::Contains("line 4") && Catch::Contains("stream 4 is not declared"));
  }
  SECTION("unknown file") {
    std::string msg = refusal(kHeader + kDecls +
                              R"({"op":"read","s":0,"t":5,"d":1,"f":2})"
                              "\n" +
                              end1);
    CHECK_THAT(msg, Catch::Contains("line 4") && Catch::Contains("file 2 is not declared"));
  }
  SECTION("event count mismatch") {
    std::string msg = refusal(kHeader + kDecls + kRead + "{\"end\":true,\"events\":3}\n");
    CHECK_THAT(msg, Catch::Contains("line 5") && Catch::Contains("counts 3 events"));
  }
  SECTION("line after the end") {
    std::string msg = refusal(kHeader + kDecls + kRead + end1 + kRead);
    CHECK_THAT(msg, Catch::Contains("line 6") && Catch::Contains("after the end"));
  }
  SECTION("file ids out of order") {
    std::string msg = refusal(kHeader + "{\"file\":1,\"path\":\"/x\"}\n" + end1);
    CHECK_THAT(msg, Catch::Contains("line 2") && Catch::Contains("out of order"));
  }
  SECTION("field of the wrong type") {
    std::string msg = refusal(kHeader + kDecls +
                              R"({"op":"read","s":0,"t":"5","d":1})"
                              "\n" +
                              end1);
    CHECK_THAT(msg, Catch::Contains("line 4") && Catch::Contains("\"t\" must be an integer"));
  }
  SECTION("missing required field") {
    std::string msg = refusal(kHeader + kDecls +
                              R"({"op":"read","s":0,"d":1})"
                              "\n" +
                              end1);
    CHECK_THAT(msg, Catch::Contains("line 4") && Catch::Contains("\"t\" is missing"));
  }
  SECTION("empty file") { CHECK_THAT(refusal(""), Catch::Contains("empty")); }
}

TEST_CASE("trace: a missing file is a usage error naming the path", "[trace]") {
  try {
    read_trace("/nonexistent/ioprobe-trace.jsonl");
    FAIL("read_trace accepted a missing file");
  } catch (const UsageError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("/nonexistent/ioprobe-trace.jsonl"));
    CHECK(e.exit_code() == kExitUsage);
  }
  CHECK_FALSE(is_trace_file("/nonexistent/ioprobe-trace.jsonl"));
}

TEST_CASE("trace: a directory or a device is named as such, not read as an empty trace", "[trace]") {
  for (const auto& [path, what] : {std::pair<std::string, std::string>{"/tmp", "is a directory"},
                                   std::pair<std::string, std::string>{"/dev/zero", "is not a regular file"}}) {
    try {
      read_trace(path);
      FAIL("read_trace accepted " << path);
    } catch (const UsageError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(what));
      CHECK(e.exit_code() == kExitUsage);
    }
  }
}

TEST_CASE("the default trace name never names an existing file", "[trace]") {
  TempDir dir("trace");
  std::string stem = dir.path + "/ioprobe-trace-h-20260101-000000";
  CHECK(unused_trace_name(stem) == stem + ".jsonl");
  write_text(dir, "earlier", "ioprobe-trace-h-20260101-000000.jsonl");
  CHECK(unused_trace_name(stem) == stem + "-2.jsonl");
  write_text(dir, "earlier", "ioprobe-trace-h-20260101-000000-2.jsonl");
  CHECK(unused_trace_name(stem) == stem + "-3.jsonl");
}
