#include "core/interrupt.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <csignal>
#include <cstring>
#include <ctime>
#include <string>

namespace ioprobe {

namespace {
std::atomic<int> g_signal{0};
std::atomic<pid_t> g_first_sender{-1};
std::atomic<int64_t> g_first_ns{0};

// Files a second signal removes before quitting (remove_on_quit): fixed buffers, as the handler
// may only call async-signal-safe functions (unlink).
constexpr size_t kQuitSlots = 8;
std::array<std::array<char, PATH_MAX>, kQuitSlots> g_quit_paths{};
std::array<std::atomic<bool>, kQuitSlots> g_quit_used{};

// The handler's lines, composed outside it (set_interrupt_prefix) so that it only write(2)s a
// buffer: "\n" + prefix ("ioprobe calibrate: ") + the text.
constexpr char kIntText[] =
    "interrupted; stopping after in-flight I/O, then saying what was done and what was kept (press Ctrl-C again "
    "to quit at once)\n";
constexpr char kTermText[] =
    "terminated (SIGTERM); stopping after in-flight I/O, then saying what was done and what was kept (a second "
    "signal quits at once)\n";
constexpr char kQuitText[] = "second signal, exiting now\n";
struct SignalLine {
  std::array<char, 320> text{};
  std::atomic<size_t> len{0};
};
SignalLine g_int_line, g_term_line, g_quit_line;

void compose(SignalLine& line, const std::string& prefix, const char* text) {
  const std::string s = "\n" + prefix + text;
  line.len.store(0);
  const size_t n = std::min(s.size(), line.text.size());
  std::memcpy(line.text.data(), s.data(), n);
  line.len.store(n);
}

void write_line(const SignalLine& line) {
  const ssize_t r = write(STDERR_FILENO, line.text.data(), line.len.load());
  (void)r;
}

int64_t mono_ns() {  // clock_gettime is async-signal-safe
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void on_signal(int sig, siginfo_t* info, void*) {
  int expected = 0;
  const pid_t sender = info ? info->si_pid : 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) {
    // timeout(1) and some supervisors send the same signal twice at once (to the child, then to
    // its process group): a duplicate from the same sender within 100 ms is one request, not a
    // second Ctrl-C (a person cannot press twice that fast).
    if (expected == sig && sender != 0 && sender == g_first_sender.load() && mono_ns() - g_first_ns.load() < 100000000)
      return;
    // Second signal: quit now, without cleanup, as users expect from a second Ctrl-C.
    for (size_t i = 0; i < kQuitSlots; ++i)
      if (g_quit_used[i].load()) unlink(g_quit_paths[i].data());
    write_line(g_quit_line);
    _exit(128 + sig);
  }
  g_first_sender = sender;
  g_first_ns = mono_ns();
  write_line(sig == SIGTERM ? g_term_line : g_int_line);
}
}  // namespace

void set_interrupt_prefix(const std::string& prefix) {
  compose(g_int_line, prefix, kIntText);
  compose(g_term_line, prefix, kTermText);
  compose(g_quit_line, prefix, kQuitText);
}

std::string interrupted_text(int signal) {
  return signal == SIGTERM ? "interrupted (SIGTERM)" : "interrupted (SIGINT)";
}

void install_interrupt_handlers() {
  if (g_int_line.len.load() == 0) set_interrupt_prefix("ioprobe: ");
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: blocking waits return EINTR and re-check the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int remove_on_quit(const std::string& path) {
  if (path.empty() || path.size() >= PATH_MAX) return -1;
  for (size_t i = 0; i < kQuitSlots; ++i) {
    if (g_quit_used[i].load()) continue;
    std::memcpy(g_quit_paths[i].data(), path.c_str(), path.size() + 1);
    g_quit_used[i].store(true);
    return static_cast<int>(i);
  }
  return -1;
}

void keep_on_quit(int slot) {
  if (slot >= 0 && static_cast<size_t>(slot) < kQuitSlots) g_quit_used[static_cast<size_t>(slot)].store(false);
}

bool interrupted() { return g_signal.load(std::memory_order_relaxed) != 0; }
int interrupt_signal() { return g_signal.load(std::memory_order_relaxed); }
int interrupt_exit_code() {
  int s = interrupt_signal();
  return s ? 128 + s : 0;
}

}  // namespace ioprobe
