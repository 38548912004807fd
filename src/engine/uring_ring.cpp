#include "engine/uring_ring.hpp"

#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe {

namespace {

bool sysctl_can_refuse(int err) { return err == EPERM || err == EACCES || err == ENOSYS; }

std::string sysctl_text(int disabled) {
  return disabled < 0 ? std::string("io_uring_disabled absent (kernel < 6.6)")
                      : fmt::format("io_uring_disabled={}", disabled);
}

std::string limit_text(const MemlockLimit& l) {
  if (l.soft == l.hard) return memlock_text(l.soft);
  return fmt::format("{} (soft; hard {})", memlock_text(l.soft), memlock_text(l.hard));
}

}  // namespace

int read_io_uring_disabled() {
  std::ifstream in("/proc/sys/kernel/io_uring_disabled");
  int v = -1;
  if (!(in >> v)) return -1;
  return v;
}

RingRefusal explain_ring_refusal(int err, int disabled, const MemlockLimit& l) {
  RingRefusal r;
  r.err = err;
  r.io_uring_disabled = disabled;
  const bool limited = !l.cap_ipc_lock && l.soft != UINT64_MAX;
  if (disabled >= 1 && (err == EPERM || err == EACCES)) {
    r.cause = "disabled by sysctl";
    r.fix = "as root: sysctl -w kernel.io_uring_disabled=0, or use --engine psync";
  } else if (err == EPERM || err == EACCES || (err == ENOSYS && disabled >= 0)) {
    // The sysctl exists (kernel 6.6+, so io_uring is built in) and allows it: a filter refused.
    r.cause = "blocked by seccomp/container";
    r.fix = "allow io_uring_setup, io_uring_enter and io_uring_register in the container's seccomp profile, or use "
            "--engine psync";
  } else if (err == ENOSYS) {
    r.cause = "kernel without io_uring or blocked by seccomp";
    r.fix = "use a kernel built with CONFIG_IO_URING, allow the io_uring system calls in the seccomp profile, or "
            "use --engine psync";
  } else if (err == ENOMEM && limited) {
    r.cause = fmt::format("RLIMIT_MEMLOCK is {}, too low: io_uring charges its rings (kernels before 5.12 and from "
                          "6.14) and registered buffers to the locked-memory limit (per user)",
                          limit_text(l));
    r.fix = fmt::format("{}, use fewer workers/jobs, or use --engine psync",
                        memlock_fix_text(std::max<uint64_t>(2 * l.soft, 2 * ring_locked_bytes(8))));
  } else if (err == ENOMEM) {
    r.cause = "ring memory refused (ENOMEM: memory cgroup or host memory)";
    r.fix = fmt::format("RLIMIT_MEMLOCK is {}{}, so the memory cgroup or the host ran out of memory: free memory or "
                        "raise the cgroup's memory.max, or use --engine psync",
                        memlock_text(l.soft), l.cap_ipc_lock ? " with CAP_IPC_LOCK" : "");
  } else {
    r.cause = "ring setup failed";
    r.fix = "use --engine psync";
  }
  return r;
}

RingRefusal explain_ring_refusal(int err) {
  return explain_ring_refusal(err, read_io_uring_disabled(), read_memlock_limit());
}

std::string RingRefusal::hint() const {
  if (sysctl_can_refuse(err)) return fmt::format("{}: {}; {}", sysctl_text(io_uring_disabled), cause, fix);
  return fmt::format("{}; {}", cause, fix);
}

std::string RingRefusal::text() const { return errno_text(err) + ": " + hint(); }

UringRing::UringRing() = default;

UringRing::~UringRing() { reset(); }

UringRing::UringRing(UringRing&& o) noexcept
    : ring_(std::move(o.ring_)), ok_(std::exchange(o.ok_, false)), sqpoll_(o.sqpoll_),
      single_issuer_(o.single_issuer_) {}

UringRing& UringRing::operator=(UringRing&& o) noexcept {
  if (this != &o) {
    reset();
    ring_ = std::move(o.ring_);
    ok_ = std::exchange(o.ok_, false);
    sqpoll_ = o.sqpoll_;
    single_issuer_ = o.single_issuer_;
  }
  return *this;
}

void UringRing::reset() {
  if (ok_) {
    // Registered files are released at the ring's teardown, which the kernel finishes after
    // io_uring_queue_exit returns (a deferred exit work), so the target's filesystem could stay
    // busy (umount: EBUSY) after ioprobe exited. Unregistering them first drops their references
    // now. Fails harmlessly (-ENXIO) when none are registered.
    io_uring_unregister_files(ring_.get());
    io_uring_unregister_buffers(ring_.get());
    io_uring_queue_exit(ring_.get());
  }
  ok_ = false;
  sqpoll_ = false;
  single_issuer_ = false;
}

int UringRing::init(const RingOptions& opts, std::vector<std::string>* notes) {
  reset();
  if (!ring_) ring_ = std::make_unique<io_uring>();
  *ring_ = io_uring{};
  auto note = [notes](std::string s) {
    if (notes) notes->push_back(std::move(s));
  };
  const unsigned entries = std::max(1u, opts.entries);
  io_uring_params base{};
  if (opts.cq_entries) {
    base.flags = IORING_SETUP_CQSIZE;
    base.cq_entries = opts.cq_entries;
  }
  int r = -EINVAL;
  if (opts.sqpoll) {
    io_uring_params p = base;
    p.flags |= IORING_SETUP_SQPOLL;
    p.sq_thread_idle = opts.sqpoll_idle_ms;
    r = io_uring_queue_init_params(entries, ring_.get(), &p);
    if (r < 0) {
      note(fmt::format("sqpoll: off ({})", errno_name(-r)));
    } else {
      sqpoll_ = true;
      note("sqpoll: on");
    }
  }
  if (!sqpoll_) {
    r = -EINVAL;
    if (opts.single_issuer) {
      io_uring_params p = base;
      p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
      r = io_uring_queue_init_params(entries, ring_.get(), &p);
      if (r == 0) single_issuer_ = true;
      if (r == -EINVAL) note("defer_taskrun: off (EINVAL, kernel < 6.1)");
    }
    if (!opts.single_issuer || r == -EINVAL) {
      io_uring_params p = base;
      r = io_uring_queue_init_params(entries, ring_.get(), &p);
    }
  }
  ok_ = r == 0;
  return r;
}

void UringRing::init_or_throw(const RingOptions& opts, const std::string& op, const std::string& what,
                              std::vector<std::string>* notes, const std::string& extra_hint) {
  const int r = init(opts, notes);
  if (r == 0) return;
  throw IoError(-r, op, what, explain_ring_refusal(-r).hint() + extra_hint);
}

}  // namespace ioprobe
