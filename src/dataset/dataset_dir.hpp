// The directory a generated dataset lives in: what is there (missing, empty, ours, someone
// else's), creating it, refusing one ioprobe must not write into, checking its filesystem has
// room for a dataset, removing only the files of ioprobe's own earlier dataset, and flushing it to
// the device. The generator (generator.cpp) decides what to write; this file knows the directory.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "dataset/file_index.hpp"
#include "dataset/footprint.hpp"
#include "dataset/spec.hpp"

namespace ioprobe {

/// What a --dir holds: nothing yet, an empty directory (ioprobe's own ".ioprobe-*" files aside),
/// an ioprobe dataset (its manifest is there), anything else, or a path that is not a directory.
enum class DirState { kMissing, kEmpty, kOurs, kForeign, kNotADirectory };

/// The state of `dir`. Throws UsageError when it cannot be looked at (a parent is a file, no
/// permission), IoError when it cannot be listed.
DirState inspect_dir(const std::string& dir);

/// Throws UsageError, saying what to do, for kNotADirectory and kForeign (ioprobe never writes
/// into a directory it did not create); returns for the other states.
void refuse_unusable(const std::string& dir, DirState state);

/// Creates `dir` (mode 0755), and its missing parents when `parents`. Throws UsageError naming the
/// path for a missing parent or no permission, IoError otherwise.
void make_dir(const std::string& dir, bool parents);

/// Removes only the files `old` lists under `dir`, then the class folders they left empty. Throws
/// IoError when a listed file exists and cannot be removed.
void remove_listed_files(const std::string& dir, const FileIndex& old);

/// The refusal for a file at `path` that a generation would write and that ioprobe did not write
/// (UsageError, exit 2: the path, and to move it away or choose another --dir).
UsageError foreign_file_error(const std::string& path);

/// Throws foreign_file_error for the first path `plan` lists under `dir` that exists: called once
/// the earlier generation's files are gone, so anything there is someone else's.
void refuse_foreign_files(const std::string& dir, const FileIndex& plan);

/// Throws Error (kExitFailure; nothing written yet) when the filesystem of `dir` lacks the space
/// or inodes for a dataset of footprint `f`, counting `freed_bytes` / `freed_files` that removing
/// the previous dataset there gives back. Each file takes its size rounded up to 4 KiB, plus 1% +
/// 1 MiB of headroom; an estimated footprint (f.exact false) is refused only beyond a 2% margin.
void check_space(const std::string& dir, const DatasetSpec& spec, const DatasetFootprint& f, uint64_t freed_bytes,
                 uint64_t freed_files);

/// "; that filesystem is RAM: ..." for the generator's progress line when `dir` is on tmpfs or
/// ramfs (`bytes`: the dataset's size, as a share of the host's memory); "" otherwise.
std::string ram_note(const std::string& dir, uint64_t bytes);

/// syncfs() on the filesystem of `dir`: the data is on the device before a cold (O_DIRECT) run
/// measures it. Errors are ignored (a best effort).
void sync_dir(const std::string& dir);

}  // namespace ioprobe
