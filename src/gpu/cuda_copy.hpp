// Real host-to-device copies with the CUDA runtime (optional at build time, like MPI): the one
// place ioprobe calls cudart. Built with CUDA when CMake finds the toolkit (IOPROBE_CUDA, default
// ON); otherwise every function here reports that the build lacks CUDA and nothing is copied.
//
// What a copy measures: cudaMemcpyAsync from a page-locked host buffer (cudaHostAlloc) into
// device memory (cudaMalloc) on the rank's own stream, then cudaStreamSynchronize: the wall time
// the training loop waits for `batch.cuda(non_blocking=True)` before the step can use it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace ioprobe {

/// Whether real GPU copies can run here.
struct CudaAvailability {
  bool built = false;       // compiled against the CUDA runtime
  int devices = 0;          // cudaGetDeviceCount; 0 when it failed
  int runtime_version = 0;  // cudaRuntimeGetVersion (e.g. 13000)
  int driver_version = 0;   // cudaDriverGetVersion; 0: no driver
  std::string error;        // why not usable: "built without CUDA", "cudaGetDeviceCount: ...", ""
  std::string device_name;  // device 0's name, "" when none
  bool usable() const { return built && devices > 0; }
};

/// Probes the CUDA runtime once per call (cudaGetDeviceCount and friends). Never throws.
CudaAvailability cuda_availability();

/// One rank's copier: a stream on device `device`, a pinned host buffer and a device buffer that
/// grow to the largest batch. Not thread-safe; one per rank thread.
class DeviceCopier {
 public:
  virtual ~DeviceCopier() = default;
  /// Copies `bytes` host-to-device and waits for it. Returns the wall time in ns (>= 0), or a
  /// negative value on a CUDA error (error() then says which call failed). Does not throw.
  virtual int64_t copy(uint64_t bytes) = 0;
  virtual std::string error() const = 0;
  virtual int device() const = 0;
};

/// A copier on device `device` (a rank's index modulo the device count). Null, with `why` set,
/// when the build lacks CUDA or the stream cannot be created.
std::unique_ptr<DeviceCopier> make_device_copier(int device, std::string* why);

}  // namespace ioprobe
