#include "calibrate/driver.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"
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

DriverRun run_driver(const std::string& python, const std::string& driver, const std::vector<std::string>& args) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw IoError(errno, "pipe", "(calibration driver output)");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  std::vector<std::string> argv_s{python, driver};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = python.find('/') == std::string::npos
                     ? posix_spawnp(&pid, python.c_str(), &fa, nullptr, argv.data(), environ)
                     : posix_spawn(&pid, python.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw UsageError(fmt::format("cannot start {} ({}); give --python with a python3 that imports torch",
                                 escape_bytes(python), errno_text(rc)));
  }
  DriverRun r;
  char buf[65536];
  for (;;) {
    const ssize_t got = read(fds[0], buf, sizeof(buf));
    if (got > 0) r.out.append(buf, static_cast<size_t>(got));
    else if (got == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace ioprobe
