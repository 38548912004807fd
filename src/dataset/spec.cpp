#include "dataset/spec.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe {

const char* size_dist_name(SizeDist d) {
  switch (d) {
    case SizeDist::kFixed: return "fixed";
    case SizeDist::kNormal: return "normal";
    case SizeDist::kLognormal: return "lognormal";
  }
  return "?";
}

SizeDist parse_size_dist(const std::string& s) {
  if (s == "fixed") return SizeDist::kFixed;
  if (s == "normal") return SizeDist::kNormal;
  if (s == "lognormal") return SizeDist::kLognormal;
  throw UsageError(fmt::format("--file-size-dist: '{}' is not one of: fixed, normal, lognormal", s));
}

nlohmann::json spec_identity(const DatasetSpec& s) {
  return {{"generator", 1},          {"files", s.files},         {"dirs", s.dirs},
          {"size_dist", size_dist_name(s.dist)}, {"size_mean_bytes", s.size_mean},
          {"size_stdev_bytes", s.size_stdev},    {"size_min_bytes", s.size_min},
          {"size_max_bytes", s.size_max},        {"seed", s.seed}};
}

std::vector<uint64_t> draw_file_sizes(const DatasetSpec& s) {
  std::vector<uint64_t> sizes(s.files);
  std::mt19937_64 rng(s.seed);
  // Box-Muller on our own uniform draws: std::normal_distribution's output differs between
  // standard libraries, and the sizes must not change with the toolchain.
  auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0); };
  auto gauss = [&] { return std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * M_PI * uniform()); };
  const double mean = static_cast<double>(s.size_mean), sd = static_cast<double>(s.size_stdev);
  const double sigma2 = mean > 0 ? std::log(1.0 + (sd * sd) / (mean * mean)) : 0.0;
  const double mu = mean > 0 ? std::log(mean) - sigma2 / 2.0 : 0.0;
  for (auto& size : sizes) {
    double v = mean;
    if (s.dist == SizeDist::kNormal) v = mean + sd * gauss();
    if (s.dist == SizeDist::kLognormal && mean > 0) v = std::exp(mu + std::sqrt(sigma2) * gauss());
    v = std::clamp(std::round(v), static_cast<double>(s.size_min), static_cast<double>(s.size_max));
    size = static_cast<uint64_t>(v);
  }
  return sizes;
}

std::string generated_file_path(const DatasetSpec& s, uint64_t i) {
  return fmt::format("c{:04d}/{:08d}.bin", i % std::max<uint64_t>(1, s.dirs), i);
}

}  // namespace ioprobe
