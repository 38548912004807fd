#include "engine/file_reader.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "engine/engine.hpp"
#include "engine/engine_choice.hpp"
#include "engine/file_ops.hpp"
#include "engine/uring_memlock.hpp"
#include "engine/uring_ring.hpp"

namespace ioprobe {

namespace {

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// A growable 4 KiB-aligned buffer.
class AlignedBuffer {
 public:
  ~AlignedBuffer() { std::free(ptr_); }
  char* get(uint64_t len) {
    if (len > cap_) {
      std::free(ptr_);
      cap_ = round_up(std::max<uint64_t>(len, uint64_t{256} * 1024), kDirectAlign);
      ptr_ = nullptr;
      if (posix_memalign(reinterpret_cast<void**>(&ptr_), kDirectAlign, cap_) != 0) {
        cap_ = 0;
        return nullptr;
      }
    }
    return ptr_;
  }
  char* data() const { return ptr_; }
  uint64_t capacity() const { return cap_; }

 private:
  char* ptr_ = nullptr;
  uint64_t cap_ = 0;
};

// Whether registered buffers cost this process nothing against RLIMIT_MEMLOCK (CAP_IPC_LOCK, or
// no limit): see engine/uring_memlock.hpp for what the kernel charges.
bool memlock_exempt() {
  const MemlockLimit m = read_memlock_limit();
  return m.cap_ipc_lock || m.soft == UINT64_MAX;
}

bool stop_requested(const ReadControl& ctl) { return ctl.stop && ctl.stop->load(std::memory_order_relaxed); }

// First read's length: when the size is known and fits in a chunk, one byte more than the file
// (rounded up to 4 KiB), so that a single read returns short and proves end of file.
uint64_t first_read_len(int64_t hint, uint64_t chunk) {
  if (hint < 0) return chunk;
  return std::min<uint64_t>(round_up(static_cast<uint64_t>(hint) + 1, kDirectAlign), chunk);
}

class PsyncReader final : public FileReader {
 public:
  explicit PsyncReader(const FileReaderOptions& o) : opts_(o) {}
  const char* engine_name() const override { return "psync"; }
  int open(int dirfd, const char* path, int64_t* ns) override { return psync_open(dirfd, path, opts_.direct, ns); }
  int close(int fd, int64_t* ns) override { return psync_close(fd, ns); }

  FileReadResult read_file(int dirfd, const char* path, int64_t hint, const ReadControl& ctl) override {
    FileReadResult r;
    const int64_t t0 = now_ns();
    int fd = ::openat(dirfd, path, O_RDONLY | O_CLOEXEC | (opts_.direct ? O_DIRECT : 0));
    const int64_t t1 = now_ns();
    r.open_ns = t1 - t0;
    if (fd < 0) {
      r.err = errno;
      r.failed_op = "open";
      r.total_ns = r.open_ns;
      return r;
    }
    uint64_t len = first_read_len(hint, opts_.chunk_bytes);
    char* buf = buf_.get(len);
    uint64_t off = 0;
    int requests = 0;
    for (;;) {
      ssize_t n = pread(fd, buf, len, static_cast<off_t>(off));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        r.err = errno;
        r.failed_op = "read";
        break;
      }
      off += static_cast<uint64_t>(n);
      ++requests;
      if (ctl.bytes_read) ctl.bytes_read->add(static_cast<uint64_t>(n));
      if (static_cast<uint64_t>(n) < len || n == 0) break;
      if (stop_requested(ctl)) {
        r.stopped = true;
        break;
      }
      len = opts_.chunk_bytes;
      buf = buf_.get(len);
    }
    const int64_t t2 = now_ns();
    if (::close(fd) != 0 && r.err == 0) {
      r.err = errno;
      r.failed_op = "close";
    }
    const int64_t t3 = now_ns();
    r.bytes = static_cast<int64_t>(off);
    if (r.err == 0 && !r.stopped && requests == 1) r.data = reinterpret_cast<const unsigned char*>(buf);
    r.read_ns = t2 - t1;
    r.close_ns = t3 - t2;
    r.total_ns = t3 - t0;
    return r;
  }

