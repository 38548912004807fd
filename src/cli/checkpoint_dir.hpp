// `ioprobe checkpoint`'s target directory: made when missing (with any missing parents), checked
// (a writable directory, no shard of this run already there, the result document not on a
// shard), locked (one run per directory), and at the end the directories this run made removed
// again when they are empty. Only directories this process made are ever removed, and only with
// rmdir(2): never a file, never a directory that holds anything.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checkpoint/state_spec.hpp"
#include "core/dir_lock.hpp"

namespace ioprobe::cli {

class CheckpointJob;

class CheckpointDir {
 public:
  /// Makes `dir` (across hosts: in turn, CheckpointJob::create_in_turn, so that on each host the
  /// process that makes it is the one that locks it and leaves its markers there), checks it,
  /// finds out with `job` whether it is shared, takes its lock (the processes job.locks_dir()
  /// names), and refuses shards of `state` already there and a `json_path` that is one of them.
  /// Throws UsageError (exit 2) naming --dir or --json and what to do; IoError from the lock.
  /// Whatever it made is removed again (when empty) before it throws.
  CheckpointDir(const std::string& dir, const checkpoint::StateSpec& state, const std::string& json_path,
                CheckpointJob& job);
  /// Releases the lock and removes the directories this run made that are empty (deepest first;
  /// a parent of one that stays, stays).
  ~CheckpointDir();
  CheckpointDir(const CheckpointDir&) = delete;
  CheckpointDir& operator=(const CheckpointDir&) = delete;

  /// The end of a successful run: releases the lock and, unless `keep`, removes the directories
  /// this run made that are empty, but not the one the result document `json_path` goes into,
  /// nor those above it. Returns what this run made (deepest first) and how many of those, from
  /// the deepest, it removed, for the report to say (nothing made: an empty list).
  struct Made {
    std::vector<std::string> dirs;  // deepest first
    size_t removed = 0;             // dirs[0 .. removed) are gone again
  };
  Made finish(bool keep, const std::string& json_path);

 private:
  void remove_made();

  std::string dir_;
  std::vector<std::string> made_;  // deepest first
  std::optional<DirLock> lock_;
};

}  // namespace ioprobe::cli
