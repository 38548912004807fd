#include "engine/uring_writer.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/io_memory.hpp"
#include "engine/engine.hpp"
#include "engine/engine_choice.hpp"
#include "engine/page_cache.hpp"
#include "engine/uring_ring.hpp"

namespace ioprobe {

namespace {
constexpr uint64_t kFlushTag = ~uint64_t{0};  // user_data of the background fdatasync
// Segments per request at most (a zero-copy segment may bring one copied segment after it);
// far below the kernel's UIO_MAXIOV (1024). Region and chunk ends give a handful per request.
constexpr size_t kMaxSegments = 64;

int retry_wait_cqe(io_uring* ring, io_uring_cqe** cqe) {
  for (;;) {
    int r = io_uring_wait_cqe(ring, cqe);
    if (r != -EINTR) return r;
  }
}
}  // namespace

UringFileWriter::UringFileWriter(const std::string& path, const UringWriterOptions& opts) : path_(path), opts_(opts) {
  if (opts_.io_size == 0 || opts_.io_size % kDirectAlign)
    opts_.io_size = (opts_.io_size / kDirectAlign + 1) * kDirectAlign;
  if (opts_.depth == 0) opts_.depth = 1;
  // Buffers first: when memory is short (std::bad_alloc) no file has been created yet.
  for (unsigned i = 0; i < opts_.depth; ++i) {
    mem_.push_back(alloc_io_memory(opts_.io_size, opts_.huge_pages));
    std::memset(mem_.back().get(), 0, opts_.io_size);  // fault the pages in now, not during the measurement
    bufs_.push_back(mem_.back().get());
  }
  // Created without O_DIRECT, which is then turned on with fcntl: a filesystem that refuses
  // O_DIRECT (ramfs) may create the file before open() fails with EINVAL, and a second O_EXCL
  // create would then fail with EEXIST on a file of our own.
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError(errno, "create", path, "check that the directory is writable and has free inodes");
  if (opts_.direct) {
    const int fl = ::fcntl(fd_, F_GETFL);
    direct_ = fl >= 0 && ::fcntl(fd_, F_SETFL, fl | O_DIRECT) == 0;  // else buffered (EINVAL: refused)
  }
  fd_tail_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_tail_ < 0) {
    int e = errno;
    ::close(fd_);
    ::unlink(path.c_str());
    throw IoError(e, "open", path);
  }
  RingOptions ro;
  ro.entries = opts_.depth * 2 + 1;  // depth writes + a background flush
  const int r = ring_.init(ro);
  if (r < 0) {
    ::close(fd_);
    ::close(fd_tail_);
    ::unlink(path.c_str());
    throw IoError(-r, "io_uring_queue_init", path, io_uring_setup_hint(-r));
  }
  buf_off_.assign(opts_.depth, 0);
  seg_.assign(opts_.depth, {});
  buf_len_.assign(opts_.depth, 0);
  busy_.assign(opts_.depth, false);
}

UringFileWriter::~UringFileWriter() {
  drain();
  ring_.reset();
  if (fd_ >= 0) ::close(fd_);
  if (fd_tail_ >= 0) ::close(fd_tail_);
}

