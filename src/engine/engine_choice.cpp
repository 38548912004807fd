#include "engine/engine_choice.hpp"

#include <liburing.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "engine/uring_memlock.hpp"

namespace ioprobe {

namespace {

int read_io_uring_disabled() {
  std::ifstream in("/proc/sys/kernel/io_uring_disabled");
  int v = -1;
  if (!(in >> v)) return -1;
  return v;
}

}  // namespace

std::string memlock_allows_text(const MemlockLimit& l, bool rings_charged, uint64_t ring_bytes) {
  if (l.cap_ipc_lock) return "CAP_IPC_LOCK: io_uring's locked memory is not limited";
  if (l.soft == UINT64_MAX) return "unlimited: io_uring's locked memory is not limited";
  const std::string lim = l.hard == l.soft ? memlock_text(l.soft)
                                           : fmt::format("{} (hard {})", memlock_text(l.soft), memlock_text(l.hard));
  if (!rings_charged)
    return fmt::format("RLIMIT_MEMLOCK {}: this kernel charges only registered buffers to it (rings go to the memory "
                       "cgroup)", lim);
  const uint64_t best = std::max(l.soft, l.hard == UINT64_MAX ? l.soft : l.hard);
  if (best == UINT64_MAX)
    return fmt::format("RLIMIT_MEMLOCK {}: rings cost {} each; the hard limit is unlimited, so ioprobe raises the soft "
                       "limit as a run needs", lim, memlock_text(ring_bytes));
  const uint64_t rings = best / ring_bytes;
  return fmt::format("RLIMIT_MEMLOCK {}: this kernel charges io_uring rings to it ({} per 8-entry ring): io_uring "
                     "for at most {} loader workers in all (one ring each, plus the probe's)", lim,
                     memlock_text(ring_bytes), rings > 0 ? rings - 1 : 0);
}

UringAvailability explain_io_uring(int setup_err, int disabled, uint64_t limit, uint64_t needed, bool cap_ipc_lock) {
  UringAvailability u;
  u.err = setup_err;
  u.ring_ok = setup_err == 0;
  u.io_uring_disabled = disabled;
  u.memlock_limit_bytes = limit;
  u.memlock_needed_bytes = needed;
  u.cap_ipc_lock = cap_ipc_lock;
  std::string sysctl = disabled < 0 ? "io_uring_disabled absent (kernel < 6.6)"
                                    : fmt::format("io_uring_disabled={}", disabled);
  if (setup_err != 0) {
    if (disabled >= 1 && (setup_err == EPERM || setup_err == EACCES))
      u.cause = "disabled by sysctl";
    else if (setup_err == EPERM || setup_err == EACCES)
      u.cause = "blocked by seccomp/container";
    else if (setup_err == ENOSYS)
      u.cause = disabled >= 0 ? "blocked by seccomp/container" : "kernel without io_uring or blocked by seccomp";
    else if (setup_err == ENOMEM && !cap_ipc_lock && limit != UINT64_MAX)
      u.cause = fmt::format("RLIMIT_MEMLOCK ({}) too low for the ring: io_uring charges ring memory to locked memory "
                            "(kernels before 5.12 and from 6.14)", memlock_text(limit));
    else if (setup_err == ENOMEM)
      u.cause = "ring memory refused (ENOMEM: memory cgroup or host memory)";
    else
      u.cause = "ring setup failed";
    std::string hint = u.cause == "disabled by sysctl"
                           ? "as root: sysctl -w kernel.io_uring_disabled=0, or use --engine psync"
                           : u.cause.rfind("blocked", 0) == 0
                                 ? "allow io_uring_setup/io_uring_enter/io_uring_register in the container's "
                                   "seccomp profile, or use --engine psync"
                                 : u.cause.rfind("RLIMIT_MEMLOCK", 0) == 0 ? memlock_fix_text(2 * ring_locked_bytes(8)) + ", or use --engine psync"
                                                                          : "use --engine psync";
    u.message = fmt::format("io_uring unavailable: {} failed with {}; {}: {}; {}", u.syscall, errno_text(setup_err),
                            sysctl, u.cause, hint);
    return u;
  }
  if (needed > 0 && !cap_ipc_lock && limit != UINT64_MAX && needed > limit) {
    u.cause = "RLIMIT_MEMLOCK too low for registered buffers";
    u.message = fmt::format(
        "io_uring unavailable: registered buffers need {} of locked memory but RLIMIT_MEMLOCK is {} (no "
        "CAP_IPC_LOCK); raise it (ulimit -l, or --ulimit memlock=-1 in Docker) or use --engine psync",
        format_bytes(needed), memlock_text(limit));
    return u;
  }
  u.available = true;
  u.cause = "ok";
  u.message = fmt::format("io_uring available ({}; RLIMIT_MEMLOCK {}{})", sysctl, memlock_text(limit),
                          cap_ipc_lock ? ", CAP_IPC_LOCK" : "");
  return u;
}

UringAvailability probe_io_uring(uint64_t registered_bytes) {
  io_uring ring{};
  int rc = io_uring_queue_init(8, &ring, 0);
  if (rc == 0) io_uring_queue_exit(&ring);
  const MemlockLimit ml = read_memlock_limit();
  UringAvailability u = explain_io_uring(rc < 0 ? -rc : 0, read_io_uring_disabled(), ml.soft, registered_bytes, ml.cap_ipc_lock);
  u.memlock_hard_bytes = ml.hard;
  utsname un{};
  u.rings_charged = uname(&un) == 0 ? kernel_charges_rings(un.release) : true;
  u.ring_bytes = ring_locked_bytes(8);
  u.memlock_allows = memlock_allows_text(ml, u.rings_charged, u.ring_bytes);
  return u;
}

EngineChoice choose_engine(const std::string& requested, const TargetInfo& t, bool buffered,
                           const UringAvailability& uring) {
  EngineChoice c;
  if (requested == "psync") {
    c.engine = "psync";
    c.reason = "requested with --engine psync";
    return c;
  }
  if (requested == "io_uring") {
    if (!uring.available)
      throw IoError(uring.err ? uring.err : ENOMEM, uring.syscall, t.path,
                    uring.message + " (--engine io_uring was requested; --engine auto falls back to psync)");
    c.engine = "io_uring";
    c.reason = "requested with --engine io_uring";
    if (buffered || t.memory_backed)
      c.warning = "io_uring on buffered or memory-backed reads measures io-wq/copy overhead, not the device";
    return c;
  }
  if (requested != "auto")
    throw UsageError(fmt::format("--engine '{}' is not one of auto, io_uring, psync", requested));

  c.engine = "psync";
  if (t.memory_backed) {
    c.reason = fmt::format("{} is RAM: pread copies directly, a ring adds only submission overhead", t.fs_type);
  } else if (t.network) {
    c.reason = fmt::format("network filesystem ({}): io_uring punts these reads to io-wq kernel threads", t.fs_type);
  } else if (buffered) {
    c.reason = "buffered (page-cache) reads: io_uring hands them to io-wq kernel worker threads; pread is faster";
  } else if (t.device.empty()) {
    c.reason = "no block device under the target";
  } else if (!uring.available) {
    c.fallback = true;
    if (uring.err == 0)
      c.reason = fmt::format("fallback: io_uring registered buffers need {}, RLIMIT_MEMLOCK is {}",
                             format_bytes(uring.memlock_needed_bytes), memlock_text(uring.memlock_limit_bytes));
    else
      c.reason = fmt::format("fallback: io_uring {}, {}", errno_name(uring.err),
                             uring.io_uring_disabled < 0
                                 ? std::string("io_uring_disabled absent")
                                 : fmt::format("io_uring_disabled={}", uring.io_uring_disabled));
    c.warning = uring.message + "; running psync instead";
  } else {
    c.engine = "io_uring";
    c.reason = fmt::format("O_DIRECT reads on block device {}: io_uring keeps the queue full from few threads",
                           t.device);
  }
  return c;
}

EngineChoice choose_engine(const std::string& requested, const TargetInfo& target, bool buffered) {
  return choose_engine(requested, target, buffered, probe_io_uring());
}

std::string io_uring_setup_hint(int err) {
  const int disabled = read_io_uring_disabled();
  if (err == ENOMEM) return memlock_enomem_text();
  if (disabled >= 1 && (err == EPERM || err == EACCES))
    return fmt::format("disabled by sysctl kernel.io_uring_disabled={}; as root: sysctl -w kernel.io_uring_disabled=0",
                       disabled);
  if (err == EPERM || err == EACCES || err == ENOSYS)
    return fmt::format("blocked by seccomp/container policy (kernel.io_uring_disabled={}); allow io_uring_setup in "
                       "the seccomp profile", disabled < 0 ? std::string("absent") : std::to_string(disabled));
  return "the kernel refused the ring";
}

std::string io_uring_setup_failure_text(int err) {
  const std::string hint = io_uring_setup_hint(err);
  return fmt::format("io_uring_queue_init failed: {}: {}{}", errno_text(err), hint,
                     hint.find("--engine psync") == std::string::npos ? "; rerun with --engine psync" : "");
}

std::string io_uring_canceled_hint(const std::string& error_text) {
  if (error_text.find("(ECANCELED)") == std::string::npos) return {};
  return "ECANCELED from io_uring: most likely the kernel could not start io_uring's worker threads (io-wq), "
         "which count against a cgroup's pids.max and ulimit -u; lower --workers/--numjobs, use --engine psync, "
         "or raise the limit";
}

}  // namespace ioprobe
