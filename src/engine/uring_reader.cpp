#include "engine/uring_reader.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <new>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/io_memory.hpp"
#include "engine/engine.hpp"
#include "engine/engine_choice.hpp"
#include "engine/uring_ring.hpp"

namespace ioprobe {

namespace {}  // namespace

UringFileReader::UringFileReader(const std::string& path, const UringReaderOptions& opts) : path_(path), opts_(opts) {
  opts_.io_size = std::max<size_t>(kDirectAlign, (opts_.io_size + kDirectAlign - 1) / kDirectAlign * kDirectAlign);
  if (opts_.depth == 0) opts_.depth = 1;
  if (opts_.direct) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd_ >= 0) direct_ = true;
    else if (errno != EINVAL) throw IoError(errno, "open", path);
  }
  if (fd_ < 0) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw IoError(errno, "open", path);
  fd_plain_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_plain_ < 0) {
    int e = errno;
    ::close(fd_);
    throw IoError(e, "open", path);
  }
  RingOptions ro;
  ro.entries = opts_.depth;
  const int r = ring_.init(ro);
  if (r < 0) {
    ::close(fd_);
    ::close(fd_plain_);
    throw IoError(-r, "io_uring_queue_init", path, io_uring_setup_hint(-r));
  }
  for (unsigned i = 0; i < opts_.depth; ++i) {
    mem_.push_back(alloc_io_memory(opts_.io_size));
    bufs_.push_back(mem_.back().get());
  }
  off_.assign(opts_.depth, 0);
  want_.assign(opts_.depth, 0);
  res_.assign(opts_.depth, 0);
  inflight_.assign(opts_.depth, 0);
  done_.assign(opts_.depth, 0);
}

UringFileReader::~UringFileReader() {
  cancel_all();
  ring_.reset();
  if (fd_ >= 0) ::close(fd_);
  if (fd_plain_ >= 0) ::close(fd_plain_);
}

// Reaps every read still in flight (their buffers must not be reused or freed before).
void UringFileReader::cancel_all() {
  while (ring_.ok() && pending_ > 0) {
    io_uring_cqe* cqe = nullptr;
    int r = io_uring_wait_cqe(ring_.get(), &cqe);
    if (r == -EINTR) continue;
    if (r < 0) break;
    size_t i = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
    io_uring_cqe_seen(ring_.get(), cqe);
    inflight_[i] = 0;
    --pending_;
  }
  std::fill(done_.begin(), done_.end(), 0);
}

int UringFileReader::submit(size_t slot) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (!sqe) return -EBUSY;  // cannot happen: at most `depth` reads, the ring has `depth` entries
  const uint64_t rest = end_ - next_off_;
  const size_t len = static_cast<size_t>(
      std::min<uint64_t>(opts_.io_size, (rest + kDirectAlign - 1) / kDirectAlign * kDirectAlign));
  io_uring_prep_read(sqe, fd_, bufs_[slot], static_cast<unsigned>(len), next_off_);
  io_uring_sqe_set_data64(sqe, slot);
  off_[slot] = next_off_;
  want_[slot] = len;
  done_[slot] = 0;
  int r = io_uring_submit(ring_.get());
  if (r < 0) {
    failure_ = ErrorRecord{.err = -r, .op = fmt::format("io_uring_submit (read at offset {})", next_off_)};
    return r;
  }
  inflight_[slot] = 1;
  ++pending_;
  next_off_ += len;
  return 0;
}

int UringFileReader::start(uint64_t begin, uint64_t end) {
  cancel_all();
  begin_ = begin;
  end_ = std::max(begin, end);
  next_off_ = begin / kDirectAlign * kDirectAlign;
  head_ = 0;
  head_out_ = false;
  for (size_t i = 0; i < bufs_.size() && next_off_ < end_; ++i) {
    int r = submit(i);
    if (r < 0) return r;
  }
  return 0;
}

int UringFileReader::wait_slot(size_t slot) {
  while (!done_[slot]) {
    io_uring_cqe* cqe = nullptr;
    int r = io_uring_wait_cqe(ring_.get(), &cqe);
    if (r == -EINTR) continue;
    if (r < 0) {
      failure_ = ErrorRecord{.err = -r, .op = "io_uring_wait_cqe"};
      return r;
    }
    size_t i = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
    res_[i] = cqe->res;
    io_uring_cqe_seen(ring_.get(), cqe);
    inflight_[i] = 0;
    done_[i] = 1;
    --pending_;
  }
  return 0;
}

int UringFileReader::next(const uint8_t*& data, size_t& len) {
  if (head_out_) {  // the block handed out last time is free: read further ahead into it
    head_out_ = false;
    if (next_off_ < end_) {
      int r = submit(head_);
      if (r < 0) return r;
    }
    head_ = (head_ + 1) % bufs_.size();
  }
  if (!inflight_[head_] && !done_[head_]) return 1;
  int r = wait_slot(head_);
  if (r < 0) return r;
  done_[head_] = 0;
  const uint64_t off = off_[head_];
  if (res_[head_] < 0) {
    failure_ = ErrorRecord{.err = -res_[head_], .op = fmt::format("read of {} B at offset {}", want_[head_], off)};
    return res_[head_];
  }
  size_t got = static_cast<size_t>(res_[head_]);
  while (got < want_[head_] && off + got < end_) {  // a short read before the end: finish it plainly
    ssize_t n = ::pread(fd_plain_, bufs_[head_] + got, want_[head_] - got, static_cast<off_t>(off + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      failure_ = ErrorRecord{.err = e, .op = fmt::format("read at offset {}", off + got)};
      return -e;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  const uint64_t lo = std::max(begin_, off), hi = std::min(end_, off + got);
  if (off + got < std::min(end_, off + want_[head_])) {
    failure_ = ErrorRecord{.detail = fmt::format("the file ends at offset {}, before offset {}", off + got, end_)};
    return -EIO;
  }
  data = bufs_[head_] + (lo - off);
  len = static_cast<size_t>(hi - lo);
  bytes_read_ += len;
  head_out_ = true;
  return 0;
}

}  // namespace ioprobe
