#include "dataset/spec.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe {

const char* size_dist_name(SizeDist d) {
  switch (d) {
    case SizeDist::kFixed:
      return "fixed";
    case SizeDist::kNormal:
      return "normal";
    case SizeDist::kLognormal:
      return "lognormal";
  }
  return "?";
}

SizeDist parse_size_dist(const std::string& s) {
  if (s == "fixed") return SizeDist::kFixed;
  if (s == "normal") return SizeDist::kNormal;
  if (s == "lognormal") return SizeDist::kLognormal;
  throw UsageError(fmt::format("size distribution '{}' is not one of: fixed, normal, lognormal", s));
}

const char* content_kind_name(ContentKind c) { return c == ContentKind::kJpeg ? "jpeg" : "synthetic"; }

ContentKind parse_content_kind(const std::string& s) {
  if (s == "synthetic") return ContentKind::kSynthetic;
  if (s == "jpeg") return ContentKind::kJpeg;
  throw UsageError(fmt::format("content '{}' is not one of: synthetic, jpeg", s));
}

const char* dataset_kind_name(DatasetKind k) {
  switch (k) {
    case DatasetKind::kFiles:
      return "files";
    case DatasetKind::kSharded:
      return "sharded";
    case DatasetKind::kToken:
      return "token";
  }
  return "?";
}

DatasetKind parse_dataset_kind(const std::string& s) {
  if (s == "files") return DatasetKind::kFiles;
  if (s == "sharded") return DatasetKind::kSharded;
  if (s == "token") return DatasetKind::kToken;
  throw UsageError(fmt::format("dataset kind '{}' is not one of: files, sharded, token", s));
}

nlohmann::json spec_identity(const DatasetSpec& s) {
  // File-per-sample identities stay as they were, so existing datasets are reused as before.
  if (s.kind != DatasetKind::kFiles) {
    nlohmann::json j = spec_identity(DatasetSpec{.files = s.files,
                                                 .dirs = 1,
                                                 .dist = s.dist,
                                                 .size_mean = s.size_mean,
                                                 .size_stdev = s.size_stdev,
                                                 .size_min = s.size_min,
                                                 .size_max = s.size_max,
                                                 .seed = s.seed});
    j["kind"] = dataset_kind_name(s.kind);
    j["records_per_file"] = s.records_per_file;
    if (s.kind == DatasetKind::kToken) {
      j["seq_len"] = s.seq_len;
      j["token_bytes"] = s.token_bytes;
    }
    return j;
  }
  nlohmann::json j = {{"generator", 1},
                      {"files", s.files},
                      {"dirs", s.dirs},
                      {"size_dist", size_dist_name(s.dist)},
                      {"size_mean_bytes", s.size_mean},
                      {"size_stdev_bytes", s.size_stdev},
                      {"size_min_bytes", s.size_min},
                      {"size_max_bytes", s.size_max},
                      {"seed", s.seed}};
  if (s.content == ContentKind::kJpeg) {
    j["content"] = "jpeg";
    j["jpeg_generator"] = 1;  // dataset/jpeg_content.cpp's version: bump when its bytes change
  }
  return j;
}

SizeStream::SizeStream(const DatasetSpec& s)
    : rng_(s.seed), dist_(s.dist), mean_(static_cast<double>(s.size_mean)), sd_(static_cast<double>(s.size_stdev)),
      sigma2_(mean_ > 0 ? std::log(1.0 + (sd_ * sd_) / (mean_ * mean_)) : 0.0),
      mu_(mean_ > 0 ? std::log(mean_) - sigma2_ / 2.0 : 0.0), lo_(static_cast<double>(s.size_min)),
      hi_(static_cast<double>(s.size_max)) {
  if (s.kind == DatasetKind::kToken) {
    constant_ = true;
    constant_size_ = s.seq_len * s.token_bytes;
  } else if (s.dist == SizeDist::kFixed || (s.dist == SizeDist::kLognormal && mean_ <= 0)) {
    constant_ = true;
    constant_size_ = static_cast<uint64_t>(std::clamp(std::round(mean_), lo_, hi_));
  }
}

// Box-Muller on our own uniform draws: std::normal_distribution's output differs between
// standard libraries, and the sizes must not change with the toolchain.
double SizeStream::uniform() { return (static_cast<double>(rng_() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

double SizeStream::gauss() { return std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * M_PI * uniform()); }

uint64_t SizeStream::next() {
  if (constant_) return constant_size_;
  double v = mean_;
  if (dist_ == SizeDist::kNormal) v = mean_ + sd_ * gauss();
  if (dist_ == SizeDist::kLognormal && mean_ > 0) v = std::exp(mu_ + std::sqrt(sigma2_) * gauss());
  v = std::clamp(std::round(v), lo_, hi_);
  return static_cast<uint64_t>(v);
}

namespace {

std::vector<uint64_t> draw_sizes(const DatasetSpec& s, uint64_t n) {
  std::vector<uint64_t> sizes(n);
  SizeStream stream(s);
  for (auto& size : sizes) size = stream.next();
  return sizes;
}

}  // namespace

std::vector<uint64_t> draw_file_sizes(const DatasetSpec& s) { return draw_sizes(s, s.files); }

std::vector<uint64_t> draw_record_sizes(const DatasetSpec& s) {
  return draw_sizes(s, s.files * s.records_per_file);  // token records: SizeStream's constant size
}

std::string generated_file_path(const DatasetSpec& s, uint64_t i) {
  if (s.kind == DatasetKind::kSharded) return fmt::format("shard-{:06d}.rec", i);
  if (s.kind == DatasetKind::kToken) return fmt::format("tokens-{:03d}.bin", i);
  return fmt::format("c{:04d}/{:08d}.{}", i % std::max<uint64_t>(1, s.dirs), i,
                     s.content == ContentKind::kJpeg ? "JPEG" : "bin");
}

}  // namespace ioprobe
