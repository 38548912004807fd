// The GPU options' preflight: `--h2d cuda` and `--engine gds` are checked before any dataset is
// generated, and refused (UsageError, exit 2) with what is missing and what to do.
#pragma once

#include <string>

namespace ioprobe::cli {

/// `--h2d` value: "none" -> 0; "cuda" -> the number of CUDA devices. Throws UsageError naming
/// --h2d when the build lacks CUDA or no device answers (cudaGetDeviceCount failed or 0).
int check_h2d(const std::string& value);

/// `--engine gds`: always throws UsageError today, naming what is missing (CUDA in the build,
/// libcufile at build time, or ioprobe's cuFile reader).
[[noreturn]] void refuse_gds();

}  // namespace ioprobe::cli
