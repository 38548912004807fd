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

/// Run-queue wait of the calling thread since it started, ns: the time it was runnable but not
/// running because no allowed CPU was free (the kernel's sched_info run_delay, the second field of
/// /proc/thread-self/schedstat). Other processes, or more runnable threads than allowed CPUs, make
/// it grow. -1 when the kernel does not expose it (built without CONFIG_SCHED_INFO). Does not throw.
int64_t thread_runqueue_wait_ns();

/// Sleeps until the monotonic deadline `deadline_ns` (absolute), resuming after signals.
void sleep_until_ns(int64_t deadline_ns);

}  // namespace ioprobe
