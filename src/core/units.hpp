// Parsing and printing of sizes, durations and rates, with the units stated.
//
// Sizes: "4096", "4KiB" (2^10), "4KB" (10^3), "1.5GB", "110kB". Bare one-letter suffixes
// "4k", "1M", "2G", "1T" are binary (2^10, 2^20, ...), as in fio and dd; write "KB" for 10^3.
// Durations: "60" or "60s", "500ms", "10m", "1h", "1.5s".
// Rates printed: MB/s = 10^6 B/s, MiB/s = 2^20 B/s; both are always labelled.
// Numbers are decimal only: "0x10", "0b101", "inf", "nan", a sign or a space inside are refused
// (strtod would read "0x10B" as 16e9), naming the option and the value.
// Parse errors throw UsageError naming the option and the value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ioprobe {

/// Parses a plain decimal number: digits with an optional fraction and exponent ("12", "0.5",
/// ".5", "70e9"), surrounding spaces allowed; no sign, no hexadecimal/binary/octal prefix ("0x10"),
/// no inf/nan. Throws UsageError naming `what` and the value (ValueOutOfRange, a UsageError, when
/// it overflows a double).
double parse_decimal(std::string_view text, std::string_view what);

/// Parses a byte size; `what` names the option for the error message. Throws UsageError naming
/// the value and the accepted forms for anything else, an exponent ("1e3") and a fraction of a
/// byte ("1.5") included.
uint64_t parse_size(std::string_view text, std::string_view what);

/// Parses a duration into seconds (>= 0). Throws UsageError.
double parse_duration(std::string_view text, std::string_view what);

/// Parses a non-negative integer count ("20000", "20_000"). Throws UsageError.
uint64_t parse_count(std::string_view text, std::string_view what);

/// "1.50 GiB (1,610,612,736 B)"-style exact rendering: binary units with the byte count.
std::string format_bytes(uint64_t bytes);

/// "536.87 MB/s (512.00 MiB/s)": decimal and binary together.
std::string format_rate(double bytes_per_s);

/// "1,281,167": thousands separators.
std::string format_count(uint64_t n);

/// "12.3 µs", "4.56 ms", "1.23 s" from nanoseconds.
std::string format_ns(double ns);

/// "1m 02.3s" / "12.34 s" from seconds.
std::string format_seconds(double s);

constexpr double kMB = 1e6;
constexpr double kMiB = 1048576.0;

}  // namespace ioprobe
