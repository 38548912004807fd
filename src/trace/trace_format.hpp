// Reading and writing the trace file (format described at the top of trace/trace.hpp).
//
// Ids: a "file" line's id must be the number of file lines before it (0, 1, 2, ...), and likewise
// for "stream" lines; a file or stream must be declared before an op or mark names it. The writer
// puts the header first, then every file, every stream, then each stream's ops and marks in time
// order, then the end line.
//
// Field defaults when a line omits them: "c" -1 (no thread CPU time), "f" -1 (not a data file),
// "off", "len", "ret", "err" 0, "call" "". On a read op "ret" is the bytes returned, or -1 when
// "err" is set; on the other kinds it is 0 or -1.
#pragma once

#include <string>

#include "trace/trace.hpp"

namespace ioprobe::trace {

/// The value of the header's "format" field.
inline constexpr const char* kFormatName = "ioprobe-trace";

/// Reads the trace at `path`. Throws UsageError (exit 2) naming the path and, where there is one,
/// the line number for: a file that cannot be opened or is empty, a first line that is not an
/// ioprobe trace header, a "format" other than kFormatName or a "version" other than
/// kFormatVersion, a line that is not a JSON object or lacks a required field or has a field of
/// the wrong type, an unknown line kind, op or mark name, a file or stream id out of order, an op
/// or mark naming an undeclared stream or file, a negative time or duration, an op (or mark)
/// starting before the previous op (mark) of its stream, a truncated file (no end line, or a
/// last line without its newline), lines after the end line, and an end line whose "events"
/// differs from the number of op and mark lines.
Trace read_trace(const std::string& path);

/// Writes `t` to `path` atomically (core/atomic_file.hpp: absent or complete under its final
/// name, never half-written). Paths and command words that are not valid UTF-8 are stored
/// escaped (core/text.hpp escape_bytes); read_trace restores them. Throws IoError when the file
/// cannot be written. Does not check whether `path` may be replaced: callers do (is_trace_file).
void write_trace(const Trace& t, const std::string& path);

/// The trace as the text write_trace writes (for tests and for callers that stream it elsewhere).
std::string format_trace(const Trace& t);

/// Whether the file at `path` starts with an ioprobe trace header line (any version): the only
/// existing files `ioprobe record --out` may replace. False when absent or unreadable.
bool is_trace_file(const std::string& path);

/// The first of STEM + ".jsonl", STEM + "-2.jsonl", STEM + "-3.jsonl", ... that names nothing
/// (lstat fails with ENOENT; a dangling link counts as taken), so a default trace name never
/// replaces an earlier file. Throws IoError when no name up to -9999 is free.
std::string unused_trace_name(const std::string& stem);

}  // namespace ioprobe::trace
