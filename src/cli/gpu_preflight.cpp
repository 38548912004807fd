#include "cli/gpu_preflight.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "gpu/cuda_copy.hpp"
#include "gpu/gds.hpp"

namespace ioprobe::cli {

int check_h2d(const std::string& value) {
  if (value == "none") return 0;
  const CudaAvailability a = cuda_availability();
  if (!a.built)
    throw UsageError(
        "--h2d cuda: this ioprobe was built without CUDA (CMake found no CUDA toolkit, or "
        "-DIOPROBE_CUDA=OFF); install the CUDA toolkit (e.g. under /usr/local/cuda), rebuild, or drop --h2d");
  if (a.devices <= 0)
    throw UsageError(fmt::format("--h2d cuda: no CUDA GPU is usable here ({}; CUDA runtime {}, driver {}); run on a "
                                 "host with an NVIDIA GPU and its driver loaded (nvidia-smi lists it), or drop --h2d",
                                 a.error, a.runtime_version,
                                 a.driver_version ? std::to_string(a.driver_version) : std::string("none")));
  return a.devices;
}

void refuse_gds() { throw UsageError(fmt::format("--engine gds: {}", gds_availability().missing)); }

}  // namespace ioprobe::cli
