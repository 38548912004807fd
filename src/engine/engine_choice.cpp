#include "engine/engine_choice.hpp"

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
#include "engine/uring_ring.hpp"

namespace ioprobe {

std::string memlock_allows_text(const MemlockLimit& l, bool rings_charged, uint64_t ring_bytes) {
  if (l.cap_ipc_lock) return "CAP_IPC_LOCK: io_uring's locked memory is not limited";
  if (l.soft == UINT64_MAX) return "unlimited: io_uring's locked memory is not limited";
  const std::string lim = l.hard == l.soft ? memlock_text(l.soft)
                                           : fmt::format("{} (hard {})", memlock_text(l.soft), memlock_text(l.hard));
  if (!rings_charged)
    return fmt::format("RLIMIT_MEMLOCK {}: this kernel charges only registered buffers to it (rings go to the memory "
                       "cgroup)",
                       lim);
  const uint64_t best = std::max(l.soft, l.hard == UINT64_MAX ? l.soft : l.hard);
  if (best == UINT64_MAX)
    return fmt::format("RLIMIT_MEMLOCK {}: rings cost {} each; the hard limit is unlimited, so ioprobe raises the soft "
                       "limit as a run needs",
                       lim, memlock_text(ring_bytes));
  const uint64_t rings = best / ring_bytes;
  return fmt::format("RLIMIT_MEMLOCK {}: this kernel charges io_uring rings to it ({} per 8-entry ring): io_uring "
                     "for at most {} loader workers in all (one ring each, plus the probe's)",
                     lim, memlock_text(ring_bytes), rings > 0 ? rings - 1 : 0);
}

namespace {

UringAvailability explain(int setup_err, int disabled, const MemlockLimit& limit, uint64_t needed) {
  UringAvailability u;
  u.err = setup_err;
  u.ring_ok = setup_err == 0;
  u.io_uring_disabled = disabled;
  u.memlock_limit_bytes = limit.soft;
  u.memlock_hard_bytes = limit.hard;
  u.memlock_needed_bytes = needed;
  u.cap_ipc_lock = limit.cap_ipc_lock;
  if (setup_err != 0) {
    const RingRefusal why = explain_ring_refusal(setup_err, disabled, limit);
    u.cause = why.cause;
    u.message = fmt::format("io_uring unavailable: {} failed with {}", u.syscall, why.text());
    return u;
  }
  if (needed > 0 && !limit.cap_ipc_lock && limit.soft != UINT64_MAX && needed > limit.soft) {
    u.cause = "RLIMIT_MEMLOCK too low for registered buffers";
    u.message =
        fmt::format("io_uring unavailable: registered buffers need {} of locked memory but RLIMIT_MEMLOCK is {} (no "
                    "CAP_IPC_LOCK); raise it (ulimit -l, or --ulimit memlock=-1 in Docker) or use --engine psync",
                    format_bytes(needed), memlock_text(limit.soft));
    return u;
  }
  u.available = true;
  u.cause = "ok";
  u.message = fmt::format("io_uring available ({}; RLIMIT_MEMLOCK {}{})",
                          disabled < 0 ? std::string("io_uring_disabled absent (kernel < 6.6)")
                                       : fmt::format("io_uring_disabled={}", disabled),
                          memlock_text(limit.soft), limit.cap_ipc_lock ? ", CAP_IPC_LOCK" : "");
  return u;
}

}  // namespace

UringAvailability explain_io_uring(int setup_err, int io_uring_disabled, uint64_t memlock_limit_bytes,
                                   uint64_t memlock_needed_bytes, bool cap_ipc_lock) {
  MemlockLimit l;
  l.soft = memlock_limit_bytes;
  l.hard = memlock_limit_bytes;
  l.cap_ipc_lock = cap_ipc_lock;
  return explain(setup_err, io_uring_disabled, l, memlock_needed_bytes);
}

UringAvailability probe_io_uring(uint64_t registered_bytes) {
  UringRing ring;
  const int rc = ring.init(RingOptions{});  // 8 entries, as a loader worker's ring
  ring.reset();
  const MemlockLimit ml = read_memlock_limit();
  UringAvailability u = explain(rc < 0 ? -rc : 0, read_io_uring_disabled(), ml, registered_bytes);
  utsname un{};
  u.rings_charged = uname(&un) == 0 ? kernel_charges_rings(un.release) : true;
  u.ring_bytes = ring_locked_bytes(8);
  u.memlock_allows = memlock_allows_text(ml, u.rings_charged, u.ring_bytes);
  return u;
}

namespace {

std::string residency_words(double residency) {
  return residency < 0 ? std::string("an unknown share") : fmt::format("{:.0f} %", residency * 100);
}

// auto's pick before availability: the engine and why.
EngineChoice pick_auto(const EngineRequest& r, const TargetInfo& t) {
  EngineChoice c;
  c.engine = EngineKind::kPsync;
  if (t.memory_backed) {
    c.reason = fmt::format("{} is RAM: pread copies directly, a ring adds only submission overhead (io_uring hands "
                           "such reads to io-wq worker threads)",
                           t.fs_type);
    return c;
  }
  if (r.depth > 1) {
    c.engine = EngineKind::kIoUring;
    if (!r.buffered)
      c.reason = fmt::format("O_DIRECT with {} requests in flight per thread: io_uring keeps them in flight from one "
                             "thread",
                             r.depth);
    else if (r.write)
      c.reason = fmt::format("buffered writes with {} requests in flight per thread: io_uring keeps them in flight",
                             r.depth);
    else
      c.reason = fmt::format("buffered reads with {} requests in flight per thread ({} of the data in the page "
                             "cache): one io_uring_enter submits the batch, cached reads complete inline and misses "
                             "are read asynchronously; pread would run one at a time",
                             r.depth, residency_words(r.residency));
    return c;
  }
  if (t.network) {
    c.reason = fmt::format("network filesystem ({}): io_uring punts these reads to io-wq kernel threads", t.fs_type);
  } else if (r.buffered) {
    c.reason = r.write ? "buffered writes at queue depth 1: pwrite copies into the page cache, nothing to keep in "
                         "flight"
                       : "buffered (page-cache) reads at queue depth 1: a cached read is one copy and a miss is "
                         "punted to io-wq kernel worker threads by io_uring; pread is faster";
  } else if (t.device.empty()) {
    c.reason = "no block device under the target";
  } else {
    c.engine = EngineKind::kIoUring;
    c.reason =
        r.file_per_read
            ? fmt::format("O_DIRECT on block device {}: io_uring opens, reads and closes a file in one system call",
                          t.device)
            : fmt::format("O_DIRECT on block device {}: one io_uring_enter per read, into registered "
                          "buffers that spare the page pinning each O_DIRECT pread pays",
                          t.device);
  }
  return c;
}

}  // namespace

EngineChoice choose_engine(const EngineRequest& r, const TargetInfo& t, const UringAvailability& uring) {
  EngineChoice c;
  if (r.requested == EngineSelection::kPsync) {
    c.engine = EngineKind::kPsync;
    c.reason = "requested with --engine psync";
    return c;
  }
  if (r.requested == EngineSelection::kIoUring) {
    if (!uring.available)
      throw IoError(uring.err ? uring.err : ENOMEM, uring.syscall, t.path,
                    uring.message + " (--engine io_uring was requested; --engine auto falls back to psync)");
    c.engine = EngineKind::kIoUring;
    c.reason = "requested with --engine io_uring";
    if ((r.buffered && r.depth <= 1) || t.memory_backed)
      c.warning = "io_uring on buffered or memory-backed reads measures io-wq/copy overhead, not the device";
    return c;
  }
  c = pick_auto(r, t);
  if (c.engine != EngineKind::kIoUring || uring.available) return c;
  c.engine = EngineKind::kPsync;
  c.fallback = true;
  if (uring.err == 0)
    c.reason = fmt::format("fallback: io_uring registered buffers need {}, RLIMIT_MEMLOCK is {}",
                           format_bytes(uring.memlock_needed_bytes), memlock_text(uring.memlock_limit_bytes));
  else
    c.reason = fmt::format("fallback: io_uring {}, {}", errno_name(uring.err),
                           uring.io_uring_disabled < 0 ? std::string("io_uring_disabled absent")
                                                       : fmt::format("io_uring_disabled={}", uring.io_uring_disabled));
  c.warning = uring.message + "; running psync instead";
  return c;
}

EngineChoice choose_engine(EngineSelection requested, const TargetInfo& t, bool buffered,
                           const UringAvailability& uring) {
  EngineRequest r;
  r.requested = requested;
  r.buffered = buffered;
  return choose_engine(r, t, uring);
}

EngineChoice choose_engine(EngineSelection requested, const TargetInfo& target, bool buffered) {
  return choose_engine(requested, target, buffered, probe_io_uring());
}

std::string io_uring_setup_hint(int err) { return explain_ring_refusal(err).hint(); }

std::string io_uring_setup_failure_text(int err) {
  return "io_uring_queue_init failed: " + explain_ring_refusal(err).text();
}

std::string io_uring_canceled_hint(int err) {
  if (err != ECANCELED) return {};
  return "ECANCELED from io_uring: most likely the kernel could not start io_uring's worker threads (io-wq), "
         "which count against a cgroup's pids.max and ulimit -u; lower --workers/--numjobs, use --engine psync, "
         "or raise the limit";
}

}  // namespace ioprobe
