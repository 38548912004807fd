// Whole-file reads the way a DataLoader worker does them: open, read the whole file, close,
// one file at a time (queue depth 1 per worker, as PyTorch's torch/utils/data/_utils/worker.py fetches).
//
// Two implementations:
//  - "io_uring": one ring per worker; open, read and close of a file are submitted as one linked
//    chain (openat into a registered file slot, read through the fixed file, close), so a small
//    file costs one io_uring_enter. Larger files continue with further reads of `chunk_bytes`.
//  - "psync": openat(2), pread(2) in a loop, close(2).
// With `direct`, files are opened O_DIRECT and read into 4 KiB-aligned buffers with lengths
// rounded up to 4 KiB; the short read at end of file gives the exact size, so any size works,
// 0-byte files included.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/file_engine.hpp"

namespace ioprobe {

/// Outcome of one file read. Times are nanoseconds of wall time.
struct FileReadResult {
  int64_t bytes = 0;           // bytes delivered (the file's size when err == 0)
  int err = 0;                 // 0, or a positive errno of the first failing step
  const char* failed_op = "";  // "open", "read" or "close" when err != 0
  int64_t open_ns = 0;         // submit to open completion (io_uring: approximate within the linked chain)
  int64_t read_ns = 0;         // open completion to last read completion
  int64_t close_ns = 0;        // last read completion to close completion
  int64_t total_ns = 0;        // the whole open + read + close, exact
  bool stopped = false;        // ReadControl::stop turned true between two requests: `bytes` is partial, err is 0
  /// The file's bytes when all of them arrived in one request (err == 0, not stopped, bytes <=
  /// chunk_bytes), else null: a decoder (--decode) reads them here. Valid until the reader's next call.
  const unsigned char* data = nullptr;
};

/// A live byte counter shared by several reading threads (a progress display's), fed by one
/// thread in steps of at least kStepBytes: each request's bytes add to a private count, which goes
/// to the shared one once it reaches kStepBytes and at flush(). Small files then cost no write to
/// the shared cache line per file, and a huge file still shows progress every MiB. Not thread
/// safe: one tally per reading thread. Flushes when destroyed.
class ByteTally {
 public:
  static constexpr uint64_t kStepBytes = uint64_t{1} << 20;  // 1 MiB

  /// `shared` may be null (nothing is counted) and must outlive the tally.
  explicit ByteTally(std::atomic<uint64_t>* shared = nullptr) : shared_(shared) {}
  ByteTally(const ByteTally&) = delete;
  ByteTally& operator=(const ByteTally&) = delete;
  ~ByteTally() { flush(); }

  /// Counts `bytes` more; passes the private count on once it reaches kStepBytes.
  void add(uint64_t bytes) {
    pending_ += bytes;
    if (pending_ >= kStepBytes) flush();
  }
  /// Passes the private count on now (the end of a batch).
  void flush() {
    if (shared_ && pending_) shared_->fetch_add(pending_, std::memory_order_relaxed);
    pending_ = 0;
  }
  /// Bytes counted and not yet passed on.
  uint64_t pending() const { return pending_; }

 private:
  std::atomic<uint64_t>* shared_;
  uint64_t pending_ = 0;
};

/// What a caller may do while one file is being read. A file may be far larger than a request
/// (a 1 TB sample is 131,072 reads of 8 MiB), so the stop flag is checked between requests and
/// the bytes are counted as each request completes, not once at the end of the file.
struct ReadControl {
  const std::atomic<bool>* stop = nullptr;  // checked before each request after the first
  ByteTally* bytes_read = nullptr;          // each completed request's bytes are added (may be null)
};

struct FileReaderOptions {
  bool direct = false;                // O_DIRECT
  uint64_t chunk_bytes = 8ULL << 20;  // largest single read request, bytes (multiple of 4 KiB)
};

/// One worker's reader. Not thread-safe: each worker owns one. Besides whole files, it opens,
/// closes and invalidates single files as every FileEngine does (file_engine.hpp).
class FileReader : public FileEngine {
 public:
  /// Reads the file `path` relative to directory fd `dirfd` (AT_FDCWD allowed). `size_hint` is
  /// the expected size in bytes, or -1 when unknown. `ctl` (optional) stops the read between
  /// requests (the file is closed, `stopped` set) and counts bytes as they arrive. Never throws.
  virtual FileReadResult read_file(int dirfd, const char* path, int64_t size_hint, const ReadControl& ctl = {}) = 0;
};

/// The reader of `engine`. Throws Error with the reason (syscall, errno name,
/// kernel.io_uring_disabled) when an io_uring ring cannot be set up.
std::unique_ptr<FileReader> make_file_reader(EngineKind engine, const FileReaderOptions& opts);

}  // namespace ioprobe
