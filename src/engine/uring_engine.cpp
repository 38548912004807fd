// io_uring engine (liburing). Per setup():
//  - the ring (UringRing, uring_ring.hpp): SINGLE_ISSUER + DEFER_TASKRUN (kernel 6.1+; falls back
//    without them), optional SQPOLL falling back cleanly ("sqpoll: off (EPERM)"),
//  - the fd registered (IOSQE_FIXED_FILE, index 0),
//  - slot buffers registered as fixed buffers (slot i = buffer i = user_data i) when the
//    RLIMIT_MEMLOCK limit (or CAP_IPC_LOCK) allows, else plain buffers with the reason noted.
// commit_and_reap() submits and waits in one io_uring_enter(2).
#include <liburing.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "engine/engine.hpp"
#include "engine/uring_memlock.hpp"
#include "engine/uring_ring.hpp"

namespace ioprobe {

namespace {

unsigned round_up_pow2(unsigned v) {
  unsigned p = 1;
  while (p < v) p <<= 1;
  return p;
}

class UringEngine final : public Engine {
 public:
  ~UringEngine() override { teardown(); }
  const char* name() const override { return "io_uring"; }

  void setup(int fd, const EngineOptions& options) override {
    teardown();
    options_ = options;
    unsigned depth = std::max(1u, options.depth);
    unsigned sq = round_up_pow2(options.sq_entries ? std::min(options.sq_entries, depth) : depth);
    caps_ = EngineCaps{};
    caps_.async = true;
    caps_.max_depth = depth;

    RingOptions ro;
    ro.entries = sq;
    ro.cq_entries = round_up_pow2(std::max(depth, sq) * 2);
    ro.single_issuer = true;
    ro.sqpoll = options.sqpoll;
    ring_.init_or_throw(ro, "io_uring_setup for", "io_uring engine", &caps_.notes);
    caps_.sqpoll = ring_.sqpoll();
    sq_size_ = sq;
    io_uring_register_ring_fd(ring_.get());  // saves an fd lookup per io_uring_enter; optional

    fd_ = fd;
    if (options.register_file) {
      int r = io_uring_register_files(ring_.get(), &fd, 1);
      if (r == 0) {
        caps_.registered_files = true;
        fd_ = 0;
        caps_.notes.emplace_back("registered file: on");
      } else {
        caps_.notes.push_back(fmt::format("registered file: off ({})", errno_name(-r)));
      }
    }

    allocate_slots(depth, options.buffer_bytes, "io_uring engine");
    if (options.fixed_buffers) {
      std::vector<iovec> iov(depth);
      for (unsigned i = 0; i < depth; ++i) iov[i] = {slots_[i].buf, buffer_stride()};
      int r = io_uring_register_buffers(ring_.get(), iov.data(), depth);
      if (r == 0) {
        caps_.fixed_buffers = true;
        caps_.notes.emplace_back("fixed buffers: on");
      } else {
        caps_.notes.push_back(fmt::format("fixed buffers: off ({}; RLIMIT_MEMLOCK {}: raise with ulimit -l)",
                                          errno_name(-r), memlock_text(read_memlock_limit().soft)));
      }
    }
  }

  void teardown() override {
    ring_.reset();
    pending_ = 0;
    free_slots();
  }

  QueueStatus queue(unsigned i) override {
    if (in_flight_ >= caps_.max_depth) return QueueStatus::busy;
    io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
    if (!sqe) return QueueStatus::busy;
    IoSlot& s = slots_[i];
    if (caps_.fixed_buffers) {
      if (s.dir == IoDir::read) io_uring_prep_read_fixed(sqe, fd_, s.buf, s.len, s.offset, static_cast<int>(i));
      else io_uring_prep_write_fixed(sqe, fd_, s.buf, s.len, s.offset, static_cast<int>(i));
    } else {
      if (s.dir == IoDir::read) io_uring_prep_read(sqe, fd_, s.buf, s.len, s.offset);
      else io_uring_prep_write(sqe, fd_, s.buf, s.len, s.offset);
    }
    if (caps_.registered_files) sqe->flags |= IOSQE_FIXED_FILE;
    sqe->user_data = i;
    s.in_flight = true;
    s.start_ns = now_ns();
    ++in_flight_;
    ++pending_;
    return QueueStatus::queued;
  }

  int commit() override {
    if (pending_ == 0) return 0;
    int r = io_uring_submit(ring_.get());
    if (r >= 0) pending_ = 0;
    return r;
  }

  int reap(IoCompletion* out, unsigned max, unsigned min_complete) override {
    return wait_and_collect(out, max, min_complete, false);
  }

  int commit_and_reap(IoCompletion* out, unsigned max, unsigned min_complete) override {
    return wait_and_collect(out, max, min_complete, true);
  }

 private:
  int wait_and_collect(IoCompletion* out, unsigned max, unsigned min_complete, bool submit) {
    min_complete = std::min(min_complete, in_flight_);
    if (submit && pending_ > 0) {
      int r = io_uring_submit_and_wait(ring_.get(), min_complete);
      if (r < 0) return r;
      pending_ = 0;
    } else if (min_complete > 0 && io_uring_cq_ready(ring_.get()) < min_complete) {
      io_uring_cqe* cqe = nullptr;
      int r = io_uring_wait_cqe_nr(ring_.get(), &cqe, min_complete);
      if (r < 0) return r;
    } else if (io_uring_cq_ready(ring_.get()) == 0 && in_flight_ > 0) {
      io_uring_get_events(ring_.get());  // DEFER_TASKRUN: completions post only when we enter
    }
    unsigned head = 0, n = 0;
    io_uring_cqe* cqe = nullptr;
    int64_t now = 0;
    io_uring_for_each_cqe(ring_.get(), head, cqe) {
      if (n == max) break;
      if (n == 0) now = now_ns();
      auto i = static_cast<unsigned>(cqe->user_data);
      IoSlot& s = slots_[i];
      s.res = cqe->res;
      s.in_flight = false;
      out[n].slot = i;
      out[n].res = cqe->res;
      out[n].latency_ns = static_cast<uint64_t>(now - s.start_ns);
      ++n;
    }
    io_uring_cq_advance(ring_.get(), n);
    in_flight_ -= n;
    return static_cast<int>(n);
  }

  UringRing ring_;
  unsigned sq_size_ = 0;
  unsigned pending_ = 0;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<Engine> make_uring_engine() { return std::make_unique<UringEngine>(); }

}  // namespace ioprobe
