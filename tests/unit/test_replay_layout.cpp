// Where a replay reads the recorded files (--map rules, --dir layout that never writes into a
// file replay did not create) and a replay of a small trace on those files with exact byte counts.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/clock.hpp"
#include "core/dir_lock.hpp"
#include "core/error.hpp"
#include "core/free_space.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "replay/file_layout.hpp"
#include "replay/replay_plan.hpp"
#include "replay/replay_run.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;
using namespace ioprobe::replay;

namespace {

std::string usage_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

uint64_t size_of(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : UINT64_MAX;
}

void write_file(const std::string& p, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(p).parent_path());
  std::ofstream(p) << text;
}

trace::Op layout_op(trace::OpKind k, int64_t t, int32_t f, uint64_t off = 0, uint64_t len = 0, uint64_t got = 0) {
  trace::Op o;
  o.kind = k;
  o.start_ns = t;
  o.dur_ns = 1000;
  o.file = f;
  o.offset = off;
  o.requested = len;
  o.bytes = got;
  return o;
}

// Two threads: one reads /data/a (10,000 B) in two requests (the second short at its end), the
// other maps /data/b (5,000 B) and stats it; a failed open of /data/none is not replayed.
trace::Trace small_trace() {
  trace::Trace t;
  t.source = "test";
  t.files = {{"/data/a", 10000, true}, {"/data/b", 5000, true}, {"/data/none", 0, false}};
  trace::Stream s1;
  s1.pid = s1.tid = 1;
  s1.role = "main";
  s1.ops = {layout_op(trace::OpKind::open, 0, 0), layout_op(trace::OpKind::read, 100000, 0, 0, 8192, 8192),
            layout_op(trace::OpKind::read, 200000, 0, 8192, 8192, 1808), layout_op(trace::OpKind::close, 300000, 0)};
  trace::Stream s2;
  s2.pid = s2.tid = 2;
  s2.role = "thread";
  trace::Op failed = layout_op(trace::OpKind::open, 0, 2);
  failed.error = 2;
  s2.ops = {failed, layout_op(trace::OpKind::stat, 1000, 1), layout_op(trace::OpKind::open, 2000, 1),
            layout_op(trace::OpKind::mmap, 3000, 1, 0, 5000), layout_op(trace::OpKind::munmap, 400000, 1)};
  t.streams = {s1, s2};
  return t;
}

std::vector<bool> all_used(const trace::Trace& t) { return files_used(t, {0, 1}); }

}  // namespace

TEST_CASE("replay map: rules parse, the longest prefix wins at a component boundary", "[replay]") {
  CHECK(parse_map_rule("/data=/mnt/x").new_prefix == "/mnt/x");
  CHECK_THAT(usage_error([] { parse_map_rule("/data"); }), Catch::Contains("OLD_PREFIX=NEW_PREFIX"));
  CHECK_THAT(usage_error([] { parse_map_rule("data=/x"); }), Catch::Contains("not an absolute path"));
  const std::vector<MapRule> rules = {{"/data", "/a"}, {"/data/train", "/b"}};
  CHECK(map_path(rules, "/data/train/x.bin") == "/b/x.bin");
  CHECK(map_path(rules, "/data/val/x.bin") == "/a/val/x.bin");
  CHECK(map_path(rules, "/database/x").empty());
  CHECK(map_path(rules, "/data") == "/a");
}

TEST_CASE("replay dir: recorded paths go under DIR, never out of it", "[replay]") {
  CHECK(dir_path("/r", "/data/a.bin") == "/r/data/a.bin");
  CHECK(dir_path("/r/", "anon:3fa2") == "/r/anon/3fa2");
  CHECK_THAT(usage_error([] { dir_path("/r", "/data/../../etc/passwd"); }), Catch::Contains("'..'"));
}

TEST_CASE("replay layout: --map onto a missing path is refused, naming it", "[replay]") {
  TempDir d("replay-map");
  const trace::Trace t = small_trace();
  LayoutOptions o;
  o.maps = {{"/data", d.path + "/none"}};
  const std::string why = usage_error([&] { plan_layout(t, all_used(t), o); });
  CHECK_THAT(why, Catch::Contains(d.path + "/none/a") && Catch::Contains("does not exist"));
  o.maps.clear();
  CHECK_THAT(usage_error([&] { plan_layout(t, all_used(t), o); }), Catch::Contains("no --map rule covers /data/a"));
}

