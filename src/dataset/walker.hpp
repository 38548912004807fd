// Builds the file list of a user's own dataset (--data DIR or --file-list FILE), read-only.
//
// The tree is walked with getdents' d_type: no stat per regular file; stat is
// used only for symlinks and filesystems that report DT_UNKNOWN. Sizes stay unknown and are
// learnt from the reads. Symlinks to files are included; symlinks to directories are followed
// only with follow_symlinks, keyed by (st_dev, st_ino) so loops end with one warning each;
// dangling links are skipped with one warning each. One directory is open at
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
  uint64_t duplicates = 0;            // entries naming a file already in the index (read twice per epoch)
  double enumerate_s = 0;             // wall time of the walk
};

/// Walks `root` recursively. Throws UsageError when root does not exist, is not a directory or
/// is unreadable (each said in those words). Files reached by more than one path (hard links,
/// symlinks to files) are kept, counted in `duplicates` and named in one warning: after the
/// first read per epoch the others come from the page cache, so a cold figure would not be cold.
/// Duplicates are found from readdir's d_ino and confirmed with stat, so no stat per file.
WalkResult walk_tree(const std::string& root, bool follow_symlinks);

/// Reads one path per line from `list_file` (relative paths are relative to the working
/// directory). CRLF line ends are accepted; blank lines and lines whose first non-blank
/// character is '#' are skipped (write ./#name for a file whose name starts with '#'). The same
/// path listed more than once (after lexical normalisation: ./a, a and b/../a are one path) is
/// kept, counted in `duplicates` and warned about, as for walk_tree(). Throws UsageError when
/// the list does not exist, is a directory, is unreadable or names no file.
WalkResult read_path_list(const std::string& list_file);

}  // namespace ioprobe
