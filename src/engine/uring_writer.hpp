// Sequential file writer for checkpoints (the io_uring FileWriter engine, file_engine.hpp): io_uring writes from
// page-aligned buffers, O_DIRECT where the filesystem accepts it, `depth` buffers in flight (2 = double buffering, the
// FastPersist design: one buffer is filled while the other is written).
//
// The caller fills the current request through reserve()/commit() (zero-copy: a compressor can
// write its output straight into the slot's buffer) or append() (copy). append_stable() is
// zero-copy where it can: bytes that will not change until finish()/drain() and are 4 KiB-aligned
// in memory where the file offset is are written from where they lie (the FastPersist path for
// aligned tensors), the rest copied into the slot's buffer. A request gathers both kinds as
// segments (one write, or a writev when there are several) and is submitted when it holds
// io_size bytes: every request but the last is io_size long at an io_size-aligned file offset,
// whatever the caller's pieces (region ends, chunk ends) -- short requests in between would
// leave the device less than `depth` x io_size in flight. The file's unaligned tail is written by
// finish() through a second, buffered descriptor, so any byte count works with O_DIRECT.
//
// Errors: the constructor throws IoError (open, ring setup); every other call returns 0 or a
// negative errno like liburing, and last_error_op() names the failed operation. A short write
// (the usual first sign of ENOSPC) is completed with pwrite so the real errno surfaces.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/io_memory.hpp"
#include "engine/file_engine.hpp"
#include "engine/uring_ring.hpp"

namespace ioprobe {

/// Settings of UringFileWriter.
struct UringWriterOptions {
  size_t io_size = 16u << 20;  // bytes per write request, a multiple of 4096
  unsigned depth = 2;          // buffers (and write requests) in flight; 2 = double buffering
  bool direct = true;          // try O_DIRECT; falls back to buffered when the fs refuses (EINVAL)
  bool huge_pages = true;      // buffers on transparent huge pages: whole O_DIRECT requests (core/io_memory.hpp)
  // Background flush: after every `flush_bytes` bytes completed, an fdatasync is queued on the
  // ring (IORING_OP_FSYNC, DATASYNC; at most one in flight) while writing goes on, so that a
  // device with a volatile write cache (a virtual disk, an NVMe drive with VWC) commits data
  // during the save instead of all of it in the final fsync. 0 = only the caller's fsync().
  uint64_t flush_bytes = 0;
};

using UringWriterStats = WriterStats;

/// One file written sequentially from offset 0. Not thread-safe; one writer per thread.
class UringFileWriter final : public FileWriter {
 public:
  /// Creates `path` (O_CREAT|O_EXCL: never overwrites an existing file). Throws IoError.
  UringFileWriter(const std::string& path, const UringWriterOptions& opts);
  ~UringFileWriter() override;
  UringFileWriter(const UringFileWriter&) = delete;
  UringFileWriter& operator=(const UringFileWriter&) = delete;

  /// Free space in the current buffer; waits for a buffer when none is free. Returns a pointer
  /// and sets `avail` (> 0), or nullptr with `err` = -errno after a failed write.
  uint8_t* reserve(size_t& avail, int& err) override;
  /// Marks `n` bytes of the last reserve() as filled; submits the buffer when full. 0 or -errno.
  int commit(size_t n) override;
  /// Copies `n` bytes in (reserve + memcpy + commit). 0 or -errno.
  int append(const void* data, size_t n) override;
  /// Appends `n` bytes that stay valid and unchanged until finish() or drain() returns: with
  /// O_DIRECT, whole 4 KiB blocks whose address is 4 KiB-aligned at a 4 KiB-aligned file
  /// offset are written from `data` itself (gathered into the current io_size request, the same
  /// `depth` in flight); anything else is copied as append() does. 0 or -errno.
  int append_stable(const void* data, size_t n) override;
  /// Writes what remains (aligned part by io_uring, tail by pwrite) and waits for all. 0 or -errno.
  int finish() override;
  /// fdatasync-free full fsync(2) of the file. 0 or -errno.
  int fsync() override;
  /// Stops submitting and waits for writes in flight (used on interrupt or error).
  void drain() override;

  /// posix_fadvise(DONTNEED) over the file after fdatasync (page_cache.hpp evict_fd).
  int invalidate() override;
  const char* engine_name() const override { return "io_uring"; }
  bool direct() const override { return direct_; }
  /// "write", "fsync", "open"...: the operation behind the last error.
  const std::string& last_error_op() const override { return err_op_; }
  const WriterStats& stats() const override { return stats_; }
  uint64_t bytes_queued() const override { return file_off_ + fill_; }

 private:
  int begin_request();
  void add_segment(const uint8_t* p, size_t n);
  int submit_current();
  int advance_slot();
  int wait_slot();
  void maybe_flush();
  int wait_one();
  int complete_short(size_t buf_index, uint64_t off, size_t done, size_t len);

  std::string path_;
  UringWriterOptions opts_;
  int fd_ = -1;       // O_DIRECT when direct_
  int fd_tail_ = -1;  // buffered descriptor for the unaligned tail and short-write completion
  bool direct_ = false;
  UringRing ring_;
  std::vector<IoMemory> mem_;   // owns the buffers
  std::vector<uint8_t*> bufs_;  // mem_[i].get()
  // Per slot: the segments of its request (the slot's own buffer and/or the caller's memory for
  // append_stable), kept until the write completes; its file offset and length.
  std::vector<std::vector<iovec>> seg_;
  std::vector<uint64_t> buf_off_;
  std::vector<size_t> buf_len_;
  std::vector<bool> busy_;
  size_t cur_ = 0;         // slot whose request is being built
  size_t fill_ = 0;        // bytes in the current request (copied + zero-copy)
  size_t copied_ = 0;      // of those, bytes copied into bufs_[cur_] (always its first copied_ bytes)
  uint64_t file_off_ = 0;  // file offset where the current request starts
  unsigned inflight_ = 0;  // writes and the background flush in flight
  bool flush_inflight_ = false;
  uint64_t since_flush_ = 0;  // bytes completed since the last background flush was queued
  int first_err_ = 0;
  std::string err_op_;
  UringWriterStats stats_;
};

}  // namespace ioprobe
