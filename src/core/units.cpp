#include "core/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/value_range.hpp"

namespace ioprobe {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "1.5GiB" into 1.5 and "gib"; an exponent ("1e3", "2.5E-2") is part of the number.
enum class Number { ok, none, out_of_range };
Number split_number(std::string_view s, double& value, std::string& suffix) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == '_')) ++i;
  auto digit_at = [&](size_t k) { return k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])); };
  if (i > 0 && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t k = i + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    if (digit_at(k)) {
      while (digit_at(k)) ++k;
      i = k;
    }
  }
  std::string digits;
  for (char c : s.substr(0, i))
    if (c != '_') digits += c;
  if (digits.empty() || !(std::isdigit(static_cast<unsigned char>(digits[0])) || digits[0] == '.')) return Number::none;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range && ptr == digits.data() + digits.size()) return Number::out_of_range;
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return Number::none;
  suffix = lower(trim(s.substr(i)));
  return Number::ok;
}

// Whether the number at the start of `s` has an exponent ("1e3", "2.5E-2KB"), as split_number reads it.
bool has_exponent(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == '_')) ++i;
  if (i == 0 || i + 1 >= s.size() || (s[i] != 'e' && s[i] != 'E')) return false;
  size_t k = i + 1;
  if (s[k] == '+' || s[k] == '-') ++k;
  return k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]));
}

// "0x10", "0X1p3", "0b101", "0o17": a C or Python literal in another base. Every parser here reads
// decimal only, so such a value is refused by name rather than read as its first digit or as a
// unit ("0x10" would be 0 with the unknown unit "x10").
void refuse_other_base(std::string_view s, std::string_view text, std::string_view what) {
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
  if (s.size() < 2 || s[0] != '0') return;
  const char b = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
  if (b != 'x' && b != 'b' && b != 'o') return;
  // "0b" alone is zero bytes ("0B"): only a digit after the prefix makes it a literal in another base.
  if (s.size() < 3 || !std::isxdigit(static_cast<unsigned char>(s[2]))) return;
  throw UsageError(fmt::format("{}: '{}' is written in base {}; give the value in decimal digits", what, text,
                               b == 'x'   ? 16
                               : b == 'b' ? 2
                                          : 8));
}

}  // namespace

double parse_decimal(std::string_view text, std::string_view what) {
  const std::string_view s = trim(text);
  refuse_other_base(s, text, what);
  // from_chars alone would take "inf" and "nan"; a number starts with a digit or '.'.
  const bool starts = !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.');
  double v = 0;
  auto [ptr, ec] = starts ? std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general)
                          : std::from_chars_result{s.data(), std::errc::invalid_argument};
  if (ec == std::errc::result_out_of_range && ptr == s.data() + s.size())
    throw ValueOutOfRange(fmt::format("{}: '{}' is out of range", what, text));
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v))
    throw UsageError(fmt::format("{}: '{}' is not a decimal number (digits, an optional fraction and exponent, as in "
                                 "12, 0.5 or 8e9)",
                                 what, text));
  return v;
}

uint64_t parse_size(std::string_view text, std::string_view what) {
  std::string_view s = trim(text);
  refuse_other_base(s, text, what);
  // The accepted forms, for every refusal below.
  constexpr const char* kForms =
      "a size is a whole number of bytes or a number with a unit, e.g. 4096, 4k, 115KB, 1MiB, 1.5GiB";
  // Sizes are written as people write sizes: "1e3" (a float's notation) is refused, not read as 1000 B.
  if (has_exponent(s))
    throw UsageError(fmt::format("{}: '{}' has an exponent, which a size does not take; {}", what, text, kForms));
  double v = 0;
  std::string suf;
  Number n = s.empty() || s.front() == '-' ? Number::none : split_number(s, v, suf);
  if (n == Number::out_of_range) throw ValueOutOfRange(fmt::format("{}: '{}' is too large", what, text));
  if (n != Number::ok) throw UsageError(fmt::format("{}: '{}' is not a size; {}", what, text, kForms));

  double mult = 0;
  if (suf.empty() || suf == "b") mult = 1;
  else if (suf == "k" || suf == "kib") mult = 1024.0;
  else if (suf == "kb") mult = 1e3;
  else if (suf == "m" || suf == "mib") mult = 1048576.0;
  else if (suf == "mb") mult = 1e6;
  else if (suf == "g" || suf == "gib") mult = 1073741824.0;
  else if (suf == "gb") mult = 1e9;
  else if (suf == "t" || suf == "tib") mult = 1099511627776.0;
  else if (suf == "tb") mult = 1e12;
  else if (suf == "p" || suf == "pib") mult = 1125899906842624.0;
  else if (suf == "pb") mult = 1e15;
  else
    throw UsageError(fmt::format(
        "{}: unknown size unit in '{}'; use B, KB, MB, GB, TB, PB (10^3 steps) or KiB, MiB, GiB, TiB, PiB (2^10 steps)",
        what, text));
  double bytes = v * mult;
  if (!std::isfinite(bytes) || bytes > 9.0e18) throw ValueOutOfRange(fmt::format("{}: '{}' is too large", what, text));
  double rounded = std::round(bytes);
  if (std::fabs(rounded - bytes) > 1e-6 * std::max(1.0, bytes))
    throw UsageError(fmt::format("{}: '{}' is not a whole number of bytes; {}", what, text, kForms));
  return static_cast<uint64_t>(rounded);
}

