#include "dataset/footprint.hpp"

#include <algorithm>

namespace ioprobe {

namespace {

uint64_t on_disk(uint64_t bytes) { return (bytes + kFootprintBlock - 1) / kFootprintBlock * kFootprintBlock; }

// Draws the sizes of the first `limit` files (all of them when limit >= spec.files).
DatasetFootprint draw_footprint(const DatasetSpec& spec, uint64_t limit, const std::function<bool()>& stop) {
  DatasetFootprint f;
  f.files = spec.files;
  const uint64_t per_file = spec.kind == DatasetKind::kFiles ? 1 : spec.records_per_file;
  SizeStream sizes(spec);
  if (sizes.constant()) {  // every file the same: no draws
    const uint64_t file = sizes.next() * per_file;
    f.bytes = file * spec.files;
    f.disk_bytes = on_disk(file) * spec.files;
    f.sampled = spec.files;
    f.exact = true;
    return f;
  }
  const uint64_t n = std::min(limit, spec.files);
  uint64_t draws = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t file = 0;
    for (uint64_t r = 0; r < per_file; ++r, ++draws) {
      if ((draws & 0xFFFF) == 0 && stop && stop()) {
        f.stopped = true;
        return f;
      }
      file += sizes.next();
    }
    f.bytes += file;
    f.disk_bytes += on_disk(file);
  }
  f.sampled = n;
  f.exact = n == spec.files;
  if (!f.exact && n > 0) {  // the first n files' mean for every file
    const double scale = static_cast<double>(spec.files) / static_cast<double>(n);
    f.bytes = static_cast<uint64_t>(static_cast<double>(f.bytes) * scale);
    f.disk_bytes = static_cast<uint64_t>(static_cast<double>(f.disk_bytes) * scale);
  }
  return f;
}

}  // namespace

DatasetFootprint exact_footprint(const DatasetSpec& spec, const std::function<bool()>& stop) {
  return draw_footprint(spec, spec.files, stop);
}

DatasetFootprint estimate_footprint(const DatasetSpec& spec, uint64_t max_files) {
  return draw_footprint(spec, std::max<uint64_t>(1, max_files), {});
}

}  // namespace ioprobe
