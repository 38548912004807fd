// Sequential file reader for checkpoint restores: io_uring reads of `io_size` bytes into `depth`
// 4 KiB-aligned buffers kept in flight ahead of the consumer (the read-ahead that O_DIRECT does
// not get from the kernel), O_DIRECT where the filesystem accepts it (else buffered, direct()
// says which). With O_DIRECT the cache plays no part; buffered reads are as cold as the caller
// made them.
//
// Errors: the constructor throws IoError (open, ring setup); next() returns a negative errno
// and last_failure() names the operation and offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error_record.hpp"
#include "core/io_memory.hpp"
#include "engine/uring_ring.hpp"

namespace ioprobe {

/// Settings of UringFileReader.
struct UringReaderOptions {
  size_t io_size = 16u << 20;  // bytes per read request (rounded up to 4096)
  unsigned depth = 4;          // reads in flight ahead of the consumer
  bool direct = true;          // try O_DIRECT; buffered when the fs refuses (EINVAL)
};

/// One file streamed in order. Not thread-safe; one reader per thread.
class UringFileReader {
 public:
  /// Opens `path` read-only. Throws IoError.
  UringFileReader(const std::string& path, const UringReaderOptions& opts);
  ~UringFileReader();
  UringFileReader(const UringFileReader&) = delete;
  UringFileReader& operator=(const UringFileReader&) = delete;

  /// Starts streaming bytes [begin, end) of the file (any offsets; the reads themselves are
  /// 4 KiB-aligned). Returns 0 or -errno.
  int start(uint64_t begin, uint64_t end);
  /// The next block of the stream, in file order: `data`, `len` > 0, valid until the next call.
  /// Returns 0, 1 at the end of the range, or -errno (a read failed, or the file ended early: -EIO
  /// with last_failure() saying so).
  int next(const uint8_t*& data, size_t& len);

  bool direct() const { return direct_; }
  /// A plain (buffered, read-only) descriptor of the same file, for small reads such as a trailer.
  int plain_fd() const { return fd_plain_; }
  /// The last failure of start() or next(): errno and the operation with its offset ("read of
  /// 4096 B at offset 8192"), or err 0 and `detail` for a file that ends early. No path: the
  /// caller names the file.
  const ErrorRecord& last_failure() const { return failure_; }
  /// error_line(last_failure()): "read of 4096 B at offset 8192: Input/output error (EIO)".
  std::string last_error() const { return error_line(failure_); }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  void cancel_all();
  int submit(size_t slot);
  int wait_slot(size_t slot);

  std::string path_;
  UringReaderOptions opts_;
  int fd_ = -1, fd_plain_ = -1;
  bool direct_ = false;
  UringRing ring_;
  std::vector<IoMemory> mem_;   // owns the buffers
  std::vector<uint8_t*> bufs_;  // mem_[i].get()
  std::vector<uint64_t> off_;   // file offset of each slot's read
  std::vector<size_t> want_;    // bytes requested
  std::vector<int> res_;        // completion result
  std::vector<char> inflight_, done_;
  uint64_t begin_ = 0, end_ = 0, next_off_ = 0;  // next_off_: next aligned offset to request
  size_t head_ = 0;                              // slot the consumer reads next
  bool head_out_ = false;                        // head_ was handed out and is recycled on the next call
  unsigned pending_ = 0;
  ErrorRecord failure_;
  uint64_t bytes_read_ = 0;
};

}  // namespace ioprobe
