#include "core/dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"

namespace ioprobe {

namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "?";
  return buf;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

// The command line of process `pid` on this host, words joined by spaces; "" when unreadable.
std::string command_of(long pid) {
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw)
    if (c == '\0') c = ' ';
  return escape_bytes(raw.size() > 200 ? raw.substr(0, 200) + "..." : raw);
}

// PIDs holding a flock on the file with this device and inode, from /proc/locks (this host only).
std::vector<long> flock_holders(const struct stat& st) {
  std::vector<long> pids;
  std::ifstream in("/proc/locks");
  std::string line;
  const std::string id = fmt::format("{:02x}:{:02x}:{}", major(st.st_dev), minor(st.st_dev), st.st_ino);
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string num, kind, advisory, mode, file;
    long pid = 0;
    if (!(f >> num >> kind) || kind == "->") continue;  // "->" lines are waiters, not holders
    if (!(f >> advisory >> mode >> pid >> file)) continue;
    if (kind == "FLOCK" && file == id) pids.push_back(pid);
  }
  return pids;
}

std::string describe(const std::string& path, int fd) {
  std::string recorded;
  {
    std::ifstream in(path);
    std::string line;
    std::string pid, host, command, since;
    while (std::getline(in, line)) {
      const auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::string k = line.substr(0, eq), v = line.substr(eq + 1);
      if (k == "pid") pid = v;
      else if (k == "host") host = v;
      else if (k == "command") command = v;
      else if (k == "since") since = v;
    }
    if (!pid.empty())
      recorded = fmt::format("PID {} on host '{}' ('{}', since {})", pid, escape_bytes(host), escape_bytes(command),
                             escape_bytes(since));
  }
  struct stat st {};
  std::vector<long> pids;
  if (fstat(fd, &st) == 0) pids = flock_holders(st);
  std::string local;
  for (long p : pids) {
    if (p == getpid()) continue;
    local += fmt::format("{}PID {} ('{}')", local.empty() ? "" : ", ", p, command_of(p));
  }
  if (recorded.empty() && local.empty()) return "another process (its PID is not recorded)";
  if (local.empty()) return recorded;
  if (recorded.empty()) return "this host's " + local;
  return fmt::format("{}; on this host it is held by {}", recorded, local);
}

// Tests of waiting need a holder that certainly holds the lock while a second process comes:
// with IOPROBE_TEST_STOP_HOLDING_LOCK set, the first lock this process takes stops it (SIGSTOP)
// once taken and recorded, and the test resumes it (SIGCONT). Nothing else reads this variable.
void stop_if_testing() {
  static std::atomic<bool> stopped{false};
  const char* env = std::getenv("IOPROBE_TEST_STOP_HOLDING_LOCK");
  if (env && *env && !stopped.exchange(true)) raise(SIGSTOP);
}

}  // namespace

DirLock::DirLock(const std::string& dir, Mode mode, const std::string& purpose,
                 const std::function<void(const std::string&)>& on_wait)
    : path_(dir + "/" + kDirLockName), mode_(mode) {
  bool told = false;
  for (;;) {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    int err = errno;
    // A reader of a directory it may not write (another user's dataset, a read-only mount) locks
    // the existing file through a read-only descriptor: flock(2) does not need write access.
    if (fd_ < 0 && (err == EACCES || err == EROFS || err == EPERM)) fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
      throw IoError(err, "create the lock file", path_,
                    err == ENOENT ? "the directory was removed (by the run that held it?) while this one waited"
                                  : "the directory must be writable");
    const int op = mode == Mode::kExclusive ? LOCK_EX : LOCK_SH;
    while (flock(fd_, op | LOCK_NB) != 0) {
      const int e = errno;
      if (e == EINTR) continue;
      if (e != EWOULDBLOCK) {
        close(fd_);
        throw IoError(e, "lock", path_);
      }
      if (!told && on_wait) on_wait(describe(path_, fd_));
      told = true;
      if (interrupted()) {
        close(fd_);
        throw Error(fmt::format("interrupted while waiting for the lock on '{}'", escape_bytes(dir)),
                    interrupt_exit_code());
      }
      usleep(100 * 1000);
    }
    // The last holder removes the file when it leaves: a lock on a removed file guards nothing.
    struct stat locked {
    }, named{};
    if (fstat(fd_, &locked) == 0 && stat(path_.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
        locked.st_ino == named.st_ino)
      break;
    close(fd_);
  }
  if (mode == Mode::kExclusive) {
    const std::string text = fmt::format("pid={}\nhost={}\ncommand={}\nsince={}\n", getpid(), host_name(),
                                         purpose.empty() ? command_of(getpid()) : purpose, utc_now());
    if (ftruncate(fd_, 0) == 0) {
      ssize_t n = pwrite(fd_, text.data(), text.size(), 0);
      (void)n;  // the record only improves a waiter's message; the lock itself is taken
    }
  }
  stop_if_testing();
}

void DirLock::downgrade() {
  if (mode_ == Mode::kShared || fd_ < 0) return;
  while (flock(fd_, LOCK_SH) != 0 && errno == EINTR) {
  }
  mode_ = Mode::kShared;
}

DirLock::~DirLock() {
  if (fd_ < 0) return;
  // The last holder removes the file: only while no one else holds it (an exclusive try).
  if (flock(fd_, LOCK_EX | LOCK_NB) == 0) {
    struct stat locked {
    }, named{};
    if (fstat(fd_, &locked) == 0 && stat(path_.c_str(), &named) == 0 && locked.st_ino == named.st_ino &&
        locked.st_dev == named.st_dev)
      unlink(path_.c_str());
  }
  close(fd_);
}

}  // namespace ioprobe
