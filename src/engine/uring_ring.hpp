// One io_uring ring, owned (RAII), and the one explanation of a ring the kernel refused.
//
// Every part of engine/ that needs a ring (the raw engine, the loader's whole-file and range
// readers, the checkpoint's writer and reader, the availability probe) sets it up here, so the
// setup flags and their fallbacks, and the words for a refusal, exist once:
//  - SQPOLL when asked; refused (EPERM without privileges before 5.11, ...) -> without it, noted;
//  - SINGLE_ISSUER + DEFER_TASKRUN when asked (one thread submits and reaps); refused with EINVAL
//    (kernel < 6.1) -> plain, noted;
//  - a refusal of the plain ring is explained by explain_ring_refusal(): the errno, which layer
//    refused (the kernel.io_uring_disabled sysctl, a seccomp filter such as Docker's default
//    profile since 25.0 (moby#47532), a kernel without io_uring, the RLIMIT_MEMLOCK charge of
//    uring_memlock.hpp) and what to do. liburing returns -errno and leaves errno alone, so the
//    errno is taken from the return value, never printed as "errno 0" (liburing#1384).
// liburing stays behind this header: users hold a UringRing and call get() in engine/ only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/uring_memlock.hpp"

struct io_uring;

namespace ioprobe {

/// How to set up a ring.
struct RingOptions {
  unsigned entries = 8;            // submission queue entries (the kernel rounds up to a power of 2)
  unsigned cq_entries = 0;         // completion queue entries; 0 = the kernel's default (2 x entries)
  bool single_issuer = false;      // try SINGLE_ISSUER + DEFER_TASKRUN (one thread submits and reaps)
  bool sqpoll = false;             // try SQPOLL (a kernel thread polls the submission queue)
  unsigned sqpoll_idle_ms = 1000;  // SQPOLL: idle time before the poller sleeps (ms)
};

/// Why the kernel refused a ring, and what to do. Pure data; text() is the one-line form.
struct RingRefusal {
  int err = 0;                 // positive errno of io_uring_setup (or of a registration)
  int io_uring_disabled = -1;  // /proc/sys/kernel/io_uring_disabled, -1 when absent (kernel < 6.6)
  /// "disabled by sysctl" | "blocked by seccomp/container" | "kernel without io_uring or blocked
  /// by seccomp" | "RLIMIT_MEMLOCK ..." (names the limit) | "ring memory refused (...)" |
  /// "ring setup failed"
  std::string cause;
  std::string fix;  // what to do, ending with the psync alternative
  /// "EPERM (Operation not permitted): io_uring_disabled=2: disabled by sysctl; as root: ..."
  /// The sysctl is named only where it can be the cause (EPERM, EACCES, ENOSYS).
  std::string text() const;
  /// text() without the errno (for IoError, which names it): "io_uring_disabled=2: disabled by
  /// sysctl; as root: ...", or "cause; fix" where the sysctl cannot be the cause.
  std::string hint() const;
};

/// The pure explanation of a refusal `err` (positive errno) given the sysctl value (-1 absent)
/// and the locked-memory limit. ENOMEM names RLIMIT_MEMLOCK ("RLIMIT_MEMLOCK is 64 KiB") when a
/// limit applies, else the memory cgroup; EPERM/EACCES the sysctl when it is 1 or 2, else
/// seccomp; ENOSYS seccomp or a kernel without io_uring.
RingRefusal explain_ring_refusal(int err, int io_uring_disabled, const MemlockLimit& limit);

/// Same, reading the sysctl and this process's limit. Never throws.
RingRefusal explain_ring_refusal(int err);

/// /proc/sys/kernel/io_uring_disabled, or -1 when absent (kernel < 6.6).
int read_io_uring_disabled();

/// An owned io_uring ring. Move-only; the destructor exits the ring. Not thread-safe.
class UringRing {
 public:
  UringRing();
  ~UringRing();
  UringRing(UringRing&& other) noexcept;
  UringRing& operator=(UringRing&& other) noexcept;
  UringRing(const UringRing&) = delete;
  UringRing& operator=(const UringRing&) = delete;

  /// Sets up the ring with `opts`, falling back as the header says; `notes` (optional) receives
  /// one line per feature decided ("sqpoll: off (EPERM)", "defer_taskrun: off (EINVAL, kernel
  /// < 6.1)"). Returns 0 or -errno of the last attempt. Never throws.
  int init(const RingOptions& opts, std::vector<std::string>* notes = nullptr);

  /// init(), throwing IoError(errno, `op`, `what`, explanation + `extra_hint`) on refusal; `what`
  /// names the user ("io_uring engine" or the file).
  void init_or_throw(const RingOptions& opts, const std::string& op, const std::string& what,
                     std::vector<std::string>* notes = nullptr, const std::string& extra_hint = {});

  /// Exits the ring (idempotent).
  void reset();

  bool ok() const { return ok_; }
  bool sqpoll() const { return sqpoll_; }
  bool single_issuer() const { return single_issuer_; }
  /// The liburing handle, for engine/ only. Valid while ok().
  io_uring* get() const { return ring_.get(); }

 private:
  std::unique_ptr<io_uring> ring_;
  bool ok_ = false;
  bool sqpoll_ = false;
  bool single_issuer_ = false;
};

}  // namespace ioprobe
