#include "dataset/file_index.hpp"

namespace ioprobe {

void FileIndex::add(std::string_view rel, int64_t size) {
  offsets_.push_back(names_.size());
  names_.insert(names_.end(), rel.begin(), rel.end());
  names_.push_back('\0');
  sizes_.push_back(size);
}

uint64_t FileIndex::total_known_bytes(size_t* known) const {
  uint64_t total = 0;
  size_t k = 0;
  for (int64_t s : sizes_)
    if (s >= 0) {
      total += static_cast<uint64_t>(s);
      ++k;
    }
  if (known) *known = k;
  return total;
}

std::string FileIndex::display_path(size_t i) const {
  if (root_.empty()) return path(i);
  return root_ + "/" + path(i);
}

}  // namespace ioprobe
