#include "checkpoint/tensor_data.hpp"

#include "core/rng.hpp"

#include <array>
#include <cmath>
#include <cstring>

namespace ioprobe::checkpoint {

double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double lo = 0.02425, hi = 1 - lo;
  if (p < lo) {
    double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > hi) {
    double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

namespace {

struct Tables {
  std::array<uint16_t, 65536> bf16_w;  // N(0, 0.02) as bf16
  std::array<uint32_t, 65536> f32_w;   // N(0, 0.02)
  std::array<uint32_t, 65536> f32_m;   // N(0, 1e-3)
  std::array<uint32_t, 65536> f32_v;   // (N(0, 1e-3))^2
  Tables() {
    for (int i = 0; i < 65536; ++i) {
      double z = normal_quantile((i + 0.5) / 65536.0);
      auto bits = [](float f) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return u;
      };
      uint32_t w = bits(static_cast<float>(0.02 * z));
      bf16_w[i] = static_cast<uint16_t>((w + 0x7FFF + ((w >> 16) & 1)) >> 16);  // round to nearest even
      f32_w[i] = w;
      f32_m[i] = bits(static_cast<float>(1e-3 * z));
      double g = 1e-3 * z;
      f32_v[i] = bits(static_cast<float>(g * g));
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

void generate_tensor_bytes(TensorKind kind, uint64_t seed, uint8_t* dst, size_t len) {
  const Tables& t = tables();
  Xoshiro256 rng(seed * 0x2545F4914F6CDD1DULL + static_cast<uint64_t>(kind) + 1);
  size_t i = 0;
  if (kind == TensorKind::kWeightsBf16) {
    for (; i + 8 <= len; i += 8) {
      uint64_t r = rng.next();
      uint64_t v = uint64_t{t.bf16_w[r & 0xFFFF]} | uint64_t{t.bf16_w[(r >> 16) & 0xFFFF]} << 16 |
                   uint64_t{t.bf16_w[(r >> 32) & 0xFFFF]} << 32 | uint64_t{t.bf16_w[r >> 48]} << 48;
      std::memcpy(dst + i, &v, 8);
    }
  } else {
    const auto& tab = kind == TensorKind::kMasterFp32 ? t.f32_w : kind == TensorKind::kAdamM ? t.f32_m : t.f32_v;
    for (; i + 8 <= len; i += 8) {
      uint64_t r = rng.next(), r2 = rng.next();
      uint32_t a = (tab[r & 0xFFFF] & 0xFFFF0000u) | static_cast<uint32_t>((r >> 16) & 0xFFFF);
      uint32_t b = (tab[(r >> 32) & 0xFFFF] & 0xFFFF0000u) | static_cast<uint32_t>(r2 & 0xFFFF);
      // Values whose table entry has fewer than 16 significant low bits keep the table's sign and
      // exponent; the random low half only moves them within one bf16 step, as real fp32 does.
      uint64_t v = uint64_t{a} | uint64_t{b} << 32;
      std::memcpy(dst + i, &v, 8);
    }
  }
  if (i < len) {
    uint8_t tail[8];
    generate_tensor_bytes(kind, seed ^ 0x5bd1e995ULL, tail, 8);
    std::memcpy(dst + i, tail, len - i);
  }
}

}  // namespace ioprobe::checkpoint
