#include "report/error_text.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "engine/engine_choice.hpp"

namespace ioprobe {

std::string error_text(const ErrorRecord& e) {
  std::string s = error_line(e);
  if (e.count > 1) s += fmt::format(" ({} times)", e.count);
  return s;
}

std::string error_hint(const ErrorRecord& e) { return io_uring_canceled_hint(e.err); }

std::string failure_lines(const std::string& label, const ErrorRecord& e, const std::string& indent) {
  std::string out = label + error_text(e) + "\n";
  const std::string h = error_hint(e);
  if (!h.empty()) out += indent + h + "\n";
  return out;
}

std::string error_list_text(const std::vector<ErrorRecord>& errors, const std::string& indent) {
  std::string out;
  std::vector<std::string> hints;
  for (const ErrorRecord& e : errors) {
    out += indent + error_text(e) + "\n";
    const std::string h = error_hint(e);
    bool seen = h.empty();
    for (const auto& x : hints) seen = seen || x == h;
    if (!seen) hints.push_back(h);
  }
  for (const auto& h : hints) out += indent + h + "\n";
  return out;
}

}  // namespace ioprobe
