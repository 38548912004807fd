// Clocks used for measurement. All timestamps are CLOCK_MONOTONIC nanoseconds.
#pragma once

#include <cstdint>
#include <ctime>

namespace ioprobe {

/// CLOCK_MONOTONIC in nanoseconds.
inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

/// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
inline int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

/// Sleeps until the monotonic deadline `deadline_ns` (absolute), resuming after signals.
void sleep_until_ns(int64_t deadline_ns);

}  // namespace ioprobe
