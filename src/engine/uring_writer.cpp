#include "engine/uring_writer.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cstring>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/io_memory.hpp"

namespace ioprobe {

namespace {
constexpr size_t kAlign = 4096;
constexpr uint64_t kFlushTag = ~uint64_t{0};  // user_data of the background fdatasync

int retry_wait_cqe(io_uring* ring, io_uring_cqe** cqe) {
  for (;;) {
    int r = io_uring_wait_cqe(ring, cqe);
    if (r != -EINTR) return r;
  }
}
}  // namespace

UringFileWriter::UringFileWriter(const std::string& path, const UringWriterOptions& opts) : path_(path), opts_(opts) {
  if (opts_.io_size == 0 || opts_.io_size % kAlign) opts_.io_size = (opts_.io_size / kAlign + 1) * kAlign;
  if (opts_.depth == 0) opts_.depth = 1;
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
  if (opts_.direct) {
    fd_ = ::open(path.c_str(), flags | O_DIRECT, 0644);
    if (fd_ >= 0) direct_ = true;
    else if (errno == EINVAL) fd_ = ::open(path.c_str(), flags, 0644);  // fs refuses O_DIRECT
  } else {
    fd_ = ::open(path.c_str(), flags, 0644);
  }
  if (fd_ < 0) throw IoError(errno, "create", path, "check that the directory is writable and has free inodes");
  fd_tail_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_tail_ < 0) {
    int e = errno;
    ::close(fd_);
    ::unlink(path.c_str());
    throw IoError(e, "open", path);
  }
  ring_ = new io_uring;
  int r = io_uring_queue_init(opts_.depth * 2 + 1, ring_, 0);  // depth writes + a background flush
  if (r < 0) {
    delete ring_;
    ring_ = nullptr;
    ::close(fd_);
    ::close(fd_tail_);
    ::unlink(path.c_str());
    throw IoError(-r, "io_uring_queue_init", path,
                  "io_uring may be disabled (sysctl kernel.io_uring_disabled) or blocked by a container's seccomp policy");
  }
  for (unsigned i = 0; i < opts_.depth; ++i) {
    mem_.push_back(alloc_io_memory(opts_.io_size, opts_.huge_pages));
    std::memset(mem_.back().get(), 0, opts_.io_size);  // fault the pages in now, not during the measurement
    bufs_.push_back(mem_.back().get());
  }
  buf_off_.assign(opts_.depth, 0);
  buf_src_.assign(opts_.depth, nullptr);
  buf_len_.assign(opts_.depth, 0);
  busy_.assign(opts_.depth, false);
}

UringFileWriter::~UringFileWriter() {
  drain();
  if (ring_) {
    io_uring_queue_exit(ring_);
    delete ring_;
  }
  if (fd_ >= 0) ::close(fd_);
  if (fd_tail_ >= 0) ::close(fd_tail_);
}

