// Writing a small file so that it is either absent or complete under its final name.
#pragma once

#include <string>

namespace ioprobe {

/// Writes `text` to `path` via "<path>.ioprobe-tmp": write, fsync, rename. On failure the
/// temporary file is removed and nothing appears under `path`. Throws IoError (with `hint`
/// on the create step) naming the failing operation and path.
void write_file_atomically(const std::string& path, const std::string& text, const std::string& hint = "");

/// Preflight for an output file named by option `option` (e.g. "--json"): `path` must not be a
/// directory and its directory must accept a new file (a probe file is created and removed).
/// Throws UsageError (exit 2) naming the option, the path and the reason, before any work is done.
void check_output_path(const std::string& path, const std::string& option);

}  // namespace ioprobe