 private:
  FileReaderOptions opts_;
  AlignedBuffer buf_;
};

class UringReader final : public FileReader {
 public:
  explicit UringReader(const FileReaderOptions& o) : opts_(o) {
    int ret = ring_.init(RingOptions{});
    if (ret < 0) throw Error(io_uring_setup_failure_text(-ret), kExitFailure);
    ret = io_uring_register_files_sparse(ring_.get(), 1);
    if (ret < 0) {
      ring_.reset();
      throw Error(fmt::format("io_uring_register_files_sparse failed: {}", errno_text(-ret)), kExitFailure);
    }
  }
  const char* engine_name() const override { return "io_uring"; }
  int open(int dirfd, const char* path, int64_t* ns) override {
    return uring_open(ring_, dirfd, path, opts_.direct, ns);
  }
  int close(int fd, int64_t* ns) override { return uring_close(ring_, fd, ns); }

  FileReadResult read_file(int dirfd, const char* path, int64_t hint, const ReadControl& ctl) override {
    FileReadResult r;
    const int64_t t0 = now_ns();
    uint64_t len = first_read_len(hint, opts_.chunk_bytes);
    char* buf = buffer(len);
    // open -> read -> (close, only when this read will be the last) as one linked chain.
    const bool single = hint >= 0 && static_cast<uint64_t>(hint) < len;  // the first read returns short: EOF
    io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
    // No O_CLOEXEC: a direct (registered) descriptor is never in the fd table, and the kernel
    // rejects the flag for direct opens with EINVAL.
    io_uring_prep_openat_direct(sqe, dirfd, path, O_RDONLY | (opts_.direct ? O_DIRECT : 0), 0, 0);
    sqe->flags |= IOSQE_IO_LINK;
    sqe->user_data = kOpen;
    sqe = io_uring_get_sqe(ring_.get());
    prep_read(sqe, buf, len, 0);
    sqe->flags |= IOSQE_FIXED_FILE | (single ? IOSQE_IO_LINK : 0);
    sqe->user_data = kRead;
    if (single) {
      sqe = io_uring_get_sqe(ring_.get());
      io_uring_prep_close_direct(sqe, 0);
      sqe->user_data = kClose;
    }
    io_uring_submit(ring_.get());
    int open_res = 0, read_res = 0, close_res = 0;
    int64_t t_open = 0, t_read = 0, t_close = 0;
    for (int want = single ? 3 : 2; want > 0; --want) {
      io_uring_cqe* cqe = wait();
      int64_t t = now_ns();
      switch (cqe->user_data) {
        case kOpen:
          open_res = cqe->res;
          t_open = t;
          break;
        case kRead:
          read_res = cqe->res;
          t_read = t;
          break;
        case kClose:
          close_res = cqe->res;
          t_close = t;
          break;
      }
      io_uring_cqe_seen(ring_.get(), cqe);
    }
    uint64_t off = 0;
    bool whole_in_one = false;  // the first read returned the whole file
    bool opened = open_res >= 0;
    if (!opened) {
      r.err = -open_res;
      r.failed_op = "open";
    } else if (read_res < 0) {
      r.err = -read_res;
      r.failed_op = "read";
    } else {
      off = static_cast<uint64_t>(read_res);
      if (ctl.bytes_read) ctl.bytes_read->add(off);
      // Not at end of file yet: continue with chunk-sized reads until a short read.
      uint64_t last = static_cast<uint64_t>(read_res);
      whole_in_one = single || last < len;
      while (!single && last == len) {
        if (stop_requested(ctl)) {
          r.stopped = true;
          break;
        }
        len = opts_.chunk_bytes;
        buf = buffer(len);
        sqe = io_uring_get_sqe(ring_.get());
        prep_read(sqe, buf, len, off);
        sqe->flags |= IOSQE_FIXED_FILE;
        sqe->user_data = kRead;
        io_uring_submit(ring_.get());
        io_uring_cqe* cqe = wait();
        int res = cqe->res;
        io_uring_cqe_seen(ring_.get(), cqe);
        if (res < 0) {
          r.err = -res;
          r.failed_op = "read";
          break;
        }
        last = static_cast<uint64_t>(res);
        off += last;
        if (ctl.bytes_read) ctl.bytes_read->add(last);
      }
      t_read = now_ns();
    }
    if (!single && opened) {
      sqe = io_uring_get_sqe(ring_.get());
      io_uring_prep_close_direct(sqe, 0);
      sqe->user_data = kClose;
      io_uring_submit(ring_.get());
      io_uring_cqe* cqe = wait();
      close_res = cqe->res;
      io_uring_cqe_seen(ring_.get(), cqe);
      t_close = now_ns();
    }
    if (r.err == 0 && close_res < 0 && close_res != -ECANCELED) {
      r.err = -close_res;
      r.failed_op = "close";
    }
    const int64_t t_end = now_ns();
    r.bytes = static_cast<int64_t>(off);
    if (r.err == 0 && !r.stopped && whole_in_one) r.data = reinterpret_cast<const unsigned char*>(buf);
    // Completions of one linked chain may be reaped in one wake-up, so the split into phases is
    // approximate; the total is exact. Clamp so a reordering never yields a negative phase.
    auto nonneg = [](int64_t v) { return v < 0 ? 0 : v; };
    r.open_ns = nonneg((t_open ? t_open : t_end) - t0);
    r.read_ns = t_read ? nonneg(t_read - (t_open ? t_open : t0)) : 0;
    r.close_ns = t_close && t_read ? nonneg(t_close - t_read) : 0;
    r.total_ns = t_end - t0;
    return r;
  }

