#include "calibrate/driver.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "calibrate/driver_io.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"

extern char** environ;

namespace ioprobe {

namespace {

bool is_file(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string real(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// `name` on $PATH, or "" when absent.
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::string all(path);
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    std::string dir = all.substr(start, end - start);
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
    start = end + 1;
  }
  return "";
}

}  // namespace

std::string find_calibration_driver() {
  constexpr const char* kScript = "ioprobe_calibrate.py";
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("IOPROBE_PYTHON_DIR")) dirs.emplace_back(env);
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = 0;
    std::string d(exe);
    d = d.substr(0, d.rfind('/'));
    dirs.push_back(d + "/../share/ioprobe/python");
    dirs.push_back(d + "/../python");
  }
  dirs.emplace_back(IOPROBE_SOURCE_PYTHON);
  std::string looked;
  for (const auto& d : dirs) {
    if (is_file(d + "/" + kScript)) return real(d + "/" + kScript);
    looked += (looked.empty() ? "" : ", ") + d;
  }
  throw Error(fmt::format("the calibration driver {} is not installed (looked in {}); reinstall ioprobe (cmake "
                          "--install) or set IOPROBE_PYTHON_DIR to the repository's python/ directory",
                          kScript, looked),
              kExitFailure);
}

std::vector<std::string> python_candidates(const std::string& given) {
  if (!given.empty()) return {given};
  std::vector<std::string> out;
  for (const std::string& c : {on_path("python3"), std::string("/usr/bin/python3")}) {
    if (c.empty() || access(c.c_str(), X_OK) != 0) continue;
    bool dup = false;
    for (const auto& o : out) dup = dup || real(o) == real(c);
    if (!dup) out.push_back(c);
  }
  return out;
}

