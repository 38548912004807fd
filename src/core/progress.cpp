#include "core/progress.hpp"
#include "core/message.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "core/clock.hpp"

namespace ioprobe {

ProgressLine::ProgressLine(bool enabled, double tty_period_s, double log_period_s)
    : enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0) {
  if (!tty_ && log_period_s <= 0) enabled_ = false;
  period_ns_ = static_cast<int64_t>((tty_ ? tty_period_s : log_period_s) * 1e9);
  last_ns_ = now_ns();
}

bool ProgressLine::due(bool force) {
  if (!enabled_) return false;
  std::lock_guard<std::mutex> g(mu_);
  const int64_t now = now_ns();
  if (!force && now - last_ns_ < period_ns_) return false;
  last_ns_ = now;
  return true;
}

void ProgressLine::print(const std::string& text) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> g(mu_);
  if (tty_) {
    fmt::print(stderr, "\r\033[K{}", text);
    drawn_ = true;
  } else {
    fmt::print(stderr, "{}{}\n", message_prefix(), text);
  }
}

void ProgressLine::print_line(const std::string& text) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> g(mu_);
  if (tty_) fmt::print(stderr, "\r\033[K{}\n", text);
  else fmt::print(stderr, "{}{}\n", message_prefix(), text);
  drawn_ = false;
}

void ProgressLine::finish(bool keep) {
  std::lock_guard<std::mutex> g(mu_);
  if (!drawn_) return;
  std::fputs(keep ? "\n" : "\r\033[K", stderr);
  drawn_ = false;
}

PeriodicProgress::PeriodicProgress(bool enabled, double tty_period_s, double log_period_s,
                                   std::function<std::string()> text)
    : line_(enabled, tty_period_s, log_period_s), text_(std::move(text)) {
  if (!line_.enabled()) return;
  const auto period = std::chrono::duration<double>(line_.tty() ? tty_period_s : log_period_s);
  thread_ = std::thread([this, period] {
    std::unique_lock<std::mutex> lk(mu_);
    while (!cv_.wait_for(lk, period, [this] { return done_; })) line_.print(text_());
  });
}

PeriodicProgress::~PeriodicProgress() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> g(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  line_.finish();
}

}  // namespace ioprobe
