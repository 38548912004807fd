// Merging the interposer's per-process files (trace/record_abi.h) into one Trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace ioprobe::trace {

/// What collect_records needs besides the files.
struct CollectInput {
  std::string dir;                   // the directory the interposer wrote *.rec files into
  int64_t start_ns = 0;              // CLOCK_MONOTONIC when the command was started: the trace's t = 0
  int64_t end_ns = 0;                // when it ended: duration_ns = end_ns - start_ns
  std::vector<std::string> command;  // the recorded command line
  std::string host;
};

/// Counts for the summary and for tests.
struct CollectStats {
  uint64_t processes = 0;      // per-process files read
  uint64_t bad_chunks = 0;     // chunks cut off or with a bad magic (a process killed while flushing)
  uint64_t unknown_opens = 0;  // records naming an open id with no open record (skipped)
};

/// Reads every DIR/*.rec and builds the trace: one stream per recorded thread that made a call or
/// a mark, in (process start, pid, tid) order; roles from the marks ("worker N" for a DataLoader
/// worker's thread that wrote worker_start, "main" for the first process's main thread,
/// "process" for another process's main thread, "thread" otherwise); ppid 0 when the parent was
/// not recorded; files in order of first appearance; each op's gap CPU (thread CPU time between
/// the end of the stream's previous op and this op's start; for its first op, the thread's CPU
/// time before it); the mapped share (mapped bytes; touched bytes not sampled); the limits of
/// this recorder. Throws IoError when DIR cannot be read; a file with a bad header is skipped and
/// counted in stats->bad_chunks.
Trace collect_records(const CollectInput& in, CollectStats* stats);

/// The limits of a trace made by the interposer, in words (Trace::limits).
std::vector<std::string> recorder_limits();

/// Replaces every path by "anon:<16 hex digits of XXH3-64 of the path>" followed by the path's
/// extension (".jpg", ".tar", ".npy"; none when the last component has no dot or the extension is
/// longer than 8 bytes), so a vendor still sees the file types but no names; the command line is
/// cut to the program's name and the host name hashed the same way; sets anonymized.
void anonymize_paths(Trace& t);

}  // namespace ioprobe::trace
