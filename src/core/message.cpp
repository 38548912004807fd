#include "core/message.hpp"

#include <unistd.h>

#include "core/interrupt.hpp"

namespace ioprobe {

namespace {
std::string& prefix_storage() {
  static std::string prefix = "ioprobe: ";
  return prefix;
}
std::string& command_storage() {
  static std::string command;
  return command;
}
// `text` without a leading "SUBCOMMAND: " (an option parser's error names the command it parsed
// for), which the prefix already says.
std::string without_command(const std::string& text) {
  const std::string& c = command_storage();
  if (!c.empty() && text.size() > c.size() + 2 && text.compare(0, c.size(), c) == 0 &&
      text.compare(c.size(), 2, ": ") == 0)
    return text.substr(c.size() + 2);
  return text;
}
}  // namespace

void set_message_command(const std::string& command) {
  command_storage() = command;
  prefix_storage() = command.empty() ? "ioprobe: " : "ioprobe " + command + ": ";
  set_interrupt_prefix(prefix_storage());
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

void warning(const std::string& text) { message("warning: " + without_command(text)); }

void error_message(const std::string& text) { message("error: " + without_command(text)); }

}  // namespace ioprobe
