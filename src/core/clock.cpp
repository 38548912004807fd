#include "core/clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace ioprobe {

namespace {

// The calling thread's /proc/thread-self/schedstat, opened on its first reading and kept open
// until the thread ends: each reading is then one pread(2) of the file's current contents, not an
// open, read and close. -1 when it cannot be opened (asked once per thread).
class SchedstatFile {
 public:
  SchedstatFile() : fd_(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
  ~SchedstatFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  SchedstatFile(const SchedstatFile&) = delete;
  SchedstatFile& operator=(const SchedstatFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

int64_t thread_runqueue_wait_ns() {
  thread_local const SchedstatFile file;
  if (file.fd() < 0) return -1;
  char buf[128];
  const ssize_t n = ::pread(file.fd(), buf, sizeof(buf) - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  unsigned long long on_cpu = 0, waiting = 0;
  if (std::sscanf(buf, "%llu %llu", &on_cpu, &waiting) != 2) return -1;
  return static_cast<int64_t>(waiting);
}

void sleep_until_ns(int64_t deadline_ns) {
  timespec ts{static_cast<time_t>(deadline_ns / 1000000000LL), static_cast<long>(deadline_ns % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace ioprobe
