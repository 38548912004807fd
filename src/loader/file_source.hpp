// The files dataset kind: one sample per file, read map-style (DistributedSampler + BatchSampler
// over the files, workers round-robin), one whole-file read per sample with the worker's
// FileReader; with --decode jpeg the worker decodes each file it read (jpeg_decode.hpp).
#pragma once

#include <memory>
#include <vector>

#include "engine/file_reader.hpp"
#include "loader/jpeg_decode.hpp"
#include "loader/sample_source.hpp"

namespace ioprobe {

class FileSource final : public MapStyleSource {
 public:
  explicit FileSource(const SourceEnv& env);
  uint64_t index_space() const override { return env_.index->size(); }
  void init_worker(uint32_t w) override;
  /// A sample is a file read whole at its indexed size; a file whose size changed, a failed
  /// open/read/close or a file that does not decode is an error. Batch::bytes: the files' bytes.
  Batch fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) override;
  bool bytes_counted_as_read() const override { return true; }

 protected:
  std::vector<uint64_t> epoch_files(const std::vector<uint64_t>& order) const override { return order; }

 private:
  bool decode(uint32_t w, WorkerStats& ws, const FileReadResult& fr, uint64_t idx);

  std::vector<std::unique_ptr<FileReader>> readers_;    // one per worker
  std::vector<std::unique_ptr<JpegDecoder>> decoders_;  // --decode jpeg: one per worker
  // One per worker: the live byte counter (SourceEnv::bytes_read) advances per MiB read and at
  // the end of each batch, so the workers do not write its shared cache line for every file.
  std::vector<std::unique_ptr<ByteTally>> tallies_;
};

}  // namespace ioprobe
