#include "core/text.hpp"

#include <fmt/format.h>

namespace ioprobe {

namespace {
// Length of the valid UTF-8 sequence at s[i], 0 if invalid (overlongs and surrogates rejected).
size_t utf8_len(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && b(i + 1) < 0xA0) return 0;
  if (c == 0xED && b(i + 1) > 0x9F) return 0;
  if (c == 0xF0 && b(i + 1) < 0x90) return 0;
  if (c == 0xF4 && b(i + 1) > 0x8F) return 0;
  return n;
}
}  // namespace

std::string escape_bytes(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size();) {
    if (raw[i] == '\\') {
      out += "\\\\";
      ++i;
      continue;
    }
    size_t n = utf8_len(raw, i);
    const auto c = static_cast<unsigned char>(raw[i]);
    if (n == 0 || c < 0x20 || c == 0x7F) {  // invalid UTF-8 or a control byte (CR, ESC, ...)
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(raw[i]));
      ++i;
    } else {
      out.append(raw.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string unescape_bytes(std::string_view s) {
  std::string out;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x' && hex(s[i + 2]) >= 0 && hex(s[i + 3]) >= 0) {
      out += static_cast<char>(hex(s[i + 2]) * 16 + hex(s[i + 3]));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string shell_quote(std::string_view arg) {
  std::string e = escape_bytes(arg);
  bool plain = !e.empty();
  for (char c : e)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/' || c == '=' ||
          c == ':' || c == ',' || c == '+' || c == '@'))
      plain = false;
  if (plain) return e;
  std::string out = "'";
  for (char c : e) {
    if (c == '\'') out += "'\\''";
    else if (c == '\n') out += "'$'\\n''";
    else out += c;
  }
  return out + "'";
}

std::string parent_directory(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace ioprobe
