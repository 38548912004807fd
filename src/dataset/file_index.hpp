// The compact list of files a run reads: paths relative to a root, and sizes when known.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ioprobe {

/// Paths are stored back to back in one buffer (NUL-terminated) to keep a million entries
/// small (about 40 B per file instead of a std::string each).
class FileIndex {
 public:
  static constexpr int64_t kUnknownSize = -1;

  /// `root` is the directory paths are relative to; empty means "paths are as given" (absolute
  /// or relative to the working directory), as with --file-list.
  explicit FileIndex(std::string root = {}) : root_(std::move(root)) {}

  void add(std::string_view rel_path, int64_t size);
  size_t size() const { return offsets_.size(); }
  bool empty() const { return offsets_.empty(); }
  const char* path(size_t i) const { return names_.data() + offsets_[i]; }
  int64_t file_size(size_t i) const { return sizes_[i]; }
  const std::string& root() const { return root_; }
  /// Hints the CPU to load entry i's offset and size into its cache (no effect on results). A
  /// shuffled epoch visits entries in random order, so each look-up would otherwise miss the cache
  /// once the index outgrows it; readers call this a file or two ahead.
  void prefetch_entry(size_t i) const {
    __builtin_prefetch(offsets_.data() + i);
    __builtin_prefetch(sizes_.data() + i);
  }
  /// Hints the CPU to load entry i's path. Reads its offset: call prefetch_entry(i) earlier.
  void prefetch_path(size_t i) const { __builtin_prefetch(names_.data() + offsets_[i]); }
  /// Sum of known sizes in bytes; `known` receives how many sizes were known.
  uint64_t total_known_bytes(size_t* known = nullptr) const;
  /// Full path for messages: root + "/" + relative path.
  std::string display_path(size_t i) const;

 private:
  std::string root_;
  std::vector<char> names_;
  std::vector<uint64_t> offsets_;
  std::vector<int64_t> sizes_;
};

}  // namespace ioprobe
