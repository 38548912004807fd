#include "gpu/cuda_copy.hpp"

#include <fmt/format.h>

#if IOPROBE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstring>
#endif

namespace ioprobe {

#if IOPROBE_HAVE_CUDA

namespace {

std::string cuda_error(const char* call, cudaError_t e) {
  return fmt::format("{}: {} ({})", call, cudaGetErrorString(e), cudaGetErrorName(e));
}

class CudaCopier final : public DeviceCopier {
 public:
  explicit CudaCopier(int device) : device_(device) {}
  ~CudaCopier() override {
    if (dev_) cudaFree(dev_);
    if (host_) cudaFreeHost(host_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  bool init() {
    if (cudaError_t e = cudaSetDevice(device_); e != cudaSuccess) return fail("cudaSetDevice", e);
    if (cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); e != cudaSuccess)
      return fail("cudaStreamCreateWithFlags", e);
    return true;
  }
  int64_t copy(uint64_t bytes) override {
    if (bytes == 0) return 0;
    if (bytes > cap_ && !grow(bytes)) return -1;
    const auto t0 = std::chrono::steady_clock::now();
    if (cudaError_t e = cudaMemcpyAsync(dev_, host_, bytes, cudaMemcpyHostToDevice, stream_); e != cudaSuccess) {
      fail("cudaMemcpyAsync", e);
      return -1;
    }
    if (cudaError_t e = cudaStreamSynchronize(stream_); e != cudaSuccess) {
      fail("cudaStreamSynchronize", e);
      return -1;
    }
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  }
  std::string error() const override { return error_; }
  int device() const override { return device_; }

 private:
  bool fail(const char* call, cudaError_t e) {
    error_ = cuda_error(call, e);
    return false;
  }
  bool grow(uint64_t bytes) {
    if (dev_) cudaFree(dev_);
    if (host_) cudaFreeHost(host_);
    dev_ = host_ = nullptr;
    cap_ = 0;
    cudaSetDevice(device_);
    // Portable and page-locked: the DMA engine reads it directly (what pin_memory=True gives).
    if (cudaError_t e = cudaHostAlloc(&host_, bytes, cudaHostAllocPortable); e != cudaSuccess)
      return fail("cudaHostAlloc", e);
    std::memset(host_, 0x5a, bytes);
    if (cudaError_t e = cudaMalloc(&dev_, bytes); e != cudaSuccess) return fail("cudaMalloc", e);
    cap_ = bytes;
    return true;
  }
  int device_;
  cudaStream_t stream_ = nullptr;
  void* host_ = nullptr;
  void* dev_ = nullptr;
  uint64_t cap_ = 0;
  std::string error_;
};

}  // namespace

CudaAvailability cuda_availability() {
  CudaAvailability a;
  a.built = true;
  cudaRuntimeGetVersion(&a.runtime_version);
  cudaDriverGetVersion(&a.driver_version);
  int n = 0;
  if (cudaError_t e = cudaGetDeviceCount(&n); e != cudaSuccess) {
    a.error = cuda_error("cudaGetDeviceCount", e);
    return a;
  }
  a.devices = n;
  if (n == 0) {
    a.error = "cudaGetDeviceCount: 0 devices";
    return a;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) a.device_name = p.name;
  return a;
}

std::unique_ptr<DeviceCopier> make_device_copier(int device, std::string* why) {
  auto c = std::make_unique<CudaCopier>(device);
  if (!c->init()) {
    if (why) *why = c->error();
    return nullptr;
  }
  return c;
}

#else  // built without CUDA

CudaAvailability cuda_availability() {
  CudaAvailability a;
  a.error = "this ioprobe was built without CUDA";
  return a;
}

std::unique_ptr<DeviceCopier> make_device_copier(int, std::string* why) {
  if (why) *why = "this ioprobe was built without CUDA";
  return nullptr;
}

#endif

}  // namespace ioprobe