namespace {

void say(const std::string& s) {
  const std::string line = s + "\n";
  for (size_t done = 0; done < line.size();) {
    const ssize_t w = write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
}

// Sends ioprobe's interrupt on to the interpreter, once: a Ctrl-C on the terminal reaches both,
// a signal sent to ioprobe alone (kill, a supervisor) only ioprobe.
void forward_interrupt(pid_t pid, DriverRun& r) {
  if (r.forwarded || !interrupted()) return;
  r.forwarded = true;
  kill(pid, interrupt_signal());
}

// --timeout passed: each process of the driver's tree writes its Python stacks (faulthandler,
// python/ioprobe_progress.py) under a line naming it, passed through before the next is asked;
// then all of them are killed. Processes that started meanwhile are killed as well.
void end_on_timeout(pid_t pid, const DriverWatch& watch, DriverStreams& io, DriverRun& r) {
  r.timed_out = true;
  say(fmt::format("ioprobe calibrate: --timeout {:g} s passed; the Python stack of each process of the calibration "
                  "follows (faulthandler: every thread, most recent call first)",
                  watch.timeout_s));
  std::vector<pid_t> procs{pid};
  for (const pid_t p : descendant_processes(pid)) procs.push_back(p);
  for (const pid_t p : procs) {
    say(p == pid ? fmt::format("ioprobe calibrate: -- process {}: the driver's main process (your Dataset factory, "
                               "the samples at num_workers=0, and the DataLoader's main loop run here)",
                               p)
                 : fmt::format("ioprobe calibrate: -- process {}: started by the driver (a DataLoader worker, or a "
                               "process your code started)",
                               p));
    if (kill(p, kStackDumpSignal) != 0) continue;  // it is gone
    r.dumped.push_back(p);
    io.drain(1000, 200);  // its stack (written at once, in the signal handler), before the next one's line
  }
  // Frozen first, parents before children, so that none reacts to another's death (a shell
  // going on once its child died, a DataLoader starting a new worker); then killed.
  for (const pid_t p : procs) kill(p, SIGSTOP);
  for (const pid_t p : descendant_processes(pid)) {
    if (std::find(procs.begin(), procs.end(), p) != procs.end()) continue;
    kill(p, SIGSTOP);
    procs.push_back(p);
  }
  for (const pid_t p : procs) kill(p, SIGKILL);
}

}  // namespace

DriverRun run_driver(const std::string& python, const std::string& driver, const std::vector<std::string>& args,
                     const DriverWatch& watch) {
  int out_fds[2], err_fds[2];
  if (pipe2(out_fds, O_CLOEXEC) != 0) throw IoError(errno, "pipe", "(calibration driver output)");
  if (pipe2(err_fds, O_CLOEXEC) != 0) {
    const int e = errno;
    close(out_fds[0]);
    close(out_fds[1]);
    throw IoError(e, "pipe", "(calibration driver messages)");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err_fds[1], STDERR_FILENO);
  std::vector<std::string> argv_s{python, driver};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = python.find('/') == std::string::npos
                     ? posix_spawnp(&pid, python.c_str(), &fa, nullptr, argv.data(), environ)
                     : posix_spawn(&pid, python.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out_fds[1]);
  close(err_fds[1]);
  if (rc != 0) {
    close(out_fds[0]);
    close(err_fds[0]);
    throw UsageError(fmt::format("cannot start {} ({}); give --python with a python3 that imports torch",
                                 escape_bytes(python), errno_text(rc)));
  }
  DriverRun r;
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  {
    // stdout is collected (and shown marked), stderr passed through as it comes (and counted: a
    // failure that printed nothing is told apart from one that explained itself).
    DriverStreams io(out_fds[0], err_fds[0], watch, r);
    double killed_at = 0;
    while (io.open()) {
      forward_interrupt(pid, r);
      if (watch.timeout_s > 0 && !r.timed_out && elapsed() >= watch.timeout_s) {
        end_on_timeout(pid, watch, io, r);
        killed_at = elapsed();
      }
      // Killed, a process outside its tree (one the user's code left running) may keep a pipe open.
      if (r.timed_out && elapsed() - killed_at > 3) break;
      // A bounded wait: a signal landing between the checks above and poll() is acted on soon.
      io.pump(200);
    }
    io.finish();
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) forward_interrupt(pid, r);
  r.elapsed_s = elapsed();
  if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.exit_code = 128 + r.signal;
  } else {
    r.exit_code = WEXITSTATUS(status);
  }
  return r;
}

std::string driver_failure_text(const std::string& python, const std::string& driver, const DriverRun& r) {
  const std::string py = escape_bytes(python);
  const std::string check =
      fmt::format("check that {} is a Python 3 with PyTorch ({} -c 'import torch' must work), or give --python with "
                  "the interpreter your training uses",
                  py, py);
  if (r.signal) {
    const char* name = sigabbrev_np(r.signal);
    return fmt::format("{} running the calibration driver {} was killed by signal {} ({}){}; {}", py,
                       escape_bytes(driver), r.signal, name ? fmt::format("SIG{}", name) : "unknown",
                       r.silent() ? " before printing anything" : "",
                       r.signal == SIGKILL ? "SIGKILL is what the kernel's out-of-memory killer sends (see dmesg): "
                                             "lower --batch-size or --samples, or free memory, and run it again"
                                           : check);
  }
  if (r.exit_code == 0) return "";
  if (r.silent())
    return fmt::format("{} exited with status {} and printed nothing (no message, no result): it did not run the "
                       "calibration driver {}; {}",
                       py, r.exit_code, escape_bytes(driver), check);
  std::string last = r.out;  // stdout is not shown as it comes: its last line may say why
  while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) last.pop_back();
  if (const size_t nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
  return fmt::format("the calibration driver {} under {} failed (exit status {}); {}", escape_bytes(driver), py,
                     r.exit_code,
                     r.err_bytes ? std::string("see its messages above")
                                 : fmt::format("it printed no message, only on stdout: '{}'",
                                               escape_bytes(last.substr(0, 300))));
}

}  // namespace ioprobe
