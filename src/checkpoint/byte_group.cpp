#include "checkpoint/byte_group.hpp"

#include <cstring>

namespace ioprobe::checkpoint {

void group_bytes(const uint8_t* src, size_t len, uint32_t width, uint8_t* dst) {
  if (len == 0) return;
  if (width <= 1) {
    std::memcpy(dst, src, len);
    return;
  }
  size_t n = len / width;
  for (uint32_t s = 0; s < width; ++s) {
    const uint32_t b = width - 1 - s;  // most significant byte first
    uint8_t* out = dst + s * n;
    for (size_t i = 0; i < n; ++i) out[i] = src[i * width + b];
  }
  std::memcpy(dst + n * width, src + n * width, len - n * width);
}

void ungroup_bytes(const uint8_t* src, size_t len, uint32_t width, uint8_t* dst) {
  if (len == 0) return;
  if (width <= 1) {
    std::memcpy(dst, src, len);
    return;
  }
  size_t n = len / width;
  for (uint32_t s = 0; s < width; ++s) {
    const uint32_t b = width - 1 - s;
    const uint8_t* in = src + s * n;
    for (size_t i = 0; i < n; ++i) dst[i * width + b] = in[i];
  }
  std::memcpy(dst + n * width, src + n * width, len - n * width);
}

}  // namespace ioprobe::checkpoint
