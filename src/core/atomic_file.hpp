// Writing a small file so that it is either absent or complete under its final name.
#pragma once

#include <string>

namespace ioprobe {

/// Writes `text` to `path` via "<path>.ioprobe-tmp": write, fsync, rename. On failure the
/// temporary file is removed and nothing appears under `path`. Throws IoError (with `hint`
/// on the create step) naming the failing operation and path.
void write_file_atomically(const std::string& path, const std::string& text, const std::string& hint = "");

}  // namespace ioprobe
