// The merge of the interposer's per-process files (trace/collect.hpp) on hand-written raw files in
// the layout of trace/record_abi.h: streams, roles, ppid, gap CPU, files by open id across a fork,
// mapped and touched bytes, a cut-off chunk.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "trace/collect.hpp"
#include "trace/record_abi.h"
#include "trace/trace.hpp"

using namespace ioprobe::trace;

namespace {

// Appends a record (and its path, padded to 8 bytes) to `out`.
void put(std::string& out, IoprobeRec r, const std::string& path = "") {
  r.path_len = static_cast<uint16_t>(path.size());
  out.append(reinterpret_cast<const char*>(&r), sizeof r);
  out += path;
  out.append((8 - (sizeof r + path.size()) % 8) % 8, '\0');
}

IoprobeRec rec(uint8_t kind, uint8_t call, uint64_t open_id, int64_t t, int64_t d, int64_t c0, int64_t c1) {
  IoprobeRec r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  r.call = call;
  r.open_id = open_id;
  r.t_ns = t;
  r.dur_ns = d;
  r.cpu_start_ns = c0;
  r.cpu_end_ns = c1;
  return r;
}

void write_process(const std::string& path, IoprobeRecFileHeader h,
                   const std::vector<std::pair<int32_t, std::string>>& chunks, const std::string& tail = "") {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(&h), sizeof h);
  for (const auto& [tid, body] : chunks) {
    IoprobeRecChunk c{IOPROBE_REC_CHUNK_MAGIC, tid, body.size()};
    f.write(reinterpret_cast<const char*>(&c), sizeof c);
    f << body;
  }
  f << tail;
}

}  // namespace

