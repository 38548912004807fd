// The file life cycle of an engine, after fio's engine hooks (ioengines.h: open_file,
// close_file, invalidate): every engine that reads or writes files opens, closes and
// invalidates (evicts from the page cache) them itself, so an engine whose files are not plain
// descriptors (a later GPUDirect Storage engine registers them with cuFile) slots in beside
// io_uring and psync without its callers knowing.
//
// The engines behind these interfaces:
//  - FileEngine, reads: the loader's whole-file readers (file_reader.hpp) and range readers
//    (range_reader.hpp), "io_uring" and "psync" each;
//  - FileWriter, sequential writes of one file it creates: the checkpoint's io_uring writer
//    (uring_writer.hpp, UringFileWriter), made by make_file_writer("io_uring", ...).
// The raw engines (engine.hpp) serve one descriptor that `raw` opens; their slots and queue are
// the fio model itself.
//
// Nothing here throws on the hot path: results are negative errno, as liburing returns them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine_kind.hpp"

namespace ioprobe {

/// The life cycle of files an engine reads. Not thread-safe: one per worker.
class FileEngine {
 public:
  virtual ~FileEngine() = default;
  /// "io_uring" or "psync".
  virtual const char* engine_name() const = 0;
  /// Opens `path` relative to `dirfd` (AT_FDCWD allowed) read-only, O_DIRECT when the engine was
  /// made with it. Returns the descriptor (>= 0) or a negative errno; `ns` receives the time taken.
  virtual int open(int dirfd, const char* path, int64_t* ns) = 0;
  /// Closes `fd`; returns 0 or a negative errno; `ns` receives the time taken.
  virtual int close(int fd, int64_t* ns) = 0;
  /// Evicts `fd`'s clean pages from the page cache so the next read comes from the device
  /// (fdatasync, then posix_fadvise(POSIX_FADV_DONTNEED): page_cache.hpp evict_fd). Returns 0 or
  /// a negative errno. tmpfs keeps its pages (they are the only copy).
  virtual int invalidate(int fd);
};

/// Time and byte counters of one writer (nanoseconds, bytes).
struct WriterStats {
  uint64_t bytes_written = 0;  // bytes completed by the kernel (aligned writes + tail)
  uint64_t write_requests = 0;
  uint64_t zero_copy_bytes = 0;  // bytes written from the caller's memory (append_stable)
  int64_t write_wait_ns = 0;     // time the caller was blocked waiting for a free buffer or completions
  int64_t fsync_ns = 0;
  uint64_t background_flushes = 0;  // fdatasyncs completed in the background (flush_bytes)
};

/// A sequential writer of one file it created (see UringFileWriter for the full contract:
/// reserve()/commit() fill the current request in place, append() copies, append_stable() writes
/// stable aligned memory without a copy, finish() writes the tail and waits). Every call returns
/// 0 or a negative errno; last_error_op() names the failed operation. One writer per thread.
class FileWriter {
 public:
  virtual ~FileWriter() = default;
  virtual const char* engine_name() const = 0;
  virtual uint8_t* reserve(size_t& avail, int& err) = 0;
  virtual int commit(size_t n) = 0;
  virtual int append(const void* data, size_t n) = 0;
  virtual int append_stable(const void* data, size_t n) = 0;
  virtual int finish() = 0;
  virtual int fsync() = 0;
  virtual void drain() = 0;
  /// Evicts the file's clean pages from the page cache (after finish() and fsync(): a restore
  /// that follows then reads from the device). 0 or a negative errno.
  virtual int invalidate() = 0;
  virtual bool direct() const = 0;
  virtual const std::string& last_error_op() const = 0;
  virtual const WriterStats& stats() const = 0;
  virtual uint64_t bytes_queued() const = 0;
};

struct UringWriterOptions;

/// The writer engine: io_uring (UringFileWriter). Creates `path` (never overwrites).
/// Throws IoError (create, ring setup), UsageError for psync (no psync writer).
std::unique_ptr<FileWriter> make_file_writer(EngineKind engine, const std::string& path,
                                             const UringWriterOptions& opts);

}  // namespace ioprobe
