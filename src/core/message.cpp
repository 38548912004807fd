#include "core/message.hpp"

#include <unistd.h>

namespace ioprobe {

namespace {
std::string& prefix_storage() {
  static std::string prefix = "ioprobe: ";
  return prefix;
}
}  // namespace

void set_message_command(const std::string& command) {
  prefix_storage() = command.empty() ? "ioprobe: " : "ioprobe " + command + ": ";
}

const std::string& message_prefix() { return prefix_storage(); }

void message(const std::string& text) {
  const std::string line = message_prefix() + text + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void warning(const std::string& text) { message("warning: " + text); }

void error_message(const std::string& text) { message("error: " + text); }

}  // namespace ioprobe
