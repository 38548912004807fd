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
  if (!g.built_cuda)
    g.missing = "this ioprobe was built without CUDA (CMake found no CUDA toolkit, or -DIOPROBE_CUDA=OFF): install "
                "the CUDA toolkit (e.g. under /usr/local/cuda) and rebuild";
  else if (!g.built_cufile)
    g.missing = "libcufile (GPUDirect Storage) was not found at build time: the CUDA toolkit here has no libcufile.so "
                "/ cufile.h; install NVIDIA's GDS package (nvidia-gds, or libcufile-dev for your CUDA version) and "
                "rebuild";
  else
    g.missing = "this version of ioprobe has no cuFile reader yet (libcufile was found at build time): measure the "
                "bounce-buffer path with --h2d cuda, and GDS itself with NVIDIA's gdsio";
  return g;
}

}  // namespace ioprobe