TEST_CASE("collect: a parent with a thread and a forked DataLoader worker", "[trace][collect]") {
  TempDir dir("collect");
  const int64_t t0 = 1'000'000'000;  // the command's start (CLOCK_MONOTONIC)
  const uint64_t id = (uint64_t{100} << 32) | 1;
  // Parent 100: main thread opens /d/a.bin (size 5000), reads 4096, marks a batch; thread 101 stats.
  std::string main_body, thread_body, worker_body;
  IoprobeRec open = rec(IOPROBE_REC_OPEN, IOPROBE_CALL_OPENAT, id, t0 + 1000, 50, 500, 520);
  open.size = 5000;
  open.ret = 3;
  put(main_body, open, "/d/a.bin");
  IoprobeRec rd = rec(IOPROBE_REC_READ, IOPROBE_CALL_READ, id, t0 + 2000, 100, 1520, 1600);
  rd.len = 8192;
  rd.ret = 4096;
  put(main_body, rd);
  IoprobeRec mk = rec(IOPROBE_REC_MARK, static_cast<uint8_t>(MarkKind::batch_wait_begin), 0, t0 + 2500, 0, -1, -1);
  put(main_body, mk);
  IoprobeRec st = rec(IOPROBE_REC_STAT, IOPROBE_CALL_STAT, 0, t0 + 1500, 10, 70, 75);
  st.size = 777;
  put(thread_body, st, "/d/b.bin");
  // Worker 102, forked by 100: marks worker_start 1, reads the inherited descriptor, maps it.
  IoprobeRec ws = rec(IOPROBE_REC_MARK, static_cast<uint8_t>(MarkKind::worker_start), 0, t0 + 3000, 0, -1, -1);
  ws.ret = 1;
  put(worker_body, ws);
  IoprobeRec rd2 = rec(IOPROBE_REC_READ, IOPROBE_CALL_PREAD64, id, t0 + 4000, 30, 900, 930);
  rd2.offset = 4096;
  rd2.len = 904;
  rd2.ret = 904;
  put(worker_body, rd2);
  IoprobeRec mm = rec(IOPROBE_REC_MMAP, IOPROBE_CALL_MMAP, id, t0 + 5000, 5, 1000, 1002);
  mm.len = 65536;
  put(worker_body, mm);
  IoprobeRec touched = rec(IOPROBE_REC_TOUCHED, 0, id, t0 + 5500, 0, -1, -1);
  touched.len = 65536;
  touched.size = 8192;
  put(worker_body, touched);
  // An op naming an open id nobody opened: skipped and counted.
  put(worker_body, rec(IOPROBE_REC_CLOSE, IOPROBE_CALL_CLOSE, 999, t0 + 6000, 1, 1100, 1101));

  write_process(dir.path + "/p100-1.rec", {IOPROBE_REC_FILE_MAGIC, IOPROBE_REC_VERSION, 100, 1, 0, 0, t0 + 10},
                {{100, main_body}, {101, thread_body}});
  // The worker's file ends with a chunk cut off mid-way (a process killed while it flushed).
  IoprobeRecChunk cut{IOPROBE_REC_CHUNK_MAGIC, 102, 4096};
  std::string tail(reinterpret_cast<const char*>(&cut), sizeof cut);
  tail += "partial";
  write_process(dir.path + "/p102-2.rec", {IOPROBE_REC_FILE_MAGIC, IOPROBE_REC_VERSION, 102, 100, 3, 1, t0 + 2900},
                {{102, worker_body}}, tail);
  // Not the interposer's: skipped.
  std::ofstream(dir.path + "/p999-3.rec") << "garbage that is long enough to hold a header, but not one";

  CollectInput in{dir.path, t0, t0 + 10'000, {"python3", "train.py"}, "h"};
  CollectStats stats;
  Trace t = collect_records(in, &stats);
  CHECK(stats.processes == 2);
  CHECK(stats.bad_chunks == 2);  // the cut-off chunk and the foreign file
  CHECK(stats.unknown_opens == 1);
  CHECK(t.duration_ns == 10'000);
  CHECK(t.source == "ioprobe record");
  REQUIRE(t.files.size() == 2);
  CHECK(t.files[0].path == "/d/a.bin");
  CHECK(t.files[0].size_bytes == 5000);
  CHECK(t.files[1].path == "/d/b.bin");
  CHECK(t.files[1].size_bytes == 777);
  REQUIRE(t.streams.size() == 3);
  const Stream& m = t.streams[0];
  CHECK(m.role == "main");
  CHECK(m.pid == 100);
  CHECK(m.ppid == 0);  // its parent (pid 1) was not recorded
  REQUIRE(m.ops.size() == 2);
  CHECK(m.ops[0].start_ns == 1000);
  CHECK(m.ops[0].gap_cpu_ns == 500);         // the thread's CPU before its first op
  CHECK(m.ops[1].gap_cpu_ns == 1520 - 520);  // CPU between the open's end and the read's start
  CHECK(m.ops[1].bytes == 4096);
  CHECK(m.ops[1].requested == 8192);
  CHECK(m.ops[1].call == "read");
  CHECK(m.marks.size() == 1);
  CHECK(t.streams[1].role == "thread");
  CHECK(t.streams[1].tid == 101);
  const Stream& w = t.streams[2];
  CHECK(w.role == "worker 1");
  CHECK(w.ppid == 100);
  CHECK(w.rank == 3);
  REQUIRE(w.ops.size() == 2);
  CHECK(w.ops[0].file == 0);  // the parent's open id resolves in the fork child
  CHECK(w.ops[0].offset == 4096);
  CHECK(w.ops[1].kind == OpKind::mmap);
  CHECK(t.mapped.mapped_bytes == 65536);
  CHECK(t.mapped.sampled);  // the one mapping reported its touched bytes
  CHECK(t.mapped.touched_bytes == 8192);
  CHECK(t.read_bytes() == 4096 + 904);
}

TEST_CASE("collect: an empty recording directory is an empty trace", "[trace][collect]") {
  TempDir dir("collect");
  CollectStats stats;
  Trace t = collect_records(CollectInput{dir.path, 0, 5, {"true"}, "h"}, &stats);
  CHECK(t.streams.empty());
  CHECK(t.files.empty());
  CHECK(stats.processes == 0);
  CHECK_FALSE(t.limits.empty());
}

TEST_CASE("collect: a mapping without its touched report leaves touched bytes unknown", "[trace][collect]") {
  TempDir dir("collect");
  const uint64_t id = (uint64_t{7} << 32) | 1;
  std::string body;
  IoprobeRec open = rec(IOPROBE_REC_OPEN, IOPROBE_CALL_OPEN, id, 100, 1, 0, 1);
  put(body, open, "/d/m.bin");
  IoprobeRec mm = rec(IOPROBE_REC_MMAP, IOPROBE_CALL_MMAP, id, 200, 1, 2, 3);
  mm.len = 4096;
  put(body, mm);
  write_process(dir.path + "/p7-1.rec", {IOPROBE_REC_FILE_MAGIC, IOPROBE_REC_VERSION, 7, 1, 0, 0, 50}, {{7, body}});
  Trace t = collect_records(CollectInput{dir.path, 0, 1000, {"x"}, "h"}, nullptr);
  CHECK(t.mapped.mapped_bytes == 4096);
  CHECK_FALSE(t.mapped.sampled);
  CHECK(t.mapped.touched_bytes == 0);
}

TEST_CASE("collect: recorded paths are normalised lexically, so one file is one entry", "[trace][collect]") {
  TempDir dir("collect");
  const uint64_t a = (uint64_t{7} << 32) | 1;
  const uint64_t b = (uint64_t{7} << 32) | 2;
  std::string body;
  put(body, rec(IOPROBE_REC_OPEN, IOPROBE_CALL_OPEN, a, 100, 1, 0, 1), "/job/odd/../f.bin");
  put(body, rec(IOPROBE_REC_OPEN, IOPROBE_CALL_OPEN, b, 200, 1, 2, 3), "/job//./f.bin");
  write_process(dir.path + "/p7-1.rec", {IOPROBE_REC_FILE_MAGIC, IOPROBE_REC_VERSION, 7, 1, 0, 0, 50}, {{7, body}});
  Trace t = collect_records(CollectInput{dir.path, 0, 1000, {"x"}, "h"}, nullptr);
  REQUIRE(t.files.size() == 1);
  CHECK(t.files[0].path == "/job/f.bin");
}
