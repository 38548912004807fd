// `ioprobe record`: runs the user's command unchanged under the LD_PRELOAD interposer
// (libioprobe_record.so) and the Python sitecustomize that marks DataLoader batches and workers,
// then merges the per-process files into one trace (trace/collect.hpp) written atomically.
// `ioprobe record --import FILE` turns a DFTracer or strace log into the same trace instead.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/message.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "trace/collect.hpp"
#include "trace/import.hpp"
#include "trace/record_abi.h"
#include "trace/trace_format.hpp"

namespace ioprobe::cli {

namespace {

constexpr const char* kLibName = "libioprobe_record.so";
constexpr const char* kExitCodes =
    "Exit codes: the command's own exit status (128+N when signal N ended it), once its trace is written;\n"
    "  128+N when ioprobe record got SIGINT, SIGTERM, SIGQUIT or SIGHUP (N): it forwards it to the command's process\n"
    "    group, waits up to 10 s (then kills the group) and writes the trace marked partial;\n"
    "  2 bad usage, nothing run (an option, --out naming a file ioprobe did not write, a command that cannot be\n"
    "    started, an import file that cannot be read);\n"
    "  1 the recording failed (the interposer is not installed; or the trace could not be written after the\n"
    "    command ran: the command's status is printed with the error)";

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string exe_dir() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return ".";
  std::string d(exe, static_cast<size_t>(n));
  return d.substr(0, d.rfind('/'));
}

std::string real(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// The interposer: $IOPROBE_RECORD_LIB, next to the binary (the build tree), or the install prefix.
std::string find_interposer() {
  std::vector<std::string> cands;
  if (const char* env = std::getenv("IOPROBE_RECORD_LIB"); env && *env) cands.emplace_back(env);
  std::string d = exe_dir();
  cands.push_back(d + "/" + kLibName);
  cands.push_back(d + "/../lib/ioprobe/" + kLibName);
  std::string looked;
  for (const auto& c : cands) {
    if (is_file(c)) return real(c);
    looked += (looked.empty() ? "" : ", ") + c;
  }
  throw Error(fmt::format("the recorder library {} is not installed (looked at {}); build it (tools/build) or "
                          "reinstall ioprobe (cmake --install puts it in PREFIX/lib/ioprobe/)",
                          kLibName, looked),
              kExitFailure);
}

// The directory holding the sitecustomize.py that marks DataLoader batches, or "" when absent
// (the recording then has no marks; a warning says so).
std::string find_python_dir() {
  std::string d = exe_dir();
  for (const std::string& c :
       {d + "/../share/ioprobe/python/ioprobe_record", std::string(IOPROBE_SOURCE_PYTHON) + "/ioprobe_record"})
    if (is_file(c + "/sitecustomize.py")) return real(c);
  return "";
}

std::string hostname() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

std::string default_out() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return trace::unused_trace_name(fmt::format("ioprobe-trace-{}-{}", hostname(), stamp));
}

// --out may replace only a trace ioprobe wrote (or an empty file); its directory must take a file.
void check_out(const std::string& out) {
  struct stat st {};
  if (::stat(out.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw UsageError(fmt::format("--out '{}' is a directory; give a file name for the trace", escape_bytes(out)));
    if (st.st_size > 0 && !trace::is_trace_file(out))
      throw UsageError(fmt::format("--out '{}' exists and is not an ioprobe trace; ioprobe never overwrites a file it "
                                   "did not write: pass another --out",
                                   escape_bytes(out)));
  }
  std::string dir = std::filesystem::path(out).parent_path().string();
  check_can_create_in(dir.empty() ? "." : dir, "--out", out);
}

std::string with_prefix(const char* var, const std::string& first) {
  const char* old = std::getenv(var);
  return old && *old ? first + ":" + old : first;
}

struct Child {
  int status = 0;  // the command's exit status (128+N for a signal)
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int got_signal = 0;  // SIGINT/SIGTERM/SIGQUIT/SIGHUP this process received (forwarded), else 0
  int ended_by = 0;    // the signal that ended the command, else 0
};

// The interposer's flush window, in seconds.
constexpr double kFlushAgeSeconds = static_cast<double>(IOPROBE_REC_FLUSH_AGE_NS) / 1e9;

// How long the command has, after a forwarded signal, before its process group is killed (s).
constexpr int kGraceSeconds = 10;

volatile sig_atomic_t g_signal = 0;    // the first signal received while the command runs
volatile sig_atomic_t g_job_pgid = 0;  // the command's process group

// Forwards the first signal to the command's process group. Later ones are not forwarded: `timeout`
// and a terminal send the same signal twice (to this process, then to its group), and a second
// SIGINT would interrupt the job's own clean-up; the grace period bounds the wait instead.
void forward_signal(int sig) {
  if (g_signal) return;
  int saved = errno;
  g_signal = sig;
  if (g_job_pgid > 0) ::kill(-static_cast<pid_t>(g_job_pgid), sig);
  errno = saved;
}

// Waits for `pid` (or any child when pid is -1) until `deadline_ns`; returns whether it reaped.
bool wait_until(pid_t pid, int* status, int64_t deadline_ns) {
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return pid == -1;  // no child left
    if (now_ns() >= deadline_ns) return false;
    ::usleep(20'000);
  }
}

// Runs `cmd` with the recorder's environment in its own process group (given the terminal when
// this process holds it, so a Ctrl-C reaches the job directly) and waits for it and every process
// it left behind (this process is their subreaper). SIGINT/SIGTERM/SIGQUIT/SIGHUP sent to this
// process are forwarded to the job's group; the job then has kGraceSeconds to end (a second
// signal, or the grace running out, kills the group) so that what it wrote is still merged.
// Throws UsageError when `cmd` cannot be started.
Child run_recorded(const std::vector<std::string>& cmd, const std::string& lib, const std::string& pydir,
                   const std::string& raw_dir) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) throw IoError(errno, "pipe2", "", "");
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP};
  sigset_t block{}, old_mask{};
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &old_mask);
  struct sigaction fwd {
  }, ign{}, old[4]{}, old_ttou{};
  fwd.sa_handler = forward_signal;  // no SA_RESTART: the wait below wakes up
  ign.sa_handler = SIG_IGN;
  sigaction(SIGTTOU, &ign, &old_ttou);  // to hand the terminal back from the background
  std::vector<char*> argv;
  for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::string preload = with_prefix("LD_PRELOAD", lib);
  std::string pypath = pydir.empty() ? "" : with_prefix("PYTHONPATH", pydir);
  const bool own_tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  Child c;
  c.start_ns = now_ns();
  pid_t pid = fork();
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    throw IoError(errno, "fork", cmd[0], "too many processes? (ulimit -u)");
  }
  if (pid == 0) {
    setpgid(0, 0);
    if (own_tty) tcsetpgrp(STDIN_FILENO, getpgrp());
    for (int sig : kForwarded) signal(sig, SIG_DFL);
    signal(SIGTTOU, SIG_DFL);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv(IOPROBE_REC_ENV_DIR, raw_dir.c_str(), 1);
    setenv("IOPROBE_RECORD_LIB", lib.c_str(), 1);
    if (!pypath.empty()) setenv("PYTHONPATH", pypath.c_str(), 1);
    execvp(argv[0], argv.data());
    int e = errno;
    ssize_t w = write(pipefd[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  setpgid(pid, pid);
  if (own_tty) tcsetpgrp(STDIN_FILENO, pid);
  g_signal = 0;
  g_job_pgid = pid;
  for (size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &fwd, &old[i]);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  close(pipefd[1]);
  int exec_err = 0;
  ssize_t got = -1;
  while ((got = read(pipefd[0], &exec_err, sizeof exec_err)) < 0 && errno == EINTR) {
  }
  close(pipefd[0]);
  int status = 0;
  bool reaped = false;
  while (!reaped && !g_signal) {
    pid_t r = waitpid(pid, &status, WUNTRACED);
    if (r == pid && WIFSTOPPED(status)) {
      // Ctrl-Z stopped the job: stop here too so the shell gets the terminal back, and on fg/bg
      // continue the job (with the terminal again when this process is in the foreground).
      if (own_tty) tcsetpgrp(STDIN_FILENO, getpgrp());
      ::kill(getpid(), SIGSTOP);
      if (own_tty && tcgetpgrp(STDIN_FILENO) == getpgrp()) tcsetpgrp(STDIN_FILENO, pid);
      ::kill(-pid, SIGCONT);
      continue;
    }
    if (r == pid) reaped = true;
    else if (errno != EINTR) break;
  }
  int64_t deadline = now_ns() + int64_t{kGraceSeconds} * 1'000'000'000;
  if (!reaped && g_signal && !wait_until(pid, &status, deadline)) {
    ::kill(-pid, SIGKILL);
    reaped = wait_until(pid, &status, now_ns() + 2'000'000'000);
  }
  c.end_ns = now_ns();
  // Processes the command left running (orphans reparented here) are waited for too; after a
  // signal only until the grace runs out, then its group is killed.
  int other = 0;
  if (!g_signal) {
    while (wait(&other) > 0 || errno == EINTR) {
      if (g_signal) break;
    }
  }
  if (g_signal && !wait_until(-1, &other, deadline)) {
    ::kill(-pid, SIGKILL);
    wait_until(-1, &other, now_ns() + 2'000'000'000);
  }
  for (size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &old[i], nullptr);
  if (own_tty) tcsetpgrp(STDIN_FILENO, getpgrp());
  sigaction(SIGTTOU, &old_ttou, nullptr);
  g_job_pgid = 0;
  c.got_signal = g_signal;
  if (got == static_cast<ssize_t>(sizeof exec_err))
    throw UsageError(fmt::format("cannot run '{}': {}; give a command on PATH or its path after --",
                                 escape_bytes(cmd[0]), errno_text(exec_err)));
  if (reaped && WIFSIGNALED(status)) c.ended_by = WTERMSIG(status);
  c.status = c.got_signal          ? 128 + c.got_signal
             : !reaped             ? 1
             : WIFEXITED(status)   ? WEXITSTATUS(status)
             : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                   : 1;
  return c;
}

// Why a recording is partial, or "" when the command ran to its end.
std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

// Why a recording is partial, or "" when the command ran to its end.
std::string partial_reason(const Child& c) {
  if (c.got_signal)
    return fmt::format("interrupted: ioprobe record got {} and forwarded it to the command", signal_name(c.got_signal));
  if (c.ended_by) return fmt::format("interrupted: the command was ended by {}", signal_name(c.ended_by));
  return "";
}

std::string make_raw_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ioprobe-record.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back(0);
  if (!mkdtemp(buf.data())) throw IoError(errno, "mkdtemp", tmpl, "set TMPDIR to a writable directory");
  return buf.data();
}

// On stderr: the command's own stdout stays as it was.
void print_summary(const trace::Trace& t, const std::string& out, const std::string& what) {
  std::map<int32_t, int> pids;
  std::map<std::string, uint64_t> by_kind;
  for (const auto& s : t.streams) {
    pids[s.pid]++;
    for (const auto& op : s.ops) by_kind[std::string(trace::op_kind_name(op.kind))]++;
  }
  std::string kinds;
  for (const auto& [k, n] : by_kind) kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", k, format_count(n));
  uint64_t read = t.read_bytes();
  uint64_t mapped = t.mapped.mapped_bytes;
  message(what);
  message(fmt::format("  processes {}, threads with data-file calls {}, files {}, duration {}", pids.size(),
                      t.streams.size(), t.files.size(), format_seconds(t.duration_ns / 1e9)));
  message(fmt::format("  ops: {}", kinds.empty() ? "none" : kinds));
  message(fmt::format("  bytes read by calls: {}", format_bytes(read)));
  const double mapped_pct = 100.0 * static_cast<double>(mapped) / static_cast<double>(read + mapped);
  if (mapped && t.mapped.sampled)
    message(fmt::format("  bytes mapped (mmap): {}, {:.0f}% of read + mapped; of them present in the page table at "
                        "unmap or exit (touched, fault-around included): {}",
                        format_bytes(mapped), mapped_pct, format_bytes(t.mapped.touched_bytes)));
  else if (mapped)
    message(fmt::format("  bytes mapped (mmap): {}, {:.0f}% of read + mapped; touched bytes not known (a process "
                        "ended without reporting its mappings)",
                        format_bytes(mapped), mapped_pct));
  else message("  bytes mapped (mmap): none");
  message(fmt::format("  trace: {}{}", escape_bytes(out), t.anonymized ? " (paths anonymized)" : ""));
}

}  // namespace

int cmd_record(const CommandContext& ctx) {
  po::options_description desc(
      "usage: ioprobe record [--out TRACE] [--anonymize] [--keep-raw] -- CMD [ARGS...]\n"
      "       ioprobe record --import FILE [--format dftracer|strace] [--out TRACE] [--anonymize]\n\n"
      "Runs your training (or data-loading) command unchanged and records every call it makes on its data\n"
      "files, per process and thread (open, read, pread, readv, fread, lseek, stat, mmap, close), with the\n"
      "DataLoader's batch waits and worker processes marked; `ioprobe replay` plays the trace on any storage.\n"
      "Or turns a DFTracer (.pfw, .pfw.gz) or `strace -f -ttt -T` log into the same trace with --import.\n\noptions");
  // clang-format off
  desc.add_options()                                                                              //
      ("help,h", "print this help")                                                               //
      ("out,o", po::value<std::string>(),
       "the trace file to write (JSON Lines, atomically; default ioprobe-trace-HOST-YYYYmmdd-HHMMSS.jsonl here, "
       "with -2, -3 ... added when that name is taken); an existing --out file is replaced only when it is an ioprobe trace")                          //
      ("anonymize", "replace each path by anon:<XXH3 of the path><extension> (the extension is kept so the file "
                    "types stay visible); the command line is cut to the program name and the host name hashed")  //
      ("keep-raw", "keep the interposer's per-process files (printed directory) instead of removing them")  //
      ("import", po::value<std::string>(), "read this DFTracer or strace log instead of running a command")  //
      ("format", po::value<std::string>(), "the --import file's format: dftracer or strace (default: told from "
                                           "the file name, .pfw/.pfw.gz/.json = dftracer, else strace)");
  // clang-format on
  std::vector<std::string> opts, cmd;
  bool after = false;
  for (const auto& a : ctx.args) {
    if (!after && a == "--") {
      after = true;
      continue;
    }
    (after ? cmd : opts).push_back(a);
  }
  po::variables_map vm = parse_command_line(opts, desc, "record");
  if (vm.count("help")) {
    std::cout << desc << "\n"
              << "The interposer is libioprobe_record.so, found next to the ioprobe binary (the build tree) or in\n"
                 "PREFIX/lib/ioprobe/ (cmake --install); the Python marks come from a sitecustomize put first on\n"
                 "PYTHONPATH (an existing sitecustomize still runs after it; python -E or -I ignores PYTHONPATH, so\n"
                 "such a job is recorded without marks). What the trace cannot see is listed in\n"
                 "its \"limits\" (page faults of mapped files, io_uring reads, direct GPU and object-store reads).\n\n"
              << kExitCodes << "\n";
    return kExitOk;
  }
  const bool importing = vm.count("import") > 0;
  if (importing && !cmd.empty())
    throw UsageError("--import reads a log; it takes no command after --: give one or the other");
  if (!importing && cmd.empty())
    throw UsageError("no command to record: give it after --, e.g. ioprobe record -- python3 train.py");
  if (vm.count("format") && !importing) throw UsageError("--format goes with --import FILE");
  std::string out = vm.count("out") ? get_string(vm, "out") : default_out();
  check_out(out);

  if (importing) {
    std::string file = get_string(vm, "import");
    std::string format = get_string(vm, "format", "");
    trace::Trace t = trace::import_trace(file, format);
    if (vm.count("anonymize")) trace::anonymize_paths(t);
    trace::write_trace(t, out);
    print_summary(t, out, fmt::format("imported {} ({})", escape_bytes(file), t.source));
    for (const auto& l : t.limits) message("  limit: " + l);
    return kExitOk;
  }

  std::string lib = find_interposer();
  std::string pydir = find_python_dir();
  if (pydir.empty())
    warning("python/ioprobe_record/sitecustomize.py not found: the trace will have no DataLoader batch or worker "
            "marks");
  std::string raw = make_raw_dir();
  Child child;
  try {
    child = run_recorded(cmd, lib, pydir, raw);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(raw, ec);
    throw;
  }
  try {
    trace::CollectInput in{raw, child.start_ns, child.end_ns, cmd, hostname()};
    trace::CollectStats stats;
    trace::Trace t = trace::collect_records(in, &stats);
    t.partial = partial_reason(child);
    if (vm.count("anonymize")) trace::anonymize_paths(t);
    trace::write_trace(t, out);
    print_summary(t, out,
                  fmt::format("recorded '{}' (exit status {}){}", escape_bytes(cmd[0]), child.status,
                              t.partial.empty() ? "" : ": partial (interrupted)"));
    if (!t.partial.empty())
      message(fmt::format("  partial: {}; the trace holds what the processes had written when they ended (a "
                          "process killed without a clean exit loses up to its last {:.2f} s of calls per thread)",
                          t.partial, kFlushAgeSeconds));
    if (t.op_count() == 0 && !t.partial.empty())
      warning("no call on a data file was recorded before the command was interrupted");
    else if (t.op_count() == 0)
      warning("no call on a data file was recorded: the rule leaves out /usr, /etc, /proc, Python packages and shared "
              "libraries; statically linked programs and io_uring reads are not seen");
    if (stats.bad_chunks)
      warning(
          fmt::format("{} cut-off chunk(s) in the raw files (a process killed while it flushed)", stats.bad_chunks));
  } catch (const Error& e) {
    error_message(
        fmt::format("recording failed after the command ran (its exit status was {}): {}", child.status, e.what()));
    if (!vm.count("keep-raw")) {
      std::error_code ec;
      std::filesystem::remove_all(raw, ec);
    }
    return kExitFailure;
  }
  if (vm.count("keep-raw")) message("  raw per-process files kept in " + escape_bytes(raw));
  else {
    std::error_code ec;
    std::filesystem::remove_all(raw, ec);
  }
  return child.status;
}

}  // namespace ioprobe::cli
