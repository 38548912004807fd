// The calibration driver's two output pipes as ioprobe reads them (calibrate/driver.cpp's
// run_driver): stderr passed through and its last own line kept, stdout (the user's prints)
// shown marked or counted; and the processes under the driver, for its stacks at a timeout.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "calibrate/driver.hpp"

namespace ioprobe {

/// Reads the driver's stdout and stderr pipes (it owns and closes both fds) into a DriverRun as
/// DriverWatch says: stderr written through to ioprobe's stderr as it comes, byte for byte, its
/// lines starting with watch.step_prefix kept as last_step; stdout's last 64 KiB kept in out, and
/// its lines written to stderr after watch.stdout_mark (the first stdout_lines_shown of them).
class DriverStreams {
 public:
  DriverStreams(int out_fd, int err_fd, const DriverWatch& watch, DriverRun& run);
  ~DriverStreams();
  DriverStreams(const DriverStreams&) = delete;
  DriverStreams& operator=(const DriverStreams&) = delete;

  /// Whether a pipe is still open (the driver or a process it started may still write).
  bool open() const { return fds_[0] >= 0 || fds_[1] >= 0; }
  /// Waits up to `ms` milliseconds for output and handles what came; returns whether any did.
  bool pump(int ms);
  /// Handles the output that comes within `ms` ms, ending early after `quiet_ms` ms without any
  /// once something came (a stack dump written in one go).
  void drain(int ms, int quiet_ms);
  /// Closes the pipes, handling a last line without a newline on either.
  void finish();

 private:
  void on_out(const char* data, size_t n);
  void on_err(const char* data, size_t n);
  void out_line(const std::string& line);

  int fds_[2];
  const DriverWatch& watch_;
  DriverRun& run_;
  std::string out_part_, err_part_;  // the line being received on each
};

/// The processes below `root`: its children, theirs, and so on (from each /proc/PID/stat's parent
/// field), parents before their children; empty when /proc cannot be read.
std::vector<pid_t> descendant_processes(pid_t root);

}  // namespace ioprobe
