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
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
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
  return fmt::format("ioprobe-trace-{}-{}.jsonl", hostname(), stamp);
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
  check_can_create_in(dir.empty() ? "." : dir, "--out");
}

std::string with_prefix(const char* var, const std::string& first) {
  const char* old = std::getenv(var);
  return old && *old ? first + ":" + old : first;
}

struct Child {
  int status = 0;  // the command's exit status (128+N for a signal)
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Runs `cmd` with the recorder's environment and waits for it and every process it left behind
// (this process is their subreaper), with SIGINT/SIGTERM/SIGQUIT ignored here so that a Ctrl-C
// reaches the job and the trace is still written. Throws UsageError when `cmd` cannot be started.
Child run_recorded(const std::vector<std::string>& cmd, const std::string& lib, const std::string& pydir,
                   const std::string& raw_dir) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) throw IoError(errno, "pipe2", "", "");
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct sigaction ign {
  }, old_int{}, old_term{}, old_quit{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGTERM, &ign, &old_term);
  sigaction(SIGQUIT, &ign, &old_quit);
  std::vector<char*> argv;
  for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::string preload = with_prefix("LD_PRELOAD", lib);
  std::string pypath = pydir.empty() ? "" : with_prefix("PYTHONPATH", pydir);
  Child c;
  c.start_ns = now_ns();
  pid_t pid = fork();
  if (pid < 0) throw IoError(errno, "fork", cmd[0], "too many processes? (ulimit -u)");
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
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
  close(pipefd[1]);
  int exec_err = 0;
  ssize_t got = read(pipefd[0], &exec_err, sizeof exec_err);
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.end_ns = now_ns();
  // Processes the command left running (orphans reparented here) are waited for too.
  int other = 0;
  while (wait(&other) > 0 || errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (got == static_cast<ssize_t>(sizeof exec_err))
    throw UsageError(fmt::format("cannot run '{}': {}; give a command on PATH or its path after --",
                                 escape_bytes(cmd[0]), errno_text(exec_err)));
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
  return c;
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
  std::fprintf(stderr, "\n%s\n", what.c_str());
  std::fprintf(stderr, "  processes %zu, threads with data-file calls %zu, files %zu, duration %s\n", pids.size(),
               t.streams.size(), t.files.size(), format_seconds(t.duration_ns / 1e9).c_str());
  std::fprintf(stderr, "  ops: %s\n", kinds.empty() ? "none" : kinds.c_str());
  std::fprintf(stderr, "  bytes read by calls: %s\n", format_bytes(read).c_str());
  if (mapped && t.mapped.sampled)
    std::fprintf(stderr,
                 "  bytes mapped (mmap): %s, %.0f%% of read + mapped; of them present in the page table at unmap or "
                 "exit (touched, fault-around included): %s\n",
                 format_bytes(mapped).c_str(), 100.0 * static_cast<double>(mapped) / static_cast<double>(read + mapped),
                 format_bytes(t.mapped.touched_bytes).c_str());
  else if (mapped)
    std::fprintf(stderr,
                 "  bytes mapped (mmap): %s, %.0f%% of read + mapped; touched bytes not known (a process ended "
                 "without reporting its mappings)\n",
                 format_bytes(mapped).c_str(),
                 100.0 * static_cast<double>(mapped) / static_cast<double>(read + mapped));
  else std::fprintf(stderr, "  bytes mapped (mmap): none\n");
  std::fprintf(stderr, "  trace: %s%s\n", escape_bytes(out).c_str(), t.anonymized ? " (paths anonymized)" : "");
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
       "the trace file to write (JSON Lines, atomically; default ioprobe-trace-HOST-YYYYmmdd-HHMMSS.jsonl here); "
       "an existing file is replaced only when it is an ioprobe trace")                          //
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
    for (const auto& l : t.limits) std::fprintf(stderr, "  limit: %s\n", l.c_str());
    return kExitOk;
  }

  std::string lib = find_interposer();
  std::string pydir = find_python_dir();
  if (pydir.empty())
    std::fprintf(stderr, "ioprobe: warning: python/ioprobe_record/sitecustomize.py not found: the trace will have no "
                         "DataLoader batch or worker marks\n");
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
    if (vm.count("anonymize")) trace::anonymize_paths(t);
    trace::write_trace(t, out);
    print_summary(t, out, fmt::format("recorded '{}' (exit status {})", escape_bytes(cmd[0]), child.status));
    if (t.op_count() == 0)
      std::fprintf(stderr,
                   "  warning: no call on a data file was recorded: the rule leaves out /usr, /etc, /proc, Python "
                   "packages and shared libraries; statically linked programs and io_uring reads are not seen\n");
    if (stats.bad_chunks)
      std::fprintf(stderr, "  warning: %llu cut-off chunk(s) in the raw files (a process killed while it flushed)\n",
                   static_cast<unsigned long long>(stats.bad_chunks));
  } catch (const Error& e) {
    std::fprintf(stderr, "ioprobe: recording failed after the command ran (its exit status was %d): %s\n", child.status,
                 e.what());
    if (!vm.count("keep-raw")) {
      std::error_code ec;
      std::filesystem::remove_all(raw, ec);
    }
    return kExitFailure;
  }
  if (vm.count("keep-raw")) std::fprintf(stderr, "  raw per-process files kept in %s\n", escape_bytes(raw).c_str());
  else {
    std::error_code ec;
    std::filesystem::remove_all(raw, ec);
  }
  return child.status;
}

}  // namespace ioprobe::cli
