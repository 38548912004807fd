#include "core/clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace ioprobe {

int64_t thread_runqueue_wait_ns() {
  const int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
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
