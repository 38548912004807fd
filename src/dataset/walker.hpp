// Builds the file list of a user's own dataset (--data DIR or --file-list FILE), read-only.
//
// The tree is walked with getdents' d_type: no stat per regular file (field case C6); stat is
// used only for symlinks and filesystems that report DT_UNKNOWN. Sizes stay unknown and are
// learnt from the reads. Symlinks to files are included; symlinks to directories are followed
// only with follow_symlinks, keyed by (st_dev, st_ino) so loops end with one warning each
// (field case C8); dangling links are skipped with one warning each. One directory is open at
// a time, so memory and descriptors stay bounded for millions of entries.
#pragma once

#include <string>
#include <vector>

#include "dataset/file_index.hpp"

namespace ioprobe {

struct WalkResult {
  FileIndex index;
  std::vector<std::string> warnings;  // escaped for display
  uint64_t skipped = 0;               // entries not read: dangling links, loops, specials
  double enumerate_s = 0;             // wall time of the walk
};

/// Walks `root` recursively. Throws UsageError when root is missing, not a directory or unreadable.
WalkResult walk_tree(const std::string& root, bool follow_symlinks);

/// Reads one path per line from `list_file` (relative paths are relative to the working
/// directory; empty lines ignored). Throws UsageError when unreadable or empty.
WalkResult read_path_list(const std::string& list_file);

}  // namespace ioprobe
