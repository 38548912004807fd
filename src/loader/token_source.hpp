// The token dataset kind: fixed-size windows inside token files (Megatron's indexed .bin), read
// map-style over the records: DistributedSampler + BatchSampler over files x windows per file,
// workers round-robin, one positioned read per sample with files held open across samples
// (record_fetch.hpp TokenFetcher).
#pragma once

#include <vector>

#include "loader/record_fetch.hpp"
#include "loader/sample_source.hpp"
#include "loader/worker_readers.hpp"

namespace ioprobe {

class TokenSource final : public MapStyleSource {
 public:
  explicit TokenSource(const SourceEnv& env);
  uint64_t index_space() const override { return env_.layout->total_records(); }
  void init_worker(uint32_t w) override;
  /// Batch::bytes: the windows' bytes (alignment padding of O_DIRECT reads excluded).
  Batch fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) override;
  bool bytes_counted_as_read() const override { return false; }

 protected:
  /// Every token file: each rank reads windows of all of them.
  std::vector<uint64_t> epoch_files(const std::vector<uint64_t>& order) const override;

 private:
  WorkerRangeReaders readers_;        // points at MapStyleSource::env_
  std::vector<TokenFetcher> tokens_;  // one per worker
};

}  // namespace ioprobe
