// Realistic tensor bytes for synthetic checkpoints, so that zstd's ratio and speed match real
// training state (ZipNN, arXiv 2411.05239, on bf16 and fp32 models): never random bytes (zstd stores them raw, ~10x
// faster than float data) and never constants (absurd ratios).
//
//   weights (bf16)  ~ N(0, 0.02)          plain zstd -1: about 1.27-1.28x
//   master  (fp32)  ~ N(0, 0.02)          about 1.08x
//   adam_m  (fp32)  ~ N(0, 1e-3)          about 1.08x
//   adam_v  (fp32)  = g^2, g ~ N(0, 1e-3) about 1.08x
//
// Values come from a 65,536-entry table of normal quantiles indexed by 16 random bits
// (xoshiro256**); fp32 values get 16 further random low mantissa bits, as real fp32 data has.
// Deterministic: the same (kind, seed) gives the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "checkpoint/state_spec.hpp"

namespace ioprobe::checkpoint {

/// Fills `len` bytes of `dst` with little-endian elements of `kind` (a partial last element
/// gets its low bytes). Throughput roughly 1-2 GB/s per core.
void generate_tensor_bytes(TensorKind kind, uint64_t seed, uint8_t* dst, size_t len);

/// Standard normal quantile (inverse CDF) for p in (0, 1); Acklam's rational approximation
/// (relative error < 1.15e-9).
double normal_quantile(double p);

}  // namespace ioprobe::checkpoint
