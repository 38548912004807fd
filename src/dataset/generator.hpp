// Generates a synthetic dataset on disk, or reuses one whose manifest matches.
//
// Safety rules: ioprobe writes only into a directory that is absent, empty, or holds an ioprobe
// manifest; it refuses any other non-empty directory. It removes only files listed in its own
// manifest. An interrupted generation leaves "complete": false, and the next run regenerates.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/dir_lock.hpp"
#include "dataset/file_index.hpp"
#include "dataset/record_layout.hpp"
#include "dataset/spec.hpp"

namespace ioprobe {

struct GenerateOptions {
  int threads = 2;              // writer threads
  bool progress = true;         // progress line on stderr (only when stderr is a terminal)
  bool create_parents = false;  // mkdir -p the directory's parents (the default --dir)
  bool regenerate = false;      // replace a complete ioprobe dataset of another shape (else refuse)
  /// Another process has just prepared the dataset (a multi-host job's rank 0, or this host's
  /// first process): take the lock shared and only reuse a complete dataset of this shape; Error
  /// (exit 1) when there is none. Never writes.
  bool reuse_only = false;
};

/// What ensure_dataset() found or did.
struct DatasetOutcome {
  FileIndex index;
  RecordLayout layout;         // sharded and token datasets: where each record sits
  std::string action;          // "reused", "reused: the first N of its M files", "generated", "regenerated (...)"
  double generate_s = 0;       // seconds spent writing, 0 when reused
  uint64_t bytes = 0;          // total bytes of the dataset
  bool interrupted = false;    // generation stopped by SIGINT/SIGTERM (dataset left incomplete)
  ContentKind content = ContentKind::kSynthetic;  // what the files hold (a reused dataset: its manifest's)
  uint64_t jpeg_padding_bytes = 0;  // generated JPEG content: COM-segment bytes added to reach the sizes
  /// Shared lock on the directory (core/dir_lock.hpp), held while this object (or a copy) lives:
  /// no other process regenerates the dataset while this one reads it.
  std::shared_ptr<DirLock> lock;
};

/// Makes `dir` hold the dataset `spec` describes. With spec.content_from_manifest, a complete
/// dataset whose shape matches once its manifest's content is taken is reused with that content. A complete dataset of the same shape is reused,
/// and so is one that differs only by holding more files (its first spec.files files are exactly
/// the dataset asked for). An incomplete one is regenerated. Throws UsageError when `dir` is a
/// file, is a non-empty directory ioprobe did not create, holds a complete ioprobe dataset of
/// another shape and opts.regenerate is false (naming the fields that differ), or its parent is
/// missing; IoError on write
/// failures; Error (exit 1) when the filesystem lacks the space or inodes (numbers given).
/// The directory is locked (DIR/.ioprobe-lock): exclusively while it is inspected and written,
/// then shared for as long as the outcome's `lock` is kept. Another process that holds it makes
/// this call wait, after one line on stderr naming the holder (PID, host, command); SIGINT or
/// SIGTERM while waiting throws Error with the signal's exit code. A lock this process holds
/// counts too: release an earlier outcome's `lock` before calling again on the same directory.
DatasetOutcome ensure_dataset(const std::string& dir, const DatasetSpec& spec, const GenerateOptions& opts);

/// Fills `buf` with pseudo-random bytes from `seed` (incompressible, like JPEG data).
void fill_pseudorandom(char* buf, size_t len, uint64_t seed);

}  // namespace ioprobe
