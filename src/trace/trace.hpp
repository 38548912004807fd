// The trace model: what a recorded (or imported) job did to its data files, per process and
// thread, with each call's time, duration, file, offset and size, plus the DataLoader's batch
// markers. Pure data: no I/O engine, no command line. `ioprobe record` writes it, the importers
// (DFTracer, strace) build it, `ioprobe replay` reads it.
//
// The file format (trace_format.hpp reads and writes it) is JSON Lines, version kFormatVersion:
//   line 1   {"format":"ioprobe-trace","version":1,"source":...,"command":[...],"host":...,
//             "anonymized":bool,"clock":"CLOCK_MONOTONIC","duration_ns":N,"limits":[...],
//             "mapped":{...}}
//   then     {"file":ID,"path":"...","size":N}                       one per data file
//            {"stream":ID,"pid":P,"tid":T,"ppid":Q,"role":"main","rank":R}
//            {"op":"read","s":STREAM,"t":NS,"d":NS,"c":NS,"f":FILE,"off":N,"len":N,"ret":N,
//             "err":ERRNO,"call":"pread64"}
//            {"mark":"batch_wait_begin","s":STREAM,"t":NS,"batch":K}
//   last     {"end":true,"events":N}   (N = op + mark lines; a file without it is truncated)
// Times are nanoseconds from the trace's start on CLOCK_MONOTONIC; within one stream ops are in
// non-decreasing start order. Paths that are not valid UTF-8 are stored escaped (core/text.hpp
// escape_bytes) and restored exactly by unescape_bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ioprobe::trace {

/// The version of the file format this build reads and writes.
inline constexpr int kFormatVersion = 1;

/// What one recorded call did. `read` covers read, pread64, readv, preadv, preadv2 and the stdio
/// family (fread, fgets on a data file): Op::call keeps the libc name.
enum class OpKind : uint8_t {
  open,   // open, openat, creat, fopen (file = the opened file; ret = the fd, or -1 with err)
  close,  // close, fclose
  read,   // bytes = what the call returned; requested = what it asked for
  lseek,  // offset = the resulting position
  stat,   // stat, fstat, lstat, statx, newfstatat on a data file
  mmap,   // a mapping of a regular file: offset and requested = the mapped range
  munmap,
};

/// "open", "close", "read", "lseek", "stat", "mmap", "munmap".
std::string_view op_kind_name(OpKind k);
/// The inverse of op_kind_name; false when `name` is none of them.
bool parse_op_kind(std::string_view name, OpKind* out);

/// A file the job touched. Index in Trace::files is its id.
struct FileEntry {
  std::string path;         // as the job named it (absolute), or "anon:<hex>" when anonymized
  uint64_t size_bytes = 0;  // st_size when first opened (bytes)
  bool size_known = false;  // false when the source never saw the size (strace without fstat)
};

/// One recorded call.
struct Op {
  OpKind kind = OpKind::read;
  int64_t start_ns = 0;     // from the trace's start
  int64_t dur_ns = 0;       // the call's wall time
  int64_t gap_cpu_ns = -1;  // the thread's CPU time between the end of its previous op and this op's
                            // start (ns); -1 when the source has no thread CPU time (strace, DFTracer)
  int32_t file = -1;        // index into Trace::files; -1 when not a data file
  uint64_t offset = 0;      // read: the file offset read from (bytes); mmap: the mapping's file offset
  uint64_t requested = 0;   // read: bytes asked for; mmap: bytes mapped
  uint64_t bytes = 0;       // read: bytes returned (0 at end of file or on error)
  int32_t error = 0;        // errno when the call failed, else 0
  std::string call;         // the libc call recorded ("pread64", "fread", "openat", ...)
};

/// Markers the Python side writes around the DataLoader's iterator (no code change in the job).
enum class MarkKind : uint8_t {
  batch_wait_begin,  // the training loop asked for the next batch (main process)
  batch_wait_end,    // the batch was in hand
  worker_start,      // this process is DataLoader worker `batch` (the field holds the worker id)
  epoch_begin,
  epoch_end,
};

std::string_view mark_kind_name(MarkKind k);
bool parse_mark_kind(std::string_view name, MarkKind* out);

struct Mark {
  MarkKind kind = MarkKind::batch_wait_begin;
  int64_t t_ns = 0;
  int64_t batch = 0;  // batch index (or worker id for worker_start)
};

/// One recorded thread: its ops in start order, replayed as one stream.
struct Stream {
  int32_t pid = 0;
  int32_t tid = 0;
  int32_t ppid = 0;  // the recorded process that forked this one (0 for the job's first process)
  std::string role;  // "main", "worker N" (a DataLoader worker), "thread", "process"
  int32_t rank = 0;  // the job's distributed rank (RANK / OMPI_COMM_WORLD_RANK at start), 0 when none
  std::vector<Op> ops;
  std::vector<Mark> marks;
};

/// How many of the job's bytes came through mappings, which a trace of calls cannot see read.
struct MappedShare {
  uint64_t mapped_bytes = 0;  // bytes of data files mapped (mmap lengths, summed)
  // Of those, bytes observed touched: `ioprobe record` counts each range's pages present in the
  // process's page table at unmap or exit (/proc/self/pagemap; fault-around included, so an upper
  // bound); 0 when not sampled.
  uint64_t touched_bytes = 0;
  bool sampled = false;  // whether touched_bytes was observed for every mapping
};

/// A whole trace.
struct Trace {
  int version = kFormatVersion;
  std::string source;                // "ioprobe record", "dftracer", "strace"
  std::vector<std::string> command;  // the recorded command line
  std::string host;                  // the host it was recorded on
  bool anonymized = false;           // paths hashed (record --anonymize; DFTracer's hashed names)
  int64_t duration_ns = 0;           // the job's elapsed time as recorded (ns)
  // Why the recording is incomplete ("interrupted: ..."), empty when it ran to its end. Written as
  // "partial": true and "partial_reason" in the header; both optional on read (older traces).
  std::string partial;
  std::vector<std::string> limits;  // what this source cannot see or distorts, in words
  MappedShare mapped;
  std::vector<FileEntry> files;
  std::vector<Stream> streams;

  /// Bytes returned by every read op.
  uint64_t read_bytes() const;
  /// Number of ops of every stream.
  uint64_t op_count() const;
};

}  // namespace ioprobe::trace