TEST_CASE("replay layout: lays out missing files, reuses its own, refuses a foreign one", "[replay]") {
  TempDir d("replay-dir");
  const trace::Trace t = small_trace();
  LayoutOptions o;
  o.dir = d.path;
  LayoutPlan p = plan_layout(t, all_used(t), o);
  CHECK(p.created == 2);
  CHECK(p.create_bytes == 15000);
  CHECK(p.files[2].action == FileAction::none);  // only a failed open touched it
  lay_out(p);
  CHECK(size_of(d.path + "/data/a") == 10000);
  CHECK(size_of(d.path + "/data/b") == 5000);
  CHECK(size_of(d.path + "/data/none") == UINT64_MAX);
  p = plan_layout(t, all_used(t), o);
  CHECK(p.reused == 2);
  CHECK(p.created == 0);
  // Its own file of another size is rewritten; a file it did not create is refused, untouched.
  truncate((d.path + "/data/a").c_str(), 10);
  p = plan_layout(t, all_used(t), o);
  CHECK(p.files[0].action == FileAction::rewrite);
  lay_out(p);
  CHECK(size_of(d.path + "/data/a") == 10000);
  TempDir d2("replay-foreign");
  write_file(d2.path + "/data/b", "user data");
  o.dir = d2.path;
  const std::string why = usage_error([&] { plan_layout(t, all_used(t), o); });
  CHECK_THAT(why, Catch::Contains(d2.path + "/data/b") && Catch::Contains("did not create"));
  CHECK(size_of(d2.path + "/data/b") == 9);
  // A clone lays out its own copy.
  o.dir = d.path;
  o.clone_subdir = "rank-3";
  p = plan_layout(t, all_used(t), o);
  CHECK(p.files[0].path == d.path + "/rank-3/data/a");
  CHECK(p.created == 2);
}

TEST_CASE("replay run: exact bytes, mapped share, recorded failures not issued", "[replay]") {
  TempDir d("replay-run");
  const trace::Trace t = small_trace();
  LayoutOptions o;
  o.dir = d.path;
  const LayoutPlan layout = plan_layout(t, all_used(t), o);
  lay_out(layout);
  const ReplayPlan plan = build_replay_plan(t, 0);
  RunOptions ro;
  ro.gaps = GapMode::sleep;
  const int64_t t0 = now_ns();
  const ReplayResult r = run_replay(t, plan, layout, ro);
  CHECK(now_ns() - t0 >= 399000);  // the recorded span (0 .. 401,000 ns) is slept, not skipped
  CHECK(r.errors == 0);
  CHECK(r.bytes == 10000 + 5000);
  CHECK(r.mapped_bytes == 5000);
  CHECK(r.ops == 9);
  REQUIRE(r.streams.size() == 2);
  CHECK(r.streams[0].bytes == 10000);
  CHECK(r.streams[0].reads == 2);
  CHECK(r.streams[1].reads == 1);
  CHECK(r.open_latency.count() == 2);
  CHECK(r.read_latency.count() == 3);
  CHECK(r.processes == 1);
  ro.gaps = GapMode::none;
  const ReplayResult fast = run_replay(t, plan, layout, ro);
  CHECK(fast.bytes == 15000);
  CHECK(fast.streams[0].gap_ns == 0);
}

