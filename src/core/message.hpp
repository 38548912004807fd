// The lines ioprobe writes on stderr: each starts with one prefix per command,
// "ioprobe SUBCOMMAND: " ("ioprobe: " before a subcommand is known), then "error: " or "warning: "
// for those kinds, then the text. main.cpp names the subcommand once (set_message_command); every
// other part writes through message(), warning() and error_message() and never spells the prefix.
#pragma once

#include <string>

namespace ioprobe {

/// Names the subcommand ("run", "checkpoint", ...) whose messages follow; "" for none.
/// Call before any thread that writes messages starts.
void set_message_command(const std::string& command);

/// "ioprobe SUBCOMMAND: ", or "ioprobe: " while no subcommand is named.
const std::string& message_prefix();

/// Writes prefix + `text` + "\n" to stderr in one write(2), so that lines of threads and
/// processes sharing the terminal do not interleave. Errors writing are ignored.
void message(const std::string& text);
/// message("warning: " + text); a leading "SUBCOMMAND: " in `text` (an option parser's error names
/// the command it parsed for) is dropped, as the prefix says it.
void warning(const std::string& text);
/// message("error: " + text), `text` as for warning().
void error_message(const std::string& text);

}  // namespace ioprobe
