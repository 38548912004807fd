// Text helpers for user-supplied bytes (paths) that may not be valid UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace ioprobe {

/// Makes arbitrary bytes safe for JSON and terminals, reversibly: valid UTF-8 passes unchanged,
/// each invalid byte and each control byte (0x00-0x1F and 0x7F: a carriage return, ESC, a
/// newline) becomes the four characters "\xHH" (upper-case hex), so a name cannot move the
/// cursor or inject terminal sequences, and a literal backslash becomes "\\".
/// unescape_bytes() restores the original bytes exactly.
std::string escape_bytes(std::string_view raw);

/// Inverse of escape_bytes().
std::string unescape_bytes(std::string_view s);

/// Shell-quotes one argument for display ('a b' -> "'a b'"), after escape_bytes().
std::string shell_quote(std::string_view arg);

/// The directory part of `path`, lexically: "a/b" -> "a", "/a" -> "/", "b" -> "." (the current
/// directory, where a relative file name lives).
std::string parent_directory(const std::string& path);

}  // namespace ioprobe
