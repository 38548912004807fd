// Listing of sysfs (or fixture) directories, shared by the topology readers.
#pragma once

#include <string>
#include <vector>

namespace ioprobe {

/// Entry names of `dir` except "." and "..", sorted; empty when the directory cannot be read.
std::vector<std::string> list_dir(const std::string& dir);

}  // namespace ioprobe
