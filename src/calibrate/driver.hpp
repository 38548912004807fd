// Running python/ioprobe_calibrate.py (the Python side of `ioprobe calibrate`) under the user's
// Python: finding the script and an interpreter that imports torch, and collecting its JSON output.
#pragma once

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

namespace ioprobe {

/// The driver script: $IOPROBE_PYTHON_DIR, then <exe dir>/../share/ioprobe/python (installed),
/// <exe dir>/../python (a build directory inside the source tree), then the source tree this
/// binary was built from. Throws Error listing the places looked at when none holds it.
std::string find_calibration_driver();

/// Exit status the driver uses, between ioprobe and the script only, for "this interpreter cannot
/// import torch" (so that the next candidate interpreter is tried).
inline constexpr int kDriverNoTorch = 3;

/// The signal that makes the driver and its DataLoader workers write every thread's Python stack
/// to stderr (python/ioprobe_progress.py registers faulthandler for it).
inline constexpr int kStackDumpSignal = SIGUSR1;

/// Exit status of `ioprobe calibrate` when --timeout expired (as timeout(1)'s).
inline constexpr int kExitCalibrationTimeout = 124;

/// How a driver run is watched: its time limit and how the user's stdout is shown.
struct DriverWatch {
  double timeout_s = 0;  // the run's wall-clock limit, s; 0: none
  // Each line the driver's processes print on stdout (the user's code: the driver's result goes
  // to a file) is shown on stderr after this mark, the first `stdout_lines_shown` of them; the
  // rest are counted. An empty mark: stdout is collected, not shown (a driver that prints its
  // result there).
  std::string stdout_mark;
  uint64_t stdout_lines_shown = 20;
  // The driver's own lines on stderr start with this; the last one is the step that was running.
  std::string step_prefix = "ioprobe calibrate: [";
};

struct DriverRun {
  int exit_code = 0;        // the script's exit status; 128+N when killed by signal N
  int signal = 0;           // N when the interpreter was killed by signal N, else 0
  std::string out;          // its stdout, the last 64 KiB (its result when it prints it there)
  uint64_t out_bytes = 0;   // bytes it wrote on stdout
  uint64_t out_lines = 0;   // lines it wrote on stdout (a last line without newline counted)
  bool out_blank = true;    // nothing but white space on stdout
  uint64_t err_bytes = 0;   // bytes it wrote on stderr (passed through to ioprobe's stderr)
  bool forwarded = false;   // ioprobe was interrupted (core/interrupt.hpp) and sent the signal on
  bool timed_out = false;   // DriverWatch::timeout_s expired: its stacks were shown, its processes killed
  double elapsed_s = 0;     // how long it ran, s
  std::string last_step;    // the driver's last own line on stderr, without DriverWatch::step_prefix's "ioprobe
                            // calibrate: " (the step that was running), or "" when it printed none
  std::vector<int> dumped;  // the processes asked for their stacks at the timeout: the driver, then its descendants
  bool silent() const { return err_bytes == 0 && out_blank; }
};

/// Runs `python driver args...` with stdout captured and stderr passed through (the script's
/// progress lines and error messages reach the user as they are, and are counted). When ioprobe
/// is interrupted (SIGINT / SIGTERM, core/interrupt.hpp) while it runs, the signal is sent on to
/// the interpreter once (a Ctrl-C on the terminal reaches it too; the driver ends quietly on the
/// first). When `watch.timeout_s` passes first, each of its processes (the driver, then its
/// descendants: the DataLoader workers) is sent kStackDumpSignal in turn under a line naming it,
/// their stacks passed through, and then all are killed (SIGKILL): timed_out. Throws UsageError
/// when the interpreter cannot be started (naming it).
DriverRun run_driver(const std::string& python, const std::string& driver, const std::vector<std::string>& args,
                     const DriverWatch& watch = {});

/// Why a driver run that did not succeed failed, in one line for the user: the interpreter, its
/// exit status or signal (with its name), whether it printed anything, and what to do (a silent
/// exit: check that PY is a Python 3 with torch; SIGKILL: the OOM killer, dmesg). Empty when `r`
/// exited 0.
std::string driver_failure_text(const std::string& python, const std::string& driver, const DriverRun& r);

/// Whether a failed run is the user's input (exit 2): an interpreter that exited non-zero without
/// a word is not a Python that ran the driver (`--python /bin/false`). A signal is a failure (1).
inline bool driver_failure_is_usage(const DriverRun& r) { return r.signal == 0 && r.exit_code != 0 && r.silent(); }

/// Interpreters to try, in order: `given` alone when not empty; else "python3" on $PATH (the
/// user's environment, e.g. a venv), then /usr/bin/python3 (Debian's python3-torch), without
/// duplicates (resolved paths compared).
std::vector<std::string> python_candidates(const std::string& given);

}  // namespace ioprobe
