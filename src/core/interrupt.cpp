#include "core/interrupt.hpp"

#include <atomic>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <unistd.h>

namespace ioprobe {

namespace {
std::atomic<int> g_signal{0};

std::atomic<int64_t> g_first_ns{0};

int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void on_signal(int sig) {
  const int64_t now = monotonic_ns();
  int64_t unset = 0;
  g_first_ns.compare_exchange_strong(unset, now);  // before g_signal, so a duplicate always sees it
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) {
    // timeout(1) sends its signal to the child and again to its process group: the same signal
    // within 200 ms is that one event delivered twice, not the user's second Ctrl-C.
    if (expected == sig && now - g_first_ns.load() < 200000000LL) return;
    // Second signal: quit now, without cleanup, as users expect from a second Ctrl-C.
    static const char msg[] = "\nioprobe: second signal, exiting now\n";
    ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)r;
    _exit(128 + sig);
  }
  static const char msg[] = "\nioprobe: interrupted; finishing in-flight I/O and writing a partial result "
                            "(press Ctrl-C again to quit at once)\n";
  ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
  (void)r;
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking waits return EINTR and re-check the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_signal.load(std::memory_order_relaxed) != 0; }
int interrupt_signal() { return g_signal.load(std::memory_order_relaxed); }
int interrupt_exit_code() {
  int s = interrupt_signal();
  return s ? 128 + s : 0;
}
void set_interrupted_for_test(int sig) {
  g_first_ns.store(0);
  g_signal.store(sig);
}

}  // namespace ioprobe
