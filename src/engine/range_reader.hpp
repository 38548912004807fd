// Positional reads from files a worker holds open: the I/O of datasets whose samples are
// records inside larger files (shard streams, token files), one request at a time (queue depth
// 1 per worker, as a DataLoader worker does; PyTorch's _utils/worker.py).
//
// Two implementations, as for whole files (file_reader.hpp):
//  - "io_uring": one ring per worker; openat, read and close are io_uring requests (one
//    io_uring_enter each, the read at an explicit offset).
//  - "psync": openat(2), pread(2), close(2).
// O_DIRECT: a request whose offset or length is not a multiple of kDirectAlign (4 KiB) is read
// as its aligned span (start rounded down, end rounded up to kDirectAlign) into a 4 KiB-aligned bounce buffer; the
// result reports the bytes the caller asked for that the file holds (`bytes`) and the bytes the
// device transferred (`io_bytes`). Without O_DIRECT the request is read as given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/file_engine.hpp"

namespace ioprobe {

/// Outcome of one open, read or close. Times are nanoseconds of wall time.
struct RangeReadResult {
  int64_t bytes = 0;     // requested bytes delivered (short at end of file)
  int64_t io_bytes = 0;  // bytes transferred, alignment padding included
  int err = 0;           // 0, or a positive errno
  int64_t ns = 0;        // wall time of the request
};

/// One worker's reader. Not thread-safe: each worker owns one.
/// Its files' life cycle (open, close, invalidate) is FileEngine's (file_engine.hpp).
class RangeReader : public FileEngine {
 public:
  /// Reads `length` bytes at `offset` of `fd` (length < 2 GiB). Never throws.
  virtual RangeReadResult read(int fd, uint64_t offset, uint64_t length) = 0;
};

/// The range reader of `engine`; `direct` opens files O_DIRECT. Throws Error with the reason
/// when an io_uring ring cannot be set up.
std::unique_ptr<RangeReader> make_range_reader(EngineKind engine, bool direct);

}  // namespace ioprobe
