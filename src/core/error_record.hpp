// A failure kept as a value inside a result: the loader's per-read errors, raw's first error.
//
// Measuring code records what failed (errno, operation, path) and never formats it; report/
// turns a record into text (report/error_text.hpp) and chooses the hint from the errno and the
// operation, never by reading text back. Identical failures (the same file failing epoch after
// epoch) fold into one record with a count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// One failure, or `count` identical ones.
struct ErrorRecord {
  int err = 0;         // positive errno; 0 when no system call failed (`detail` says what happened)
  std::string op;      // what was attempted: "open", "read", "decode (libjpeg-turbo)", "read of 4096 B at offset 8192"
  std::string path;    // the file it was attempted on, raw bytes (report/ escapes them); "" none
  std::string detail;  // why, when err is 0 ("short transfer of 12 B", the decoder's message); "" none
  uint64_t count = 1;  // identical failures folded into this record

  /// Same failure: err, op, path and detail equal (count ignored).
  bool same_failure(const ErrorRecord& o) const {
    return err == o.err && op == o.op && path == o.path && detail == o.detail;
  }
  /// True for a default-constructed record (nothing failed).
  bool empty() const { return err == 0 && op.empty() && path.empty() && detail.empty(); }
};

/// The record's one line, the same form as IoError's message: "<op> <path>: <strerror> (<ERRNO>)",
/// or "<op> <path>: <detail>" when err is 0; the path escaped (core/text.hpp escape_bytes), the
/// count not included. For exception messages at boundaries; reports add the count and the hint
/// (report/error_text.hpp).
std::string error_line(const ErrorRecord& e);

/// Adds `e` to `list`: the count of an identical record grows by e.count; otherwise `e` is
/// appended while `list` holds fewer than `max_records` records, and dropped after that (the
/// caller counts every failure separately).
void add_error(std::vector<ErrorRecord>& list, const ErrorRecord& e, size_t max_records);

/// How many distinct files a run's failures hit, from its kept records (`list`, as add_error
/// keeps them) and its count of every failure (`failures`). files: distinct non-empty paths
/// among the records; complete: the records hold every failure (their counts sum to
/// `failures`), so `files` is exact; false: later distinct failures were dropped and `files` is
/// a lower bound ("at least").
struct ErrorSpread {
  uint64_t files = 0;
  bool complete = true;
};
ErrorSpread error_spread(const std::vector<ErrorRecord>& list, uint64_t failures);

/// "24 failed reads of 1 file", "1 failed read of at least 10 files" (spread not complete),
/// "3 failed reads" (no record names a path). For report lines and verdicts.
std::string failed_reads_text(uint64_t failures, const ErrorSpread& spread);

/// The record's JSON object (results.error_details[], raw.results.first_error_detail):
/// {errno (0: none), errno_name ("EIO", "" for 0), op, path (escaped, core/text.hpp escape_bytes),
/// detail, count, text (error_line)}.
nlohmann::json error_record_json(const ErrorRecord& e);

/// A record from its JSON object (errno_name and text are not read). Throws UsageError naming
/// `where` and the field when one is missing or mistyped.
ErrorRecord error_record_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace ioprobe
