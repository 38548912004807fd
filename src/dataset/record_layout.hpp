// Where each sample sits when samples are records inside larger files (sharded and token
// datasets, see DatasetKind): the record index a reader uses instead of parsing the files.
//
// On disk (generated datasets, next to the manifest):
//   .ioprobe-records.u32   the size of every record as a little-endian uint32, in file order
//                          (file 0's records, then file 1's, ...); records of a file lie back to
//                          back from offset 0, so record r of a file starts at the sum of the sizes
//                          before it. Written only when sizes vary; fixed sizes need no list.
// The manifest's "records" object names the list and its xxh64 (dataset/manifest.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataset/spec.hpp"

namespace ioprobe {

constexpr const char* kRecordListName = ".ioprobe-records.u32";

/// One sample's place: file index, byte offset in that file and length in bytes.
struct RecordPlace {
  uint64_t file = 0;
  uint64_t offset = 0;  // bytes
  uint64_t length = 0;  // bytes
};

/// The record index of a dataset. kind kFiles has none (records_per_file 1, no sizes).
class RecordLayout {
 public:
  RecordLayout() = default;
  /// Every record `fixed_size` bytes.
  RecordLayout(DatasetKind kind, uint64_t files, uint64_t records_per_file, uint64_t fixed_size);
  /// Record sizes in file order; sizes.size() must equal files x records_per_file, each < 4 GiB.
  RecordLayout(DatasetKind kind, uint64_t files, uint64_t records_per_file, const std::vector<uint64_t>& sizes);

  DatasetKind kind() const { return kind_; }
  bool records_in_files() const { return kind_ != DatasetKind::kFiles; }
  uint64_t files() const { return files_; }
  uint64_t records_per_file() const { return per_file_; }
  uint64_t total_records() const { return files_ * per_file_; }
  /// 0 when sizes vary.
  uint64_t fixed_size() const { return fixed_; }
  /// Size in bytes of record r (0-based) of file f.
  uint64_t record_size(uint64_t f, uint64_t r) const { return fixed_ ? fixed_ : sizes_[f * per_file_ + r]; }
  /// Bytes of file f: the sum of its records.
  uint64_t file_bytes(uint64_t f) const;
  /// Sum of all records, bytes.
  uint64_t total_bytes() const;
  /// Global sample index (f x records_per_file + r) to its place; needs fixed sizes (token
  /// datasets), where the offset is r x fixed_size. Throws std::logic_error otherwise.
  RecordPlace locate_fixed(uint64_t sample) const;

  /// Writes the size list (when sizes vary) into `dir` atomically and returns the manifest's
  /// "records" object: {kind, records_per_file, fixed_size_bytes | list + list_xxh64}. Throws IoError.
  nlohmann::json write(const std::string& dir) const;
  /// Reads the layout back from the manifest's "records" object `rj` and `dir`, checking the list's
  /// xxh64 and length and that each file's records add up to `file_sizes[f]`. Throws UsageError.
  static RecordLayout read(const std::string& dir, const nlohmann::json& rj, const std::vector<int64_t>& file_sizes);

 private:
  DatasetKind kind_ = DatasetKind::kFiles;
  uint64_t files_ = 0;
  uint64_t per_file_ = 1;
  uint64_t fixed_ = 0;
  std::vector<uint32_t> sizes_;  // empty when fixed
};

}  // namespace ioprobe
