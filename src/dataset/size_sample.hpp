// Sizes of a dataset whose files were enumerated without a stat each (--data walks names only,
// so a million files cost no million stat calls): a stat of at most `max_files` files spread
// evenly over the index gives the dataset line's size (exact when every file was sampled, an
// estimate otherwise) and finds oversized samples before the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dataset/file_index.hpp"

namespace ioprobe {

/// What the sample found. Sizes in bytes.
struct SizeSample {
  uint64_t sampled = 0;        // files whose size is known (from the index or a stat)
  uint64_t sampled_bytes = 0;  // their sizes summed
  uint64_t largest = 0;        // the largest size seen
  size_t largest_index = 0;    // its index in the FileIndex
  bool exact = false;          // every file's size is known: total_bytes() is the dataset's size
  uint64_t files = 0;          // files in the index
  /// Exact total, or the sampled mean times the files (0 when nothing was sampled).
  uint64_t total_bytes() const {
    if (sampled == 0) return 0;
    return exact ? sampled_bytes : static_cast<uint64_t>(static_cast<double>(sampled_bytes) / sampled * files);
  }
};

/// Known sizes are taken from the index; unknown ones are stat'ed (fstatat relative to the
/// index's root), at most `max_files` spread evenly over the index. Files that cannot be stat'ed
/// are skipped (the run reports them). Never throws.
SizeSample sample_sizes(const FileIndex& index, size_t max_files = 1000);

}  // namespace ioprobe
