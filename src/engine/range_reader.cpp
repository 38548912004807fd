#include "engine/range_reader.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "engine/engine.hpp"
#include "engine/engine_choice.hpp"
#include "engine/file_ops.hpp"
#include "engine/uring_ring.hpp"

namespace ioprobe {

namespace {

// A growable kDirectAlign-aligned buffer.
class Bounce {
 public:
  ~Bounce() { std::free(ptr_); }
  char* get(uint64_t len) {
    if (len > cap_) {
      std::free(ptr_);
      cap_ = (std::max<uint64_t>(len, 1 << 20) + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
      ptr_ = nullptr;
      if (posix_memalign(reinterpret_cast<void**>(&ptr_), kDirectAlign, cap_) != 0) cap_ = 0;
    }
    return ptr_;
  }

 private:
  char* ptr_ = nullptr;
  uint64_t cap_ = 0;
};

// What one read request must transfer: the request itself, or its aligned span under O_DIRECT.
struct Span {
  uint64_t offset, length, skip;  // skip: bytes before the requested offset
};

Span span_for(bool direct, uint64_t offset, uint64_t length) {
  if (!direct) return {offset, length, 0};
  const uint64_t a = kDirectAlign;
  const uint64_t start = offset / a * a, end = (offset + length + a - 1) / a * a;
  return {start, end - start, offset - start};
}

// Bytes of the request delivered when the span transfer returned `got` bytes.
int64_t delivered(const Span& s, uint64_t length, int64_t got) {
  if (got <= static_cast<int64_t>(s.skip)) return 0;
  return std::min<int64_t>(got - static_cast<int64_t>(s.skip), static_cast<int64_t>(length));
}

// Reads the span of (offset, length) into `bounce` with `read_at(buf, len, off)` (bytes read, or
// -errno), continuing after short reads; times the transfer. Shared by both engines.
template <class ReadAt>
RangeReadResult read_span(bool direct, uint64_t offset, uint64_t length, Bounce& bounce, ReadAt&& read_at) {
  RangeReadResult r;
  const Span s = span_for(direct, offset, length);
  char* buf = bounce.get(s.length);
  const int64_t t0 = now_ns();
  if (!buf) {
    r.err = ENOMEM;
    return r;
  }
  uint64_t got = 0;
  while (got < s.length) {  // a regular file returns short only at end of file, or on a signal
    const int64_t n = read_at(buf + got, s.length - got, s.offset + got);
    if (n < 0) {
      r.err = static_cast<int>(-n);
      break;
    }
    if (n == 0) break;
    got += static_cast<uint64_t>(n);
    if (direct && got % kDirectAlign) break;  // an unaligned count under O_DIRECT is end of file
  }
  r.ns = now_ns() - t0;
  r.io_bytes = static_cast<int64_t>(got);
  r.bytes = delivered(s, length, r.io_bytes);
  return r;
}

class PsyncRangeReader final : public RangeReader {
 public:
  explicit PsyncRangeReader(bool direct) : direct_(direct) {}
  const char* engine_name() const override { return "psync"; }

  int open(int dirfd, const char* path, int64_t* ns) override { return psync_open(dirfd, path, direct_, ns); }

  RangeReadResult read(int fd, uint64_t offset, uint64_t length) override {
    return read_span(direct_, offset, length, buf_, [fd](char* p, uint64_t len, uint64_t off) -> int64_t {
      for (;;) {
        ssize_t n = ::pread(fd, p, len, static_cast<off_t>(off));
        if (n >= 0) return n;
        if (errno != EINTR) return -errno;
      }
    });
  }

  int close(int fd, int64_t* ns) override { return psync_close(fd, ns); }

 private:
  bool direct_;
  Bounce buf_;
};

class UringRangeReader final : public RangeReader {
 public:
  explicit UringRangeReader(bool direct) : direct_(direct) {
    RingOptions ro;
    ro.entries = 4;
    int ret = ring_.init(ro);
    if (ret < 0) throw Error(io_uring_setup_failure_text(-ret), kExitFailure);
  }
  const char* engine_name() const override { return "io_uring"; }

  int open(int dirfd, const char* path, int64_t* ns) override { return uring_open(ring_, dirfd, path, direct_, ns); }

  RangeReadResult read(int fd, uint64_t offset, uint64_t length) override {
    return read_span(direct_, offset, length, buf_, [this, fd](char* p, uint64_t len, uint64_t off) -> int64_t {
      io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
      io_uring_prep_read(sqe, fd, p, static_cast<unsigned>(len), off);
      return uring_submit_and_wait(ring_);
    });
  }

  int close(int fd, int64_t* ns) override { return uring_close(ring_, fd, ns); }

 private:
  bool direct_;
  UringRing ring_;
  Bounce buf_;
};

}  // namespace

std::unique_ptr<RangeReader> make_range_reader(EngineKind engine, bool direct) {
  if (engine == EngineKind::kPsync) return std::make_unique<PsyncRangeReader>(direct);
  return std::make_unique<UringRangeReader>(direct);
}

}  // namespace ioprobe
