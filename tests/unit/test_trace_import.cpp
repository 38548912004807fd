// The importers on the fixtures of tests/fixtures/trace/: hand-made DFTracer events (.pfw and its
// gzip), a hand-made strace log with an unfinished/resumed call, a fork and a failing open, and two
// real strace logs of a small Python job (with and without -y).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string>

#include "core/error.hpp"
#include "temp_dir.hpp"
#include "trace/collect.hpp"
#include "trace/import.hpp"
#include "trace/trace.hpp"
#include "trace/trace_format.hpp"

using namespace ioprobe;
using namespace ioprobe::trace;

namespace {

const std::string kDir = std::string(IOPROBE_FIXTURES) + "/trace/";

const Stream* stream_of(const Trace& t, int32_t tid) {
  for (const auto& s : t.streams)
    if (s.tid == tid) return &s;
  return nullptr;
}

std::string path_of(const Trace& t, const Op& op) { return op.file >= 0 ? t.files[op.file].path : ""; }

}  // namespace

TEST_CASE("import dftracer: calls, hashed names, fd offsets, aggregated events left out", "[trace][import]") {
  for (const char* name : {"dftracer_small.pfw", "dftracer_small.pfw.gz"}) {
    INFO(name);
    Trace t = import_trace(kDir + name, "");
    CHECK(t.source == "dftracer");
    REQUIRE(t.files.size() == 3);
    CHECK(t.files[0].path == "/data/train/x.npy");
    CHECK(t.files[1].path == "/data/train/y.bin");
    CHECK(t.files[2].path == "fhash:zz");
    CHECK(t.anonymized);  // a hash no FH record resolves
    REQUIRE(t.streams.size() == 2);
    const Stream* main = stream_of(t, 100);
    const Stream* other = stream_of(t, 102);
    REQUIRE(main);
    REQUIRE(other);
    CHECK(main->role == "main");
    CHECK(other->role == "thread");
    CHECK(other->pid == 101);
    // open, read, pread64, read (resolved through fd 3), close, open of the unresolved hash.
    REQUIRE(main->ops.size() == 6);
    std::vector<std::pair<uint64_t, uint64_t>> reads;
    for (const auto& op : main->ops)
      if (op.kind == OpKind::read) reads.emplace_back(op.offset, op.bytes);
    CHECK(reads == std::vector<std::pair<uint64_t, uint64_t>>{{0, 4096}, {8192, 1000}, {4096, 2000}});
    CHECK(main->ops[0].start_ns == 0);       // times from the first call
    CHECK(main->ops[1].start_ns == 20'000);  // µs -> ns
    CHECK(main->ops[0].dur_ns == 12'000);
    CHECK(main->ops[0].gap_cpu_ns == -1);
    REQUIRE(other->ops.size() == 2);
    CHECK(other->ops[1].call == "fread");
    CHECK(other->ops[1].bytes == 500);  // size x nmemb: DFTracer logs no ret for fread
    CHECK(t.read_bytes() == 7596);
    bool aggregated_limit = false;
    for (const auto& l : t.limits) aggregated_limit |= l.find("1 aggregated") != std::string::npos;
    CHECK(aggregated_limit);
  }
}

TEST_CASE("import strace: resumed calls, fork, failing open, mmap, size from fstat", "[trace][import]") {
  Trace t = import_trace(kDir + "strace_resumed.log", "");
  CHECK(t.source == "strace");
  REQUIRE(t.files.size() == 3);
  CHECK(t.files[0].path == "/data/set/a.bin");
  CHECK(t.files[0].size_known);
  CHECK(t.files[0].size_bytes == 30000);
  CHECK_FALSE(t.files[2].size_known);
  const Stream* main = stream_of(t, 500);
  const Stream* failing = stream_of(t, 501);
  const Stream* child = stream_of(t, 502);
  REQUIRE(main);
  REQUIRE(failing);
  REQUIRE(child);
  CHECK(main->role == "main");
  CHECK(child->role == "process");
  CHECK(child->ppid == 500);
  REQUIRE(main->ops.size() == 6);  // open, stat, 3 reads, close: the python import is left out
  CHECK(main->ops[2].kind == OpKind::read);
  CHECK(main->ops[2].start_ns == 200'000);  // the unfinished half's time
  CHECK(main->ops[2].dur_ns == 90'000);
  CHECK(main->ops[2].bytes == 16384);
  CHECK(main->ops[3].offset == 16384);
  CHECK(main->ops[4].offset == 30000);
  REQUIRE(failing->ops.size() == 1);
  CHECK(failing->ops[0].error == ENOENT);
  CHECK(path_of(t, failing->ops[0]) == "/data/set/missing.bin");
  REQUIRE(child->ops.size() == 5);
  CHECK(child->ops[1].offset == 5000);
  CHECK(child->ops[2].kind == OpKind::mmap);
  CHECK(child->ops[3].kind == OpKind::munmap);
  CHECK(t.mapped.mapped_bytes == 65536);
  CHECK(t.read_bytes() == 31000);
}

TEST_CASE("import strace: a real log of a Python job, with and without -y", "[trace][import]") {
  SECTION("threads, lseek, pread") {
    Trace t = import_trace(kDir + "strace_python.log", "strace");
    std::map<std::string, uint64_t> bytes;
    for (const auto& s : t.streams)
      for (const auto& op : s.ops)
        if (op.kind == OpKind::read) bytes[path_of(t, op)] += op.bytes;
    // Only the job's two data files: the interpreter's own files are left out by the rule.
    REQUIRE(t.files.size() == 2);
    CHECK(bytes["/tmp/ioprobe-fixture-data/b.bin"] == 5000);
    CHECK(bytes["/tmp/ioprobe-fixture-data/a.bin"] == 8192 + 4096 + 100);
    REQUIRE(t.streams.size() == 2);
    const Stream& thread = t.streams[0].tid == t.streams[0].pid ? t.streams[1] : t.streams[0];
    const Stream& main = t.streams[0].tid == t.streams[0].pid ? t.streams[0] : t.streams[1];
    CHECK(thread.role == "thread");
    CHECK(thread.pid == main.pid);
    CHECK(main.role == "main");
    std::vector<std::pair<uint64_t, uint64_t>> reads;
    for (const auto& op : main.ops)
      if (op.kind == OpKind::read) reads.emplace_back(op.offset, op.bytes);
    CHECK(reads == std::vector<std::pair<uint64_t, uint64_t>>{{0, 8192}, {12000, 4096}, {0, 100}});
  }
  SECTION("-y annotations") {
    Trace t = import_trace(kDir + "strace_python_y.log", "strace");
    REQUIRE(t.files.size() == 1);
    CHECK(t.files[0].path == "/tmp/ioprobe-fixture-data/a.bin");
    CHECK(t.read_bytes() == 8192 + 4096);
  }
}

TEST_CASE("import: refusals name the file", "[trace][import]") {
  CHECK_THROWS_AS(import_trace(kDir + "no-such.pfw", ""), UsageError);
  CHECK_THROWS_WITH(import_trace(kDir + "record_calls.c", "dftracer"), Catch::Contains("line 1"));
  CHECK_THROWS_WITH(import_trace(kDir + "record_job.py", "strace"), Catch::Contains("holds no call on a data file"));
  CHECK_THROWS_WITH(import_trace(kDir + "strace_resumed.log", "darshan"), Catch::Contains("dftracer or strace"));
}

TEST_CASE("imported traces write and read back", "[trace][import]") {
  TempDir dir("import");
  Trace t = import_trace(kDir + "strace_resumed.log", "");
  write_trace(t, dir.path + "/t.jsonl");
  Trace r = read_trace(dir.path + "/t.jsonl");
  CHECK(r.op_count() == t.op_count());
  CHECK(r.read_bytes() == t.read_bytes());
  CHECK(r.limits == t.limits);
}

TEST_CASE("anonymize: hashes keep the extension, the command keeps the program", "[trace]") {
  Trace t;
  t.files = {{"/data/secret/img_001.jpg", 1, true}, {"/data/noext", 1, true}, {"/d/x.verylongextension", 1, true}};
  t.command = {"/usr/bin/python3", "train.py", "--data", "/data/secret"};
  t.host = "gpu-node-7";
  anonymize_paths(t);
  CHECK(t.anonymized);
  CHECK_THAT(t.files[0].path, Catch::StartsWith("anon:") && Catch::EndsWith(".jpg"));
  CHECK(t.files[0].path.size() == 5 + 16 + 4);
  CHECK(t.files[1].path.size() == 5 + 16);
  CHECK(t.files[2].path.size() == 5 + 16);
  CHECK(t.command.size() == 2);
  CHECK(t.command[0] == "python3");
  CHECK_THAT(t.host, Catch::StartsWith("anon:"));
  Trace u;
  u.files = {{"/data/secret/img_001.jpg", 1, true}};
  anonymize_paths(u);
  CHECK(u.files[0].path == t.files[0].path);  // the same path hashes the same
}

TEST_CASE("normalize_path resolves . and .. lexically and folds slashes", "[trace][import]") {
  CHECK(normalize_path("/job/odd/../f.bin") == "/job/f.bin");
  CHECK(normalize_path("/a//b/./c/") == "/a/b/c");
  CHECK(normalize_path("/../../x") == "/x");
  CHECK(normalize_path("/") == "/");
  CHECK(normalize_path("a/../../b") == "../b");
  CHECK(normalize_path("").empty());
  CHECK(normalize_path("/a/link/../b") == "/a/b");  // symlinks are not followed
}

TEST_CASE("the data-file rule leaves out the root, directories named with '/', semaphores and torch segments",
          "[trace][import]") {
  CHECK_FALSE(is_data_path("/"));
  CHECK_FALSE(is_data_path("/data/train/"));
  CHECK_FALSE(is_data_path("/dev/shm/sem.mp-abc"));
  CHECK_FALSE(is_data_path("/dev/shm/torch_123_456"));
  CHECK(is_data_path("/dev/shm/data/a.bin"));
  CHECK(is_data_path("/data/train/a.bin"));
}

TEST_CASE("import strace: directories and files the job created are not data files", "[trace][import]") {
  TempDir dir("import");
  std::string log = dir.path + "/s.log";
  std::ofstream(log)
      << "100 1700000000.000001 openat(AT_FDCWD, \"/\", O_RDONLY|O_CLOEXEC|O_DIRECTORY) = 3 <0.000010>\n"
         "100 1700000000.000002 openat(AT_FDCWD, \"/data/train\", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 4 "
         "<0.000010>\n"
         "100 1700000000.000003 getdents64(4, 0x5581 /* 3 entries */, 32768) = 80 <0.000010>\n"
         "100 1700000000.000004 close(4) = 0 <0.000010>\n"
         "100 1700000000.000005 openat(AT_FDCWD, \"/data/sub\", O_RDONLY|O_CLOEXEC) = 5 <0.000010>\n"
         "100 1700000000.000006 fstat(5, {st_mode=S_IFDIR|0755, st_size=4096, ...}) = 0 <0.000010>\n"
         "100 1700000000.000007 close(5) = 0 <0.000010>\n"
         "100 1700000000.000008 openat(AT_FDCWD, \"/tmp/lf_x1\", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0600) = 6 "
         "<0.000010>\n"
         "100 1700000000.000009 close(6) = 0 <0.000010>\n"
         "100 1700000000.000010 openat(AT_FDCWD, \"/dev/shm/sem.mp-1\", O_RDWR|O_NOFOLLOW) = 7 <0.000010>\n"
         "100 1700000000.000011 stat(\"/data/dirs\", {st_mode=S_IFDIR|0755, st_size=4096, ...}) = 0 <0.000010>\n"
         "100 1700000000.000012 openat(AT_FDCWD, \"/data/train/../train/a.bin\", O_RDONLY|O_CLOEXEC) = 8 "
         "<0.000010>\n"
         "100 1700000000.000013 read(8, \"abc\", 4096) = 3 <0.000010>\n"
         "100 1700000000.000014 close(8) = 0 <0.000010>\n";
  Trace t = import_trace(log, "strace");
  REQUIRE(t.files.size() == 1);
  CHECK(t.files[0].path == "/data/train/a.bin");
  REQUIRE(t.streams.size() == 1);
  CHECK(t.streams[0].ops.size() == 3);
  for (const auto& op : t.streams[0].ops) CHECK(op.file == 0);
}

TEST_CASE("import: a directory is named as one", "[trace][import]") {
  TempDir dir("import");
  CHECK_THROWS_WITH(import_trace(dir.path, ""), Catch::Contains("is a directory"));
}

TEST_CASE("import dftracer: directories are dropped, paths normalised", "[trace][import]") {
  TempDir dir("import");
  std::string log = dir.path + "/d.pfw";
  std::ofstream(log)
      << "[\n"
         R"({"id":1,"name":"opendir","cat":"POSIX","pid":1,"tid":1,"ts":10,"dur":1,"ph":"X","args":{"fname":"/data/train"}})"
         "\n"
         R"({"id":2,"name":"open64","cat":"POSIX","pid":1,"tid":1,"ts":11,"dur":1,"ph":"X","args":{"fname":"/data/train","flags":65536,"ret":3}})"
         "\n"
         R"({"id":3,"name":"open64","cat":"POSIX","pid":1,"tid":1,"ts":12,"dur":1,"ph":"X","args":{"fname":"/data/sub","flags":65536,"ret":4}})"
         "\n"
         R"({"id":4,"name":"open64","cat":"POSIX","pid":1,"tid":1,"ts":13,"dur":1,"ph":"X","args":{"fname":"/data/odd/../train/a.bin","flags":0,"ret":5}})"
         "\n"
         R"({"id":5,"name":"read","cat":"POSIX","pid":1,"tid":1,"ts":14,"dur":1,"ph":"X","args":{"fd":5,"count":10,"ret":10}})"
         "\n]\n";
  Trace t = import_trace(log, "dftracer");
  REQUIRE(t.files.size() == 1);
  CHECK(t.files[0].path == "/data/train/a.bin");
  CHECK(t.op_count() == 2);
}
