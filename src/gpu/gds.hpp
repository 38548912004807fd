// GPUDirect Storage (cuFile): whether this build and this host can read files straight into GPU
// memory. ioprobe's cuFile reader is not written yet; this tells `--engine gds` what is missing so
// it can refuse with the reason (and the build status is what a later reader will need).
#pragma once

#include <string>

namespace ioprobe {

struct GdsAvailability {
  bool built_cuda = false;    // compiled against the CUDA runtime (IOPROBE_CUDA and the toolkit found)
  bool built_cufile = false;  // libcufile and cufile.h were found at build time
  std::string missing;        // what is missing and what to do; "" never today (no reader yet)
};

/// What `--engine gds` lacks on this build. Never throws.
GdsAvailability gds_availability();

}  // namespace ioprobe
