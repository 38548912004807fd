// The space a synthetic dataset will take on disk, known before its file list is planned or any
// file is written: the free-space check comes first, and a dataset far too large for its
// filesystem is refused at once instead of after planning millions of files.
#pragma once

#include <cstdint>
#include <functional>

#include "dataset/spec.hpp"

namespace ioprobe {

/// Each file is counted as its size rounded up to this many bytes (the usual filesystem block).
constexpr uint64_t kFootprintBlock = 4096;

/// What a dataset of `spec` holds. Sizes in bytes.
struct DatasetFootprint {
  uint64_t files = 0;       // files of the dataset (spec.files)
  uint64_t bytes = 0;       // their sizes summed: the dataset's bytes
  uint64_t disk_bytes = 0;  // each file's size rounded up to kFootprintBlock, summed
  bool exact = false;       // every file's size was drawn (or all are equal); false: an estimate
  uint64_t sampled = 0;     // files whose sizes were drawn to get the figures (an estimate: the first ones)
  bool stopped = false;     // `stop` said so before every size was drawn: the figures are incomplete
};

/// The exact footprint, each size drawn as the generator draws it (dataset/spec.hpp SizeStream)
/// and none kept, so memory stays constant for any file count. Equal sizes (a fixed distribution,
/// token files) need no draws. `stop` is polled every 65,536 draws (e.g. core/interrupt.hpp's
/// interrupted); when it returns true the result is `stopped`. Never throws.
DatasetFootprint exact_footprint(const DatasetSpec& spec, const std::function<bool()>& stop = {});

/// An instant estimate: the exact footprint when the sizes are all equal or the dataset has at
/// most `max_files` files; else the first `max_files` files' sizes drawn and their mean taken for
/// every file (`exact` false, `sampled` = max_files). Never throws.
DatasetFootprint estimate_footprint(const DatasetSpec& spec, uint64_t max_files = 65536);

}  // namespace ioprobe
