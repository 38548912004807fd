// Where a replay finds the recorded job's files: `--map OLD_PREFIX=NEW_PREFIX` onto files that
// exist, or `--dir DIR`, under which replay lays out files of the recorded sizes that are missing.
//
// Rules (docs/replay.md "Where the files come from"):
//  - a recorded path is mapped by the longest OLD_PREFIX that matches it at a path-component
//    boundary; the mapped file must exist (else UsageError naming it and the rule), and is only
//    read, never written;
//  - a path no rule maps goes under DIR: DIR + the recorded absolute path ("/data/a.bin" ->
//    DIR/data/a.bin; an anonymized "anon:3fa2" -> DIR/anon/3fa2). A clone of a recorded rank (more
//    replay ranks than recorded ones) lays out its own copy under DIR/rank-K;
//  - under DIR a file of the recorded size is used as it is (read only); a missing one is created
//    and listed in DIR/.ioprobe-replay-layout, the layout's mark of what replay made; a file of
//    another size is rewritten only when that list names it, else refused (UsageError naming it):
//    replay never writes into a file it did not create;
//  - a path neither mapped nor under a --dir is refused, naming it;
//  - a file the streams only stat (never open, read or map) is not laid out and not counted in
//    the space needed: its stats are replayed on the file where it exists (mapped, or already
//    under DIR), and not issued where it does not.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/dir_lock.hpp"
#include "trace/trace.hpp"

namespace ioprobe::replay {

/// One --map rule.
struct MapRule {
  std::string old_prefix;
  std::string new_prefix;
};

/// Parses "OLD=NEW" (both non-empty, OLD absolute or "anon:"). Throws UsageError quoting `text`.
MapRule parse_map_rule(const std::string& text);

/// The mapped path of `recorded` by the longest matching rule, "" when none matches. A prefix
/// matches at a component boundary: "/data" maps "/data/a" and "/data", not "/database".
std::string map_path(const std::vector<MapRule>& rules, const std::string& recorded);

/// DIR/<recorded without its leading '/'> (anonymized "anon:HEX" -> DIR/anon/HEX). Throws
/// UsageError for a path with a ".." component (it would leave DIR).
std::string dir_path(const std::string& dir, const std::string& recorded);

/// How a replay finds its files.
struct LayoutOptions {
  std::vector<MapRule> maps;
  std::string dir;           // "" when no --dir
  std::string clone_subdir;  // "rank-K" for a clone of a recorded rank, "" otherwise
};

enum class FileAction : uint8_t {
  none,     // not used by the replayed streams
  mapped,   // an existing file named by --map (read only)
  reuse,    // under --dir, already of the recorded size (read only)
  create,   // under --dir, missing: replay creates it
  rewrite,  // under --dir, replay's own file of another size: replay writes it again
};

/// One recorded file and where the replay reads it.
struct PlannedFile {
  std::string recorded;   // the path as the job named it (raw bytes)
  std::string path;       // where the replay reads it; with FileAction::none, where a file the streams only
                          // stat exists (its stats are replayed there), else ""
  uint64_t size = 0;      // bytes to lay out: the recorded size, or the furthest byte read when unknown
  uint64_t existing = 0;  // bytes of the file found there (mapped, reuse, rewrite)
  FileAction action = FileAction::none;
};

/// The plan for every file of the trace (indexed by file id).
struct LayoutPlan {
  std::vector<PlannedFile> files;
  std::string marker;  // DIR/.ioprobe-replay-layout ("" without --dir)
  uint64_t create_bytes = 0;
  uint64_t created = 0, reused = 0, mapped = 0;
  uint64_t stat_only = 0, stat_only_missing = 0;  // files only stat'ed; of those, found nowhere (stats not issued)
  std::vector<std::string> warnings;              // a mapped file shorter than the recorded reads reach, ...
};

/// Which files the ops of `streams` (indices into trace.streams) open, read or map, by file id
/// (ops that failed in the recording, e.g. an open of a missing file, do not count; a stat alone
/// does not: see files_stat_only).
std::vector<bool> files_used(const trace::Trace& trace, const std::vector<size_t>& streams);

/// Which files the ops of `streams` stat (successfully in the recording) but never open, read or
/// map, by file id.
std::vector<bool> files_stat_only(const trace::Trace& trace, const std::vector<size_t>& streams);

/// The furthest byte each file's recorded reads and mappings reached (by file id).
std::vector<uint64_t> furthest_bytes(const trace::Trace& trace);

/// Plans the files of `used` (stat only; nothing is written), and finds where the files of
/// `stat_only` exist (never laid out; a warning counts those found nowhere). Throws UsageError
/// naming the path: a --map onto a missing path, a path no rule maps without --dir, a file under
/// DIR of another size that replay did not create, a directory where a file is expected.
LayoutPlan plan_layout(const trace::Trace& trace, const std::vector<bool>& used, const LayoutOptions& opts,
                       const std::vector<bool>& stat_only = {});

/// Preflight of the trace file given on the command line: a directory, a device or a socket is
/// refused (UsageError, exit 2, naming the path as given and what it is); a missing or unreadable
/// path is left to the trace reader, whose message names it. A FIFO passes (a process substitution).
void check_trace_file(const std::string& path);

/// Preflight of --dir, before any work: it must be a directory replay may create files in, or
/// missing under an existing directory replay may create it in. Throws UsageError (exit 2) naming
/// the path as given (non-UTF-8 bytes escaped as core/text.hpp escape_bytes) and what to do: a
/// regular file or another non-directory, a directory that cannot be entered or written, a
/// component of the path that is a file.
void check_layout_dir(const std::string& dir);

/// Creates `dir` (and its parents) when missing and takes its exclusive lock (core/dir_lock.hpp,
/// DIR/.ioprobe-lock), so that two replays (or a replay and a gen or checkpoint) onto one
/// directory plan and lay out their files one after the other: the second waits, and `on_wait` is
/// called once with the holder's description before it does. Throws UsageError when `dir` cannot
/// be created, IoError when the lock cannot be taken, Error 130/143 when interrupted while waiting.
std::unique_ptr<DirLock> lock_layout_dir(const std::string& dir,
                                         const std::function<void(const std::string& holder)>& on_wait);

/// The bytes the files marked create or rewrite take on disk: each size rounded up to 4 KiB.
uint64_t layout_disk_bytes(const LayoutPlan& plan);

/// Refuses a layout the filesystem of `dir` has no room for: Error with exit 1 (a refusal that
/// depends on the host's state, as gen's: docs/units-and-exit-codes.md) naming the directory, the
/// bytes needed (layout_disk_bytes) and the bytes available (statvfs f_bavail x f_frsize, plus
/// what the files to rewrite free). Filesystems that report no size (ramfs) are not refused.
/// Nothing is written.
void check_layout_space(const LayoutPlan& plan, const std::string& dir);

/// Creates the files the plan marks create or rewrite (bytes that are not zeros, so a
/// filesystem stores and reads real blocks; fsync'd), each listed in the marker before it is
/// written. Each file is written under a temporary name next to it ("NAME.ioprobe-tmp.PID") and
/// renamed onto its name once complete and fsync'd; a failed write removes the temporary file, so a
/// layout file at its name is always whole. Throws IoError naming the path.
void lay_out(const LayoutPlan& plan);

}  // namespace ioprobe::replay