// Writes bytes [done, len) of slot i's request with pwrite, segment by segment.
int UringFileWriter::complete_short(size_t buf_index, uint64_t off, size_t done, size_t len) {
  size_t seg_start = 0;
  for (const iovec& v : seg_[buf_index]) {
    const size_t seg_end = seg_start + v.iov_len;
    while (done < len && done < seg_end) {
      const uint8_t* src = static_cast<const uint8_t*>(v.iov_base) + (done - seg_start);
      ssize_t n = ::pwrite(fd_tail_, src, seg_end - done, static_cast<off_t>(off + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return -errno;
      }
      if (n == 0) return -ENOSPC;
      done += static_cast<size_t>(n);
      stats_.bytes_written += static_cast<uint64_t>(n);
    }
    seg_start = seg_end;
  }
  return 0;
}

int UringFileWriter::wait_one() {
  io_uring_cqe* cqe = nullptr;
  int r = retry_wait_cqe(ring_.get(), &cqe);
  if (r < 0) {
    if (!first_err_) {
      first_err_ = r;
      err_op_ = "io_uring_wait_cqe";
    }
    return r;
  }
  const uint64_t tag = io_uring_cqe_get_data64(cqe);
  int res = cqe->res;
  io_uring_cqe_seen(ring_.get(), cqe);
  --inflight_;
  if (tag == kFlushTag) {
    flush_inflight_ = false;
    if (res < 0) {
      if (!first_err_) {
        first_err_ = res;
        err_op_ = "fsync";
      }
      return res;
    }
    ++stats_.background_flushes;
    return 0;
  }
  size_t i = static_cast<size_t>(tag);
  busy_[i] = false;
  if (res < 0) {
    if (!first_err_) {
      first_err_ = res;
      err_op_ = "write";
    }
    return res;
  }
  stats_.bytes_written += static_cast<uint64_t>(res);
  if (static_cast<size_t>(res) < buf_len_[i]) {
    int e = complete_short(i, buf_off_[i], static_cast<size_t>(res), buf_len_[i]);
    if (e < 0) {
      if (!first_err_) {
        first_err_ = e;
        err_op_ = "write";
      }
      return e;
    }
  }
  since_flush_ += buf_len_[i];
  maybe_flush();
  return 0;
}

// Queues a background fdatasync once flush_bytes more bytes completed and none is in flight.
// It covers the writes completed before it runs; the caller's fsync() still makes all durable.
void UringFileWriter::maybe_flush() {
  if (opts_.flush_bytes == 0 || flush_inflight_ || since_flush_ < opts_.flush_bytes || first_err_) return;
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (!sqe) return;  // the ring is full of writes: try again at the next completion
  io_uring_prep_fsync(sqe, fd_, IORING_FSYNC_DATASYNC);
  io_uring_sqe_set_data64(sqe, kFlushTag);
  // Counted as in flight even if this submit fails: the queued entry then goes with the next
  // submit, and its completion is reaped like any other (errors surface at the final fsync).
  (void)io_uring_submit(ring_.get());
  flush_inflight_ = true;
  ++inflight_;
  since_flush_ = 0;
}

// Submits the current request (slot cur_, fill_ bytes at file_off_): one write from a single
// segment, a writev from several. Waits for a free SQE. 0 or the negative errno; the first
// error is kept in first_err_.
int UringFileWriter::submit_current() {
  if (fill_ == 0) return first_err_;
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  while (!sqe) {
    int r = wait_one();
    if (r < 0) return r;
    sqe = io_uring_get_sqe(ring_.get());
  }
  const std::vector<iovec>& v = seg_[cur_];
  if (v.size() == 1) io_uring_prep_write(sqe, fd_, v[0].iov_base, static_cast<unsigned>(v[0].iov_len), file_off_);
  else io_uring_prep_writev(sqe, fd_, v.data(), static_cast<unsigned>(v.size()), file_off_);
  io_uring_sqe_set_data64(sqe, cur_);
  buf_off_[cur_] = file_off_;
  buf_len_[cur_] = fill_;
  busy_[cur_] = true;
  int r = io_uring_submit(ring_.get());
  if (r < 0) {
    busy_[cur_] = false;
    if (!first_err_) {
      first_err_ = r;
      err_op_ = "io_uring_submit";
    }
    return r;
  }
  ++inflight_;
  ++stats_.write_requests;
  file_off_ += fill_;
  fill_ = 0;
  copied_ = 0;
  return advance_slot();
}

// Before the first byte of a request goes into slot cur_: waits for the slot's previous write
// and forgets its segments. 0 or the first error.
int UringFileWriter::begin_request() {
  if (fill_ > 0) return first_err_;
  int r = wait_slot();
  if (r) return r;
  seg_[cur_].clear();
  return 0;
}

// Adds n bytes at p to the current request, merged with the last segment when contiguous.
void UringFileWriter::add_segment(const uint8_t* p, size_t n) {
  std::vector<iovec>& v = seg_[cur_];
  if (!v.empty() && static_cast<const uint8_t*>(v.back().iov_base) + v.back().iov_len == p) v.back().iov_len += n;
  else v.push_back(iovec{const_cast<uint8_t*>(p), n});
  fill_ += n;
}

// Moves to the next slot. Its previous write is waited for only when the slot is used again
// (wait_slot, from begin_request), so that the caller's work between two requests
// (hashing a zero-copy span, compressing the next piece) overlaps `depth` writes, not depth - 1.
int UringFileWriter::advance_slot() {
  cur_ = (cur_ + 1) % bufs_.size();
  return first_err_;
}

// Waits until slot cur_ has no write in flight. 0 or the first error.
int UringFileWriter::wait_slot() {
  if (busy_[cur_]) {
    int64_t t0 = now_ns();
    while (busy_[cur_]) {
      int e = wait_one();
      if (e < 0) break;
    }
    stats_.write_wait_ns += now_ns() - t0;
  }
  return first_err_;
}

uint8_t* UringFileWriter::reserve(size_t& avail, int& err) {
  err = first_err_;
  if (err) return nullptr;
  if (fill_ == opts_.io_size) {
    err = submit_current();
    if (err) return nullptr;
  }
  err = begin_request();
  if (err) return nullptr;
  avail = opts_.io_size - fill_;  // the buffer holds copied_ <= fill_ bytes: at least avail are free
  return bufs_[cur_] + copied_;
}

int UringFileWriter::commit(size_t n) {
  if (n == 0) return first_err_;
  add_segment(bufs_[cur_] + copied_, n);
  copied_ += n;
  if (fill_ == opts_.io_size) return submit_current();
  return first_err_;
}

int UringFileWriter::append(const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    size_t avail = 0;
    int err = 0;
    uint8_t* dst = reserve(avail, err);
    if (!dst) return err;
    size_t k = n < avail ? n : avail;
    std::memcpy(dst, p, k);
    p += k;
    n -= k;
    int r = commit(k);
    if (r) return r;
  }
  return 0;
}