double parse_duration(std::string_view text, std::string_view what) {
  std::string_view s = trim(text);
  refuse_other_base(s, text, what);
  double v = 0;
  std::string suf;
  Number n = s.empty() || s.front() == '-' ? Number::none : split_number(s, v, suf);
  if (n == Number::out_of_range)
    throw ValueOutOfRange(fmt::format("{}: '{}' is out of range (at most 365 days)", what, text));
  if (n != Number::ok)
    throw UsageError(fmt::format("{}: '{}' is not a duration; use e.g. 30s, 500ms, 10m, 1h", what, text));
  double mult = 0;
  if (suf.empty() || suf == "s" || suf == "sec") mult = 1;
  else if (suf == "ms") mult = 1e-3;
  else if (suf == "us") mult = 1e-6;
  else if (suf == "m" || suf == "min") mult = 60;
  else if (suf == "h") mult = 3600;
  else throw UsageError(fmt::format("{}: unknown time unit in '{}'; use us, ms, s, m or h", what, text));
  double secs = v * mult;
  if (!std::isfinite(secs) || secs > 365.0 * 86400)
    throw ValueOutOfRange(fmt::format("{}: '{}' is out of range (at most 365 days)", what, text));
  return secs;
}

uint64_t parse_count(std::string_view text, std::string_view what) {
  std::string_view s = trim(text);
  refuse_other_base(s, text, what);
  std::string digits;
  // '_' or ',' may group thousands ("1,281,167", "1_281_167"): one kind per number, a first group
  // of 1-3 digits and then groups of exactly 3. Anything else ("1,2") is refused, not read as 12.
  char sep = 0;
  size_t group = 0, groups = 0;
  bool bad_group = false;
  for (char c : s) {
    if (c == '_' || c == ',') {
      if ((sep && c != sep) || group == 0 || (groups > 0 && group != 3) || group > 3) bad_group = true;
      sep = c;
      ++groups;
      group = 0;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c)))
      throw UsageError(fmt::format("{}: '{}' is not a non-negative whole number", what, text));
    digits += c;
    ++group;
  }
  if (sep && group != 3) bad_group = true;
  if (bad_group)
    throw UsageError(fmt::format("{}: '{}' is not one whole number ('{}' may only group thousands, as in 1{}000); "
                                 "give one value",
                                 what, text, sep, sep));
  if (digits.empty()) throw UsageError(fmt::format("{}: empty value; give a whole number", what));
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size())
    throw ValueOutOfRange(fmt::format("{}: '{}' is out of range", what, text));
  return v;
}

std::string format_count(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  int k = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it, ++k) {
    if (k && k % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
  }
  return out;
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.2f} {} ({} B)", v, units[u], format_count(bytes));
}

std::string format_rate(double bytes_per_s) {
  return fmt::format("{:.2f} MB/s ({:.2f} MiB/s)", bytes_per_s / kMB, bytes_per_s / kMiB);
}

std::string format_ns(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} µs", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
}

std::string format_seconds(double s) {
  if (s < 60) return fmt::format("{:.2f} s", s);
  int m = static_cast<int>(s / 60);
  return fmt::format("{}m {:04.1f}s", m, s - 60.0 * m);
}

}  // namespace ioprobe
