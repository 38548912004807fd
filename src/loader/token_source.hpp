// The token dataset kind: fixed-size windows inside token files (Megatron's indexed .bin), read
// map-style over the records: DistributedSampler + BatchSampler over files x windows per file,
// workers round-robin, one positioned read per sample with files held open across samples
// (record_fetch.hpp TokenFetcher).
#pragma once

#include <memory>
#include <vector>

#include "engine/range_reader.hpp"
#include "loader/record_fetch.hpp"
#include "loader/sample_source.hpp"

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
  RecordFetchEnv fetch_env_;
  std::vector<std::unique_ptr<RangeReader>> readers_;  // one per worker
  std::vector<TokenFetcher> tokens_;                   // one per worker
};

}  // namespace ioprobe
