// Error types for ioprobe's boundaries (CLI, files, kernel interfaces).
//
// UsageError: the user's input is wrong (option value, preset name, path). Exit code 2.
// IoError:    an operation on a path failed; carries errno, the operation, the path and a hint.
//             Exit code 1.
// The hot path (engine/, loader/) never throws: it returns negative errno like liburing, and the
// caller turns the first few into IoError text for the report.
#pragma once

#include <stdexcept>
#include <string>

namespace ioprobe {

/// Process exit codes, documented in `ioprobe --help`.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,    // the run could not complete (I/O error at a boundary, resource limit)
  kExitUsage = 2,      // bad option, value, preset, or path given by the user
  kExitSigint = 130,   // interrupted by SIGINT; partial results were written
  kExitSigterm = 143,  // interrupted by SIGTERM; partial results were written
};

/// Base of all ioprobe errors: what() is one line meant for the user, exit_code() what main returns.
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, int exit_code) : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

/// Bad input from the user. The message names the value and says what to do.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message, kExitUsage) {}
};

/// A failed operation on a path: "<op> <path>: <strerror> (<ERRNO>); <hint>".
class IoError : public Error {
 public:
  IoError(int err, std::string op, std::string path, const std::string& hint = {});
  int err() const { return err_; }
  /// The operation that failed: "create", "open", "io_uring_queue_init"...
  const std::string& op() const { return op_; }
  const std::string& path() const { return path_; }

 private:
  int err_;
  std::string op_;
  std::string path_;
};

/// The symbolic name of an errno value ("ENOENT"), or "E<n>" when unknown.
std::string errno_name(int err);

/// "No such file or directory (ENOENT)".
std::string errno_text(int err);

}  // namespace ioprobe