 private:
  enum : uint64_t { kOpen = 1, kRead = 2, kClose = 3 };

  // The read buffer, registered with the ring (io_uring_register_buffers) whenever it is
  // (re)allocated, so reads are IORING_OP_READ_FIXED: the kernel copies into pages pinned once
  // instead of mapping the user buffer on every read (about 3 µs less CPU per 115 kB file read
  // from the page cache than a plain read on the development VM, tools/floor.c both ways).
  // Registered pages count against RLIMIT_MEMLOCK unless the process is exempt, where the run's
  // rings need that limit: there, and wherever the kernel refuses the registration, reads stay plain.
  char* buffer(uint64_t len) {
    if (len <= buf_.capacity()) return buf_.data();
    if (registered_) {
      io_uring_unregister_buffers(ring_.get());
      registered_ = false;
    }
    char* p = buf_.get(len);
    if (p && fixed_allowed_) {
      iovec iov{p, static_cast<size_t>(buf_.capacity())};
      registered_ = io_uring_register_buffers(ring_.get(), &iov, 1) == 0;
      if (!registered_) fixed_allowed_ = false;
    }
    return p;
  }
  void prep_read(io_uring_sqe* sqe, char* buf, uint64_t len, uint64_t off) const {
    if (registered_) {
      io_uring_prep_read_fixed(sqe, 0, buf, static_cast<unsigned>(len), off, 0);
    } else {
      io_uring_prep_read(sqe, 0, buf, static_cast<unsigned>(len), off);
    }
  }

  io_uring_cqe* wait() {
    io_uring_cqe* cqe = nullptr;
    int ret;
    do {
      ret = io_uring_wait_cqe(ring_.get(), &cqe);
    } while (ret == -EINTR);
    if (ret < 0) std::abort();  // only on ring corruption; nothing sensible to return
    return cqe;
  }

  FileReaderOptions opts_;
  AlignedBuffer buf_;  // before ring_: the ring (and its registration) goes first
  UringRing ring_;
  bool fixed_allowed_ = memlock_exempt();
  bool registered_ = false;
};

}  // namespace

std::unique_ptr<FileReader> make_file_reader(EngineKind engine, const FileReaderOptions& opts) {
  if (engine == EngineKind::kPsync) return std::make_unique<PsyncReader>(opts);
  return std::make_unique<UringReader>(opts);
}

}  // namespace ioprobe