TEST_CASE("replay run: a batch waits for its worker's reads", "[replay]") {
  TempDir d("replay-batch");
  trace::Trace t;
  t.files = {{"/data/a", 4096, true}};
  trace::Stream main;
  main.pid = main.tid = 1;
  main.role = "main";
  main.marks = {{trace::MarkKind::batch_wait_begin, 0, 0}, {trace::MarkKind::batch_wait_end, 30'000'000, 0}};
  trace::Stream w;
  w.pid = w.tid = 2;
  w.role = "worker 0";
  w.ops = {layout_op(trace::OpKind::read, 20'000'000, 0, 0, 4096, 4096)};
  w.ops[0].dur_ns = 1'000'000;
  t.streams = {main, w};
  LayoutOptions o;
  o.dir = d.path;
  const LayoutPlan layout = plan_layout(t, files_used(t, {0, 1}), o);
  lay_out(layout);
  RunOptions ro;
  ro.gaps = GapMode::sleep;
  const ReplayResult r = run_replay(t, build_replay_plan(t, 0), layout, ro);
  REQUIRE(r.timeline.batches == 1);
  CHECK(r.timeline.recorded_wait_ns == 30'000'000);
  // The worker sleeps its 20 ms gap, then reads; the batch is in hand 9 ms after the read's end
  // (timed from the main thread's own start, which a busy host may delay).
  REQUIRE(r.streams.size() == 2);
  CHECK(r.streams[0].elapsed_ns >= 29'000'000);
  CHECK(r.streams[0].dependency_wait_ns > 0);
  CHECK(r.timeline.replayed_wait_ns >= 9'000'000);
  CHECK(r.timeline.replayed_wait_ns < 2'000'000'000);
}

namespace {

// The UsageError message of `fn` run by an unprivileged user (nobody, uid 65534) in a child
// process when this one is root, else here: "" when it throws none. File permissions hold for it.
std::string usage_error_unprivileged(const std::function<void()>& fn) {
  if (geteuid() != 0) return usage_error(fn);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    const std::string why = usage_error(fn);
    const ssize_t w = write(fds[1], why.data(), why.size());
    _exit(w == static_cast<ssize_t>(why.size()) ? 0 : 4);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return out;
}

}  // namespace

TEST_CASE("replay preflight: a trace that is a directory or a device is named as such", "[replay]") {
  TempDir d("replay-trace");
  CHECK_THAT(usage_error([&] { check_trace_file(d.path); }), Catch::Contains(d.path) && Catch::Contains("directory"));
  CHECK_THAT(usage_error([] { check_trace_file("/dev/zero"); }),
             Catch::Contains("/dev/zero") && Catch::Contains("character device") && !Catch::Contains("empty"));
  write_file(d.path + "/t.trace", "x");
  CHECK(usage_error([&] { check_trace_file(d.path + "/t.trace"); }).empty());
  CHECK(usage_error([&] { check_trace_file(d.path + "/missing"); }).empty());  // the reader names it
}

TEST_CASE("replay preflight: an unusable --dir is bad input named as given", "[replay]") {
  TempDir d("replay-baddir");
  const std::string file = d.path + "/plain\xff.bin";  // not UTF-8: escaped in the message
  write_file(file, "data");
  std::string why = usage_error([&] { check_layout_dir(file); });
  CHECK_THAT(why, Catch::Contains(escape_bytes(file)) && Catch::Contains("regular file") &&
                      Catch::Contains("not a directory"));
  CHECK(why.find('\xff') == std::string::npos);
  why = usage_error([&] { check_layout_dir(file + "/sub"); });
  CHECK_THAT(why, Catch::Contains(escape_bytes(file + "/sub")) && Catch::Contains("not a directory"));
  CHECK(usage_error([&] { check_layout_dir(d.path + "/new/deeper"); }).empty());  // created later
  CHECK(usage_error([&] { check_layout_dir(d.path); }).empty());
  // Not writable, and under a directory that cannot be entered (root is checked as nobody).
  const std::string ro = d.path + "/ro";
  std::filesystem::create_directories(ro + "/inner");
  chmod(ro.c_str(), 0555);
  chmod(d.path.c_str(), 0755);
  why = usage_error_unprivileged([&] { check_layout_dir(ro); });
  CHECK_THAT(why, Catch::Contains("--dir '" + ro + "'") && Catch::Contains("not writable"));
  why = usage_error_unprivileged([&] { check_layout_dir(ro + "/missing"); });
  CHECK_THAT(why, Catch::Contains(ro + "/missing") && Catch::Contains("cannot be created"));
  chmod(ro.c_str(), 0700);
  why = usage_error_unprivileged([&] { check_layout_dir(ro + "/inner"); });
  CHECK_THAT(why, Catch::Contains(ro + "/inner") && Catch::Contains("cannot be entered"));
  chmod(ro.c_str(), 0755);
}

TEST_CASE("replay layout: a second replay onto one --dir waits for the first's layout", "[replay]") {
  TempDir d("replay-lock");
  const std::string dir = d.path + "/new";
  std::unique_ptr<DirLock> first = lock_layout_dir(dir, nullptr);  // creates the directory
  std::atomic<bool> waited{false}, locked{false};
  std::string holder;
  std::thread second([&] {
    auto lock = lock_layout_dir(dir, [&](const std::string& h) {
      holder = h;
      waited = true;
    });
    locked = true;
  });
  for (int i = 0; i < 500 && !waited; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(waited);
  CHECK_FALSE(locked);
  CHECK_THAT(holder, Catch::Contains("PID"));
  first.reset();
  second.join();
  CHECK(locked);
}

TEST_CASE("replay layout: refused before any write when the filesystem has no room", "[replay]") {
  TempDir d("replay-space");
  trace::Trace t = small_trace();
  t.files[0].size_bytes = 1ULL << 60;  // 1 EiB: more than any test host's free space
  LayoutOptions o;
  o.dir = d.path;
  const LayoutPlan p = plan_layout(t, all_used(t), o);
  CHECK(layout_disk_bytes(p) == (1ULL << 60) + 8192);  // 5,000 B take two 4 KiB blocks
  const std::optional<FreeSpace> fs = free_space(d.path);
  if (!fs || !fs->reported) {
    WARN("skipped: the filesystem of " << d.path << " reports no size");
    return;
  }
  try {
    check_layout_space(p, d.path);
    FAIL("no refusal");
  } catch (const Error& e) {
    CHECK(e.exit_code() == kExitFailure);
    CHECK_THAT(e.what(), Catch::Contains(d.path) && Catch::Contains(format_bytes((1ULL << 60) + 8192)) &&
                             Catch::Contains("available") && Catch::Contains("nothing was written"));
  }
  CHECK(size_of(d.path + "/data/a") == UINT64_MAX);
}

TEST_CASE("replay layout: a file whose write fails is not left at its name", "[replay]") {
  TempDir d("replay-partial");
  const trace::Trace t = small_trace();
  LayoutOptions o;
  o.dir = d.path;
  const LayoutPlan p = plan_layout(t, all_used(t), o);
  // A 6,000-byte file size limit: the 10,000-byte layout file fails with EFBIG part-way.
  struct rlimit old {};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  auto* prev = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 6000;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  int err = 0;
  try {
    lay_out(p);
  } catch (const IoError& e) {
    err = e.err();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, prev);
  CHECK(err == EFBIG);
  CHECK(size_of(d.path + "/data/a") == UINT64_MAX);  // neither a short file at its name
  for (const auto& e : std::filesystem::directory_iterator(d.path + "/data"))
    CHECK_THAT(e.path().string(), !Catch::Contains("ioprobe-tmp"));  // nor its temporary
  lay_out(p);                                                        // with room, the same plan completes
  CHECK(size_of(d.path + "/data/a") == 10000);
}

TEST_CASE("replay layout: a file the job only stat'ed is not laid out nor counted in the space needed", "[replay]") {
  TempDir d("replay-statonly");
  trace::Trace t;
  t.source = "test";
  t.files = {{"/data/a", 10000, true}, {"/data/only-stated", 1u << 30, true}};
  trace::Stream s;
  s.pid = s.tid = 1;
  s.role = "main";
  s.ops = {layout_op(trace::OpKind::stat, 0, 1), layout_op(trace::OpKind::stat, 500, 0),
           layout_op(trace::OpKind::open, 1000, 0), layout_op(trace::OpKind::read, 2000, 0, 0, 10000, 10000),
           layout_op(trace::OpKind::close, 3000, 0)};
  t.streams = {s};
  LayoutOptions o;
  o.dir = d.path;
  LayoutPlan p = plan_layout(t, files_used(t, {0}), o, files_stat_only(t, {0}));
  CHECK(p.created == 1);
  CHECK(p.create_bytes == 10000);
  CHECK(layout_disk_bytes(p) == 12288);  // a's 10,000 B in 4 KiB blocks; not the stat'ed file's 1 GiB
  CHECK(p.files[1].action == FileAction::none);
  CHECK(p.files[1].path.empty());  // missing: its stat is not issued
  CHECK(p.stat_only == 1);
  REQUIRE(p.warnings.size() == 1);
  CHECK_THAT(p.warnings[0], Catch::Contains("only stat'ed") && Catch::Contains(d.path + "/data/only-stated"));
  lay_out(p);
  CHECK(size_of(d.path + "/data/a") == 10000);
  CHECK(size_of(d.path + "/data/only-stated") == UINT64_MAX);
  // Where the stat'ed file exists, its stats are replayed on it; it is still not written.
  write_file(d.path + "/data/only-stated", "x");
  p = plan_layout(t, files_used(t, {0}), o, files_stat_only(t, {0}));
  CHECK(p.files[1].path == d.path + "/data/only-stated");
  CHECK(p.files[1].action == FileAction::none);
  CHECK(p.warnings.empty());
  CHECK(size_of(d.path + "/data/only-stated") == 1);
}
