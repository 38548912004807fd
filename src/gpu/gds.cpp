#include "gpu/gds.hpp"

namespace ioprobe {

GdsAvailability gds_availability() {
  GdsAvailability g;
#if IOPROBE_HAVE_CUDA
  g.built_cuda = true;
#endif
#if IOPROBE_HAVE_CUFILE
  g.built_cufile = true;
#endif
  // What a user can act on first: no build of this version reads through cuFile, so installing
  // GDS and rebuilding would only move the refusal. What this build lacks is said after it.
  g.missing = "this version of ioprobe has no cuFile (GPUDirect Storage) reader yet, in any build: measure the "
              "bounce-buffer path with --h2d cuda, and GDS itself with NVIDIA's gdsio";
  if (!g.built_cuda)
    g.missing += " (this build was also built without CUDA: CMake found no CUDA toolkit, or -DIOPROBE_CUDA=OFF)";
  else if (!g.built_cufile)
    g.missing += " (this build also found no libcufile / cufile.h, NVIDIA's GDS package, at build time)";
  return g;
}

}  // namespace ioprobe
