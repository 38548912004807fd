// Byte grouping of little-endian floats (ZipNN's method, zipnn/zipnn, arXiv 2411.05239): all the
// most significant bytes of a piece first, then the next ones, down to the least significant,
// so the low-entropy exponent bytes form one stream that zstd codes well. A partial last
// element is copied unchanged at the end. About +14% ratio on bf16, +10% on fp32.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ioprobe::checkpoint {

/// dst[0 .. len) = grouped form of src[0 .. len) for elements of `width` bytes (1, 2 or 4).
void group_bytes(const uint8_t* src, size_t len, uint32_t width, uint8_t* dst);

/// Inverse of group_bytes.
void ungroup_bytes(const uint8_t* src, size_t len, uint32_t width, uint8_t* dst);

}  // namespace ioprobe::checkpoint
