// The host-to-device copy of each delivered batch (`--h2d cuda`): what `batch.cuda(non_blocking=
// True)` costs the training loop before the step can use the batch. One per rank, on the rank's
// thread, with its own CUDA stream (gpu/cuda_copy.hpp); the copy runs before the emulated GPU step,
// so its time lowers AU as it does in training.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gpu/cuda_copy.hpp"
#include "loader/batch.hpp"
#include "loader/config.hpp"
#include "loader/loader_result.hpp"

namespace ioprobe {

class H2dStage {
 public:
  /// The stage of global rank `rank`: device rank mod cfg.h2d_devices. A copier that cannot be
  /// made (no CUDA, stream refused) leaves the stage failed: error() says why, copy() does nothing.
  H2dStage(const LoaderConfig& cfg, uint32_t rank);
  /// Copies the batch's bytes (cfg.pin_bytes_per_batch per full batch when set, else
  /// batch.bytes; a partial batch its share) from the copier's page-locked buffer (the loader keeps
  /// no batch contents, see loader/batch.hpp) and adds to stats.h2d_*. After a CUDA error it records the
  /// error in stats.h2d_error and copies nothing more. Does not throw.
  void copy(const Batch& batch, RankStats& stats);
  const std::string& error() const { return error_; }

 private:
  std::unique_ptr<DeviceCopier> copier_;
  double bytes_per_batch_;
  uint32_t batch_size_;
  int device_ = -1;
  std::string error_;
};

}  // namespace ioprobe