int UringFileWriter::complete_short(size_t i, uint64_t off, size_t done, size_t len) {
  while (done < len) {
    ssize_t n = ::pwrite(fd_tail_, buf_src_[i] + done, len - done, static_cast<off_t>(off + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) return -ENOSPC;
    done += static_cast<size_t>(n);
    stats_.bytes_written += static_cast<uint64_t>(n);
  }
  return 0;
}

int UringFileWriter::wait_one() {
  io_uring_cqe* cqe = nullptr;
  int r = retry_wait_cqe(ring_, &cqe);
  if (r < 0) {
    if (!first_err_) { first_err_ = r; err_op_ = "io_uring_wait_cqe"; }
    return r;
  }
  const uint64_t tag = io_uring_cqe_get_data64(cqe);
  int res = cqe->res;
  io_uring_cqe_seen(ring_, cqe);
  --inflight_;
  if (tag == kFlushTag) {
    flush_inflight_ = false;
    if (res < 0) {
      if (!first_err_) { first_err_ = res; err_op_ = "fsync"; }
      return res;
    }
    ++stats_.background_flushes;
    return 0;
  }
  size_t i = static_cast<size_t>(tag);
  busy_[i] = false;
  if (res < 0) {
    if (!first_err_) { first_err_ = res; err_op_ = "write"; }
    return res;
  }
  stats_.bytes_written += static_cast<uint64_t>(res);
  if (static_cast<size_t>(res) < buf_len_[i]) {
    int e = complete_short(i, buf_off_[i], static_cast<size_t>(res), buf_len_[i]);
    if (e < 0) {
      if (!first_err_) { first_err_ = e; err_op_ = "write"; }
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
  io_uring_sqe* sqe = io_uring_get_sqe(ring_);
  if (!sqe) return;  // the ring is full of writes: try again at the next completion
  io_uring_prep_fsync(sqe, fd_, IORING_FSYNC_DATASYNC);
  io_uring_sqe_set_data64(sqe, kFlushTag);
  // Counted as in flight even if this submit fails: the queued entry then goes with the next
  // submit, and its completion is reaped like any other (errors surface at the final fsync).
  (void)io_uring_submit(ring_);
  flush_inflight_ = true;
  ++inflight_;
  since_flush_ = 0;
}

// Queues a write of `len` bytes from `src` (the current buffer or the caller's memory) at
// file_off_ in slot cur_ (waiting for the slot's previous write and for a free SQE) and submits it.
// Returns 0 or the negative errno; the first error is kept in first_err_.
int UringFileWriter::submit_write(const uint8_t* src, size_t len) {
  if (int r = wait_slot()) return r;
  io_uring_sqe* sqe = io_uring_get_sqe(ring_);
  while (!sqe) {
    int r = wait_one();
    if (r < 0) return r;
    sqe = io_uring_get_sqe(ring_);
  }
  io_uring_prep_write(sqe, fd_, src, static_cast<unsigned>(len), file_off_);
  io_uring_sqe_set_data64(sqe, cur_);
  buf_src_[cur_] = src;
  buf_off_[cur_] = file_off_;
  buf_len_[cur_] = len;
  busy_[cur_] = true;
  int r = io_uring_submit(ring_);
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
  return 0;
}

int UringFileWriter::submit_current() {
  size_t len = fill_;
  if (len == 0) return 0;
  int r = submit_write(bufs_[cur_], len);
  if (r < 0) return r;
  file_off_ += len;
  fill_ = 0;
  return advance_slot();
}

// Moves to the next slot. Its previous write is waited for only when the slot is used again
// (wait_slot, from reserve or submit_write), so that the caller's work between two requests
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
  err = wait_slot();
  if (err) return nullptr;
  avail = opts_.io_size - fill_;
  return bufs_[cur_] + fill_;
}

int UringFileWriter::commit(size_t n) {
  fill_ += n;
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
    const bool aligned = reinterpret_cast<uintptr_t>(p) % kAlign == 0;
    if (direct_ && aligned && n >= kAlign && fill_ % kAlign == 0) {
      if (fill_ > 0) {  // bytes copied before (an unaligned region end): send them first
        int r = submit_current();
        if (r) return r;
      }
      size_t len = std::min(opts_.io_size, n - n % kAlign);
      int r = submit_write(p, len);
      if (r < 0) return first_err_ ? first_err_ : r;
      stats_.zero_copy_bytes += len;
      file_off_ += len;
      p += len;
      n -= len;
      r = advance_slot();
      if (r) return r;
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
      size_t to_boundary = kAlign - fill_ % kAlign;
      if (reinterpret_cast<uintptr_t>(p + to_boundary) % kAlign == 0) k = std::min(k, to_boundary);
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
  if (direct_) {
    tail = fill_ % kAlign;
    fill_ -= tail;
  }
  size_t tail_buf = cur_;
  uint64_t tail_off = file_off_ + fill_;
  size_t tail_start = fill_;
  if (fill_) {
    // Submit the aligned part; the buffer stays untouched until its completion is reaped below.
    int r = submit_write(bufs_[cur_], fill_);
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
      ssize_t n = ::pwrite(fd_tail_, bufs_[tail_buf] + tail_start + done, tail - done,
                           static_cast<off_t>(tail_off + done));
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
  return 0;
}

int UringFileWriter::fsync() {
  int64_t t0 = now_ns();
  int r = ::fsync(fd_);
  stats_.fsync_ns += now_ns() - t0;
  if (r != 0) {
    int e = errno;
    if (!first_err_) { first_err_ = -e; err_op_ = "fsync"; }
    return -e;
  }
  return 0;
}

void UringFileWriter::drain() {
  while (ring_ && inflight_ > 0) {
    io_uring_cqe* cqe = nullptr;
    if (retry_wait_cqe(ring_, &cqe) < 0) break;
    const uint64_t tag = io_uring_cqe_get_data64(cqe);
    if (tag == kFlushTag) {
      flush_inflight_ = false;
    } else {
      if (cqe->res > 0) stats_.bytes_written += static_cast<uint64_t>(cqe->res);
      busy_[static_cast<size_t>(tag)] = false;
    }
    io_uring_cqe_seen(ring_, cqe);
    --inflight_;
  }
}

bool dir_accepts_o_direct(const std::string& dir) {
  std::string p = dir + "/.ioprobe-odirect-probe." + std::to_string(getpid());
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(p.c_str());
  return true;
}

}  // namespace ioprobe
