#include "calibrate/driver_io.hpp"

#include <dirent.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include <fmt/format.h>

namespace ioprobe {

namespace {

constexpr size_t kOutKept = size_t{64} * 1024;  // DriverRun::out keeps the last 64 KiB of stdout
constexpr size_t kLineMax = 4096;               // a longer line is cut here when shown or kept

void write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // our stderr is gone: nothing more to show
    data += w;
    n -= static_cast<size_t>(w);
  }
}

void write_all(int fd, const std::string& s) { write_all(fd, s.data(), s.size()); }

// Appends to a line being received, at most kLineMax bytes of it.
void add_to_line(std::string& line, const char* data, size_t n) {
  if (line.size() < kLineMax) line.append(data, std::min(n, kLineMax - line.size()));
}

}  // namespace

DriverStreams::DriverStreams(int out_fd, int err_fd, const DriverWatch& watch, DriverRun& run)
    : fds_{out_fd, err_fd}, watch_(watch), run_(run) {}

DriverStreams::~DriverStreams() {
  for (int& fd : fds_)
    if (fd >= 0) close(fd);
}

bool DriverStreams::pump(int ms) {
  pollfd p[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};  // a negative fd is skipped
  const int n = poll(p, 2, ms);
  if (n <= 0) return false;  // nothing, or EINTR: the caller's loop comes back
  bool got_any = false;
  char buf[65536];
  for (int i : {1, 0}) {  // stderr first: the driver's step line usually comes before the prints of the step
    if (fds_[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t got = read(fds_[i], buf, sizeof(buf));
    if (got > 0) {
      got_any = true;
      if (i == 0) on_out(buf, static_cast<size_t>(got));
      else on_err(buf, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      close(fds_[i]);
      fds_[i] = -1;
    }
  }
  return got_any;
}

void DriverStreams::drain(int ms, int quiet_ms) {
  using clock = std::chrono::steady_clock;
  const auto end = clock::now() + std::chrono::milliseconds(ms);
  bool came = false;
  auto last = clock::now();
  while (open() && clock::now() < end) {
    if (pump(50)) {
      came = true;
      last = clock::now();
    } else if (came && clock::now() - last >= std::chrono::milliseconds(quiet_ms)) {
      return;
    }
  }
}

void DriverStreams::finish() {
  if (!out_part_.empty()) out_line(out_part_);
  out_part_.clear();
  if (!err_part_.empty()) write_all(STDERR_FILENO, "\n", 1);  // the next message starts on its own line
  err_part_.clear();
  for (int& fd : fds_)
    if (fd >= 0) {
      close(fd);
      fd = -1;
    }
}

void DriverStreams::on_err(const char* data, size_t n) {
  run_.err_bytes += n;
  write_all(STDERR_FILENO, data, n);
  const std::string& prefix = watch_.step_prefix;
  for (size_t i = 0; i < n;) {
    const char* nl = static_cast<const char*>(memchr(data + i, '\n', n - i));
    const size_t end = nl ? static_cast<size_t>(nl - data) : n;
    add_to_line(err_part_, data + i, end - i);
    if (!nl) break;
    if (!prefix.empty() && err_part_.compare(0, prefix.size(), prefix) == 0)
      run_.last_step = err_part_.substr(prefix.size() - 1);  // from the prefix's last character: "[12.3 s] ..."
    err_part_.clear();
    i = end + 1;
  }
}

void DriverStreams::on_out(const char* data, size_t n) {
  run_.out_bytes += n;
  run_.out.append(data, n);
  if (run_.out.size() > kOutKept) run_.out.erase(0, run_.out.size() - kOutKept);
  for (size_t i = 0; i < n; ++i)
    if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r' && data[i] != '\n') run_.out_blank = false;
  for (size_t i = 0; i < n;) {
    const char* nl = static_cast<const char*>(memchr(data + i, '\n', n - i));
    const size_t end = nl ? static_cast<size_t>(nl - data) : n;
    add_to_line(out_part_, data + i, end - i);
    if (!nl) break;
    out_line(out_part_);
    out_part_.clear();
    i = end + 1;
  }
}

void DriverStreams::out_line(const std::string& line) {
  ++run_.out_lines;
  if (watch_.stdout_mark.empty()) return;
  if (run_.out_lines <= watch_.stdout_lines_shown) {
    write_all(STDERR_FILENO, watch_.stdout_mark + line + "\n");
  } else if (run_.out_lines == watch_.stdout_lines_shown + 1) {
    write_all(STDERR_FILENO, fmt::format("{}... (its next lines are counted, not shown)\n", watch_.stdout_mark));
  }
}

std::vector<pid_t> descendant_processes(pid_t root) {
  std::multimap<pid_t, pid_t> children;  // parent -> child
  DIR* d = opendir("/proc");
  if (!d) return {};
  while (const dirent* e = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != 0) continue;
    std::ifstream f(fmt::format("/proc/{}/stat", pid));
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 1));
    std::string state;
    long ppid = 0;
    if (rest >> state >> ppid) children.emplace(static_cast<pid_t>(ppid), static_cast<pid_t>(pid));
  }
  closedir(d);
  std::vector<pid_t> out;
  std::vector<pid_t> todo{root};
  for (size_t i = 0; i < todo.size(); ++i) {
    auto [a, b] = children.equal_range(todo[i]);
    for (auto it = a; it != b; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

}  // namespace ioprobe
