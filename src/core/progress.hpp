// The one progress line on stderr of long steps: dataset generation, the loader's reads, tune's
// sweep, raw I/O and raw's file layout. On a terminal the line is redrawn in place; elsewhere (a
// log file, a pipe, CI) a full line "ioprobe SUBCOMMAND: TEXT" (core/message.hpp) is printed at most once per log
// period, so that long runs show they are alive without flooding the log.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ioprobe {

class ProgressLine {
 public:
  /// `enabled` false prints nothing (--quiet). Periods in seconds: at most one line per
  /// `tty_period_s` on a terminal, per `log_period_s` elsewhere; `log_period_s` <= 0 prints
  /// nothing unless on a terminal.
  ProgressLine(bool enabled, double tty_period_s, double log_period_s = 10);
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  bool tty() const { return tty_; }

  /// Prints `text` now: redrawn in place on a terminal, prefix + TEXT on a line of its own
  /// elsewhere (unless log lines are off). Thread-safe.
  void print(const std::string& text);
  /// Prints a line that stays: on a terminal it replaces the redrawn line and ends with a newline;
  /// elsewhere it is prefix + TEXT. Thread-safe.
  void print_line(const std::string& text);
  /// Prints `text()` when the period has passed since the last line (or when `force`). Thread-safe.
  template <class F>
  void update(F&& text, bool force = false) {
    if (due(force)) print(text());
  }
  /// Ends the redrawn line on a terminal: cleared, or kept with a newline when `keep`. Idempotent.
  void finish(bool keep = false);

 private:
  bool due(bool force);
  bool enabled_;
  bool tty_;
  int64_t period_ns_;
  int64_t last_ns_;
  bool drawn_ = false;  // a redrawn line is on the terminal
  std::mutex mu_;
};

/// A ProgressLine fed by a thread of its own: calls `text()` once per period until destroyed
/// (for steps that only expose counters, like the loader's).
class PeriodicProgress {
 public:
  PeriodicProgress(bool enabled, double tty_period_s, double log_period_s, std::function<std::string()> text);
  ~PeriodicProgress();
  PeriodicProgress(const PeriodicProgress&) = delete;
  PeriodicProgress& operator=(const PeriodicProgress&) = delete;

 private:
  ProgressLine line_;
  std::function<std::string()> text_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

}  // namespace ioprobe
