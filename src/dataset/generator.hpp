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
#include "dataset/manifest.hpp"
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
  RecordLayout layout;       // sharded and token datasets: where each record sits
  std::string action;        // "reused", "reused: the first N of its M files", "generated", "regenerated (...)"
  double generate_s = 0;     // seconds spent writing, 0 when reused
  uint64_t bytes = 0;        // total bytes of the dataset
  bool interrupted = false;  // generation stopped by SIGINT/SIGTERM (dataset left incomplete)
  /// Interrupted before any file or manifest was written (while the size was checked or the
  /// files planned): the directory is as it was (removed again when this call made it).
  bool nothing_written = false;
  uint64_t source_files = 0;  // "reused: the first N of its M files": M, the files the dataset there holds
  ContentKind content = ContentKind::kSynthetic;  // what the files hold (a reused dataset: its manifest's)
  uint64_t jpeg_padding_bytes = 0;                // generated JPEG content: COM-segment bytes added to reach the sizes
  /// Shared lock on the directory (core/dir_lock.hpp), held while this object (or a copy) lives:
  /// no other process regenerates the dataset while this one reads it.
  std::shared_ptr<DirLock> lock;
};

/// Makes `dir` hold the dataset `spec` describes. With spec.content_from_manifest, a complete
/// dataset whose shape matches once its manifest's content is taken is reused with that content. A complete dataset of
/// the same shape is reused, and so is one that differs only by holding more files (its first spec.files files are
/// exactly the dataset asked for). An incomplete one is regenerated. Throws UsageError when `dir` is a file, is a
/// non-empty directory ioprobe did not create, holds a complete ioprobe dataset of another shape and opts.regenerate is
/// false (naming the fields that differ), or its parent is missing; IoError on write failures; Error (exit 1) when the
/// filesystem lacks the space or inodes (numbers given), found before the files are planned (dataset/footprint.hpp:
/// an estimate first, then the exact total) and before anything is written or removed. SIGINT/SIGTERM while the size
/// is checked or the files planned returns `interrupted` and `nothing_written`; while files are written, `interrupted`
/// with the manifest "complete": false. Unless !opts.progress, one line on stderr names the files, bytes and directory
/// before the first file is written. The directory is locked (DIR/.ioprobe-lock): exclusively while
/// it is inspected and written, then shared for as long as the outcome's `lock` is kept. Another process that holds it
/// makes this call wait, after one line on stderr naming the holder (PID, host, command); SIGINT or SIGTERM while
/// waiting throws Error with the signal's exit code. A lock this process holds counts too: release an earlier outcome's
/// `lock` before calling again on the same directory.
DatasetOutcome ensure_dataset(const std::string& dir, const DatasetSpec& spec, const GenerateOptions& opts);

/// One writer's share of a generation split over several processes (write_dataset_slice).
struct SliceOutcome {
  uint64_t first = 0, end = 0;      // the files [first, end) of the dataset's file list
  uint64_t files = 0, bytes = 0;    // written (fewer than end - first when interrupted)
  double generate_s = 0;            // seconds this writer spent writing, sync excluded
  bool interrupted = false;         // stopped by SIGINT/SIGTERM
  uint64_t jpeg_padding_bytes = 0;  // JPEG content: COM-segment bytes added to reach the drawn sizes
};

/// The owner's side of a generation split over processes that all see `dir` (a multi-host job on
/// a shared filesystem). The order: the owner calls begin_split_generation(); when `pending`,
/// every writer calls write_dataset_slice() with its own slice (the owner may be one of them);
/// when every slice succeeded the owner calls publish_dataset(), which marks the manifest
/// complete. Until then the manifest says "complete": false, so a failed or interrupted slice
/// leaves a dataset the next run regenerates, never one that looks complete.
struct SplitGeneration {
  bool pending = false;           // files must be written; false: a complete dataset is there, reuse it
  std::string action;             // "generated", "regenerated (...)" when pending
  std::string list_xxh64;         // the file list's hash: writers check that they lay out the same files
  Manifest manifest;              // the incomplete manifest written, completed by publish_dataset()
  std::shared_ptr<DirLock> lock;  // exclusive, held until publish_dataset() (or this is destroyed)
  bool interrupted = false;       // SIGINT/SIGTERM before anything was written: pending false, nothing to reuse
};

/// Owner: as ensure_dataset() (same refusals and errors, the directory locked exclusively), except
/// that when files must be written it writes only the layout (file list, record index, manifest
/// marked incomplete, class folders) and returns `pending` with the lock held. When a reusable
/// dataset is there it returns `pending` false and releases the lock.
SplitGeneration begin_split_generation(const std::string& dir, const DatasetSpec& spec, const GenerateOptions& opts);

/// Writer `slice` of `slices` (0-based): writes the files [files*slice/slices,
/// files*(slice+1)/slices) of the layout, byte for byte what ensure_dataset() writes there (the
/// content depends only on the seed and the file's number), then syncs the filesystem. Takes no
/// lock: it writes under the owner's. Throws Error (exit 1) when `dir` does not hold the owner's
/// incomplete layout with `list_xxh64`, or this process computes another layout (another ioprobe
/// version); IoError on write failures.
SliceOutcome write_dataset_slice(const std::string& dir, const DatasetSpec& spec, uint64_t slice, uint64_t slices,
                                 const std::string& list_xxh64, const GenerateOptions& opts);

/// Owner, after every slice succeeded: syncs, writes the manifest "complete": true atomically
/// and releases the lock. Throws Error (exit 1) when the manifest changed meanwhile; IoError.
void publish_dataset(const std::string& dir, SplitGeneration& g);

/// Fills `buf` with pseudo-random bytes from `seed` (incompressible, like JPEG data).
void fill_pseudorandom(char* buf, size_t len, uint64_t seed);

}  // namespace ioprobe
