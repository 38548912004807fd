#include "core/clock.hpp"

#include <cerrno>

namespace ioprobe {

void sleep_until_ns(int64_t deadline_ns) {
  timespec ts{static_cast<time_t>(deadline_ns / 1000000000LL), static_cast<long>(deadline_ns % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace ioprobe
