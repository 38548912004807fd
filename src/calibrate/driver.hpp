// Running python/ioprobe_calibrate.py (the Python side of `ioprobe calibrate`) under the user's
// Python: finding the script and an interpreter that imports torch, and collecting its JSON output.
#pragma once

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
  int exit_code = 0;  // the script's exit status; 128+N when killed by signal N
  std::string out;    // its stdout (one JSON object when exit_code is 0)
};

/// Runs `python driver args...` with stdout captured and stderr passed through (the script's
/// progress lines and error messages reach the user as they are). Throws Error when the
/// interpreter cannot be started (naming it).
DriverRun run_driver(const std::string& python, const std::string& driver, const std::vector<std::string>& args);

/// Interpreters to try, in order: `given` alone when not empty; else "python3" on $PATH (the
/// user's environment, e.g. a venv), then /usr/bin/python3 (Debian's python3-torch), without
/// duplicates (resolved paths compared).
std::vector<std::string> python_candidates(const std::string& given);

}  // namespace ioprobe
