#include "core/error.hpp"

#include <cstring>

#include <fmt/format.h>

namespace ioprobe {

namespace {
std::string build_message(int err, const std::string& op, const std::string& path, const std::string& hint) {
  std::string msg = fmt::format("{} {}: {}", op, path, errno_text(err));
  if (!hint.empty()) msg += "; " + hint;
  return msg;
}
}  // namespace

IoError::IoError(int err, std::string op, std::string path, const std::string& hint)
    : Error(build_message(err, op, path, hint), kExitFailure), err_(err), op_(std::move(op)), path_(std::move(path)) {}

std::string errno_name(int err) {
  // strerrorname_np is glibc >= 2.32 (Debian 12 has 2.36).
  const char* name = strerrorname_np(err);
  return name ? std::string(name) : fmt::format("E{}", err);
}

std::string errno_text(int err) { return fmt::format("{} ({})", std::strerror(err), errno_name(err)); }

}  // namespace ioprobe