int UringFileWriter::append_stable(const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    if (first_err_) return first_err_;
    const bool aligned = reinterpret_cast<uintptr_t>(p) % kDirectAlign == 0;
    if (direct_ && aligned && n >= kDirectAlign && fill_ % kDirectAlign == 0) {
      // Whole blocks from the caller's memory join the current request (after any bytes copied
      // before it, e.g. the block that joins two regions); the request goes when it is full.
      if (seg_[cur_].size() + 2 > kMaxSegments && fill_ > 0) {
        if (int r = submit_current()) return r;
      }
      if (int r = begin_request()) return r;
      size_t len = std::min(opts_.io_size - fill_, n - n % kDirectAlign);
      add_segment(p, len);
      stats_.zero_copy_bytes += len;
      p += len;
      n -= len;
      if (fill_ == opts_.io_size) {
        if (int r = submit_current()) return r;
      }
      continue;
    }
    // Copy up to the next 4 KiB boundary of the file (then the rest may be zero-copy again) or,
    // when the memory is not congruent with the file offset, as much as the buffer takes.
    size_t avail = 0;
    int err = 0;
    uint8_t* dst = reserve(avail, err);
    if (!dst) return err;
    size_t k = std::min(n, avail);
    if (direct_) {
      size_t to_boundary = kDirectAlign - fill_ % kDirectAlign;
      if (reinterpret_cast<uintptr_t>(p + to_boundary) % kDirectAlign == 0) k = std::min(k, to_boundary);
    }
    std::memcpy(dst, p, k);
    p += k;
    n -= k;
    int r = commit(k);
    if (r) return r;
  }
  return 0;
}

int UringFileWriter::finish() {
  if (first_err_) return first_err_;
  size_t tail = 0;
  const uint8_t* tail_src = nullptr;
  if (direct_) {
    // An unaligned end is always copied bytes (zero-copy segments are whole blocks that start
    // on a block boundary), so the tail is the end of the last segment, in this slot's buffer.
    tail = fill_ % kDirectAlign;
    if (tail) {
      tail_src = bufs_[cur_] + copied_ - tail;
      iovec& last = seg_[cur_].back();
      last.iov_len -= tail;
      if (last.iov_len == 0) seg_[cur_].pop_back();
      fill_ -= tail;
      copied_ -= tail;
    }
  }
  const uint64_t tail_off = file_off_ + fill_;
  if (fill_) {
    // Submit the aligned part; the buffer (and the tail in it) stays untouched until its
    // completion is reaped below.
    int r = submit_current();
    if (r < 0) return first_err_ ? first_err_ : r;
  }
  int64_t t0 = now_ns();
  while (inflight_ > 0)
    if (wait_one() < 0 && inflight_ == 0) break;
  stats_.write_wait_ns += now_ns() - t0;
  if (first_err_) return first_err_;
  if (tail) {
    size_t done = 0;
    while (done < tail) {
      ssize_t n = ::pwrite(fd_tail_, tail_src + done, tail - done, static_cast<off_t>(tail_off + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        first_err_ = -errno;
        err_op_ = "write";
        return first_err_;
      }
      if (n == 0) {
        first_err_ = -ENOSPC;
        err_op_ = "write";
        return first_err_;
      }
      done += static_cast<size_t>(n);
      stats_.bytes_written += static_cast<uint64_t>(n);
    }
  }
  file_off_ = tail_off + tail;
  fill_ = 0;
  copied_ = 0;
  return 0;
}

int UringFileWriter::fsync() {
  int64_t t0 = now_ns();
  int r = ::fsync(fd_);
  stats_.fsync_ns += now_ns() - t0;
  if (r != 0) {
    int e = errno;
    if (!first_err_) {
      first_err_ = -e;
      err_op_ = "fsync";
    }
    return -e;
  }
  return 0;
}

void UringFileWriter::drain() {
  while (ring_.ok() && inflight_ > 0) {
    io_uring_cqe* cqe = nullptr;
    if (retry_wait_cqe(ring_.get(), &cqe) < 0) break;
    const uint64_t tag = io_uring_cqe_get_data64(cqe);
    if (tag == kFlushTag) {
      flush_inflight_ = false;
    } else {
      if (cqe->res > 0) stats_.bytes_written += static_cast<uint64_t>(cqe->res);
      busy_[static_cast<size_t>(tag)] = false;
    }
    io_uring_cqe_seen(ring_.get(), cqe);
    --inflight_;
  }
}

}  // namespace ioprobe

namespace ioprobe {

int UringFileWriter::invalidate() { return evict_fd(fd_tail_ >= 0 ? fd_tail_ : fd_); }

std::unique_ptr<FileWriter> make_file_writer(EngineKind engine, const std::string& path,
                                             const UringWriterOptions& opts) {
  if (engine == EngineKind::kIoUring) return std::make_unique<UringFileWriter>(path, opts);
  throw UsageError(fmt::format("writer engine '{}' is not one of: io_uring", to_string(engine)));
}

}  // namespace ioprobe
