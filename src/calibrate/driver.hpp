// Running python/ioprobe_calibrate.py (the Python side of `ioprobe calibrate`) under the user's
// Python: finding the script and an interpreter that imports torch, and collecting its JSON output.
#pragma once

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

struct DriverRun {
  int exit_code = 0;       // the script's exit status; 128+N when killed by signal N
  int signal = 0;          // N when the interpreter was killed by signal N, else 0
  std::string out;         // its stdout (one JSON object when exit_code is 0)
  uint64_t err_bytes = 0;  // bytes it wrote on stderr (passed through to ioprobe's stderr)
  bool forwarded = false;  // ioprobe was interrupted (core/interrupt.hpp) and sent the signal on
  bool silent() const { return err_bytes == 0 && out.find_first_not_of(" \t\r\n") == std::string::npos; }
};

/// Runs `python driver args...` with stdout captured and stderr passed through (the script's
/// progress lines and error messages reach the user as they are, and are counted). When ioprobe
/// is interrupted (SIGINT / SIGTERM, core/interrupt.hpp) while it runs, the signal is sent on to
/// the interpreter once (a Ctrl-C on the terminal reaches it too; the driver ends quietly on the
/// first). Throws UsageError when the interpreter cannot be started (naming it).
DriverRun run_driver(const std::string& python, const std::string& driver, const std::vector<std::string>& args);

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
