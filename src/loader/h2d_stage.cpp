#include "loader/h2d_stage.hpp"

#include <algorithm>

namespace ioprobe {

H2dStage::H2dStage(const LoaderConfig& cfg, uint32_t rank)
    : bytes_per_batch_(cfg.pin_bytes_per_batch), batch_size_(cfg.batch_size) {
  device_ = cfg.h2d_devices > 0 ? static_cast<int>(rank % static_cast<uint32_t>(cfg.h2d_devices)) : 0;
  copier_ = make_device_copier(device_, &error_);
}

void H2dStage::copy(const Batch& batch, RankStats& stats) {
  const uint64_t samples = batch.samples, bytes_read = batch.bytes;
  stats.h2d_device = device_;
  if (!copier_) {
    if (stats.h2d_error.empty()) stats.h2d_error = error_;
    return;
  }
  const double share = batch_size_ ? std::min(1.0, static_cast<double>(samples) / batch_size_) : 1.0;
  const uint64_t bytes = bytes_per_batch_ > 0 ? static_cast<uint64_t>(bytes_per_batch_ * share) : bytes_read;
  const int64_t ns = copier_->copy(bytes);
  if (ns < 0) {
    error_ = copier_->error();
    stats.h2d_error = error_;
    copier_.reset();
    return;
  }
  stats.h2d_ns += ns;
  stats.h2d_bytes += bytes;
  ++stats.h2d_copies;
}

}  // namespace ioprobe
