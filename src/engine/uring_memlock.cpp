#include "engine/uring_memlock.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/io_memory.hpp"

namespace ioprobe {

namespace {

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

uint64_t pow2_at_least(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

bool has_cap_ipc_lock() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    try {
      return (std::stoull(line.substr(7), nullptr, 16) >> 14) & 1;  // CAP_IPC_LOCK = 14
    } catch (...) {
      return false;
    }
  }
  return false;
}

std::string limit_pair(const MemlockLimit& l) {
  if (l.soft == l.hard) return memlock_text(l.soft);
  return fmt::format("{} (soft; hard {})", memlock_text(l.soft), memlock_text(l.hard));
}

}  // namespace

MemlockLimit read_memlock_limit() {
  MemlockLimit l;
  rlimit rl{};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    l.soft = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur;
    l.hard = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : rl.rlim_max;
  }
  l.cap_ipc_lock = has_cap_ipc_lock();
  return l;
}

bool kernel_charges_rings(const std::string& release) {
  int major = 0, minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return true;
  const int v = major * 1000 + minor;
  return v < 5012 || v >= 6014;
}

uint64_t ring_locked_bytes(unsigned sq_entries, unsigned cq_entries, uint64_t page) {
  const uint64_t sq = pow2_at_least(sq_entries ? sq_entries : 1);
  const uint64_t cq = cq_entries ? pow2_at_least(cq_entries) : 2 * sq;
  const uint64_t rings = round_up(64 + cq * 16, 64) + sq * 4;  // struct io_rings, CQEs, SQ array
  return round_up(rings, page) + round_up(sq * 64, page);
}

uint64_t registered_locked_bytes(uint64_t bytes) {
  if (bytes == 0) return 0;
  return bytes >= kHugePageBytes ? round_up(bytes, kHugePageBytes) : round_up(bytes, 4096);
}

std::string memlock_text(uint64_t bytes) {
  if (bytes == UINT64_MAX) return "unlimited";
  const uint64_t kib = (bytes + 1023) / 1024;  // ulimit -l counts KiB
  if (kib < 1024) return fmt::format("{} KiB", kib);
  return fmt::format("{} KiB ({:.2f} MiB)", kib, static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string memlock_fix_text(uint64_t needed) {
  const uint64_t kib = (needed + 1023) / 1024;
  return fmt::format("raise the limit to at least {} KiB: `ulimit -l {}` (up to the hard limit), a `memlock` line in "
                     "/etc/security/limits.conf (or LimitMEMLOCK= for a systemd unit, --ulimit memlock=-1 for "
                     "Docker), or give the process CAP_IPC_LOCK",
                     kib, kib);
}

MemlockPlan plan_memlock(const MemlockNeed& need, const MemlockLimit& limit) {
  MemlockPlan p;
  const uint64_t all = need.total(), rings = need.ring_total();
  const std::string what = fmt::format("{} io_uring ring{} of {}{}{}", need.rings, need.rings == 1 ? "" : "s",
                                       memlock_text(need.ring_bytes),
                                       need.rings_charged ? "" : " (not charged by this kernel)",
                                       need.registered_bytes ? fmt::format(" + {} of registered buffers",
                                                                           memlock_text(need.registered_bytes))
                                                             : "");
  if (limit.cap_ipc_lock || all <= limit.soft) {
    p.step = MemlockStep::fits;
    p.needed = all;
    p.text = fmt::format("locked memory: {} needs {}; RLIMIT_MEMLOCK {}{}", what, memlock_text(all), limit_pair(limit),
                         limit.cap_ipc_lock ? " (CAP_IPC_LOCK: not charged)" : "");
    return p;
  }
  if (all <= limit.hard) {
    p.step = MemlockStep::raise_soft;
    p.needed = all;
    p.raise_to = all;
    p.text = fmt::format("locked memory: {} needs {}; RLIMIT_MEMLOCK soft limit {} raised to {} (hard limit {})", what,
                         memlock_text(all), memlock_text(limit.soft), memlock_text(all), memlock_text(limit.hard));
    return p;
  }
  if (need.registered_bytes && rings <= limit.hard) {
    p.step = MemlockStep::no_fixed_buffers;
    p.needed = rings;
    p.raise_to = rings > limit.soft ? rings : 0;
    p.text = fmt::format("locked memory: {} needs {}, RLIMIT_MEMLOCK is {}: registered (fixed) buffers off, the rings "
                         "alone need {}{}",
                         what, memlock_text(all), limit_pair(limit), memlock_text(rings),
                         p.raise_to ? " (soft limit raised to that)" : "");
    return p;
  }
  p.step = MemlockStep::psync;
  p.needed = all;
  p.text = fmt::format("locked memory: {} needs {}, RLIMIT_MEMLOCK is {}", what, memlock_text(all), limit_pair(limit));
  return p;
}

MemlockNeed loader_memlock_need(uint64_t workers_total, const std::string& kernel_release) {
  MemlockNeed n;
  n.rings = workers_total + 1;
  n.ring_bytes = ring_locked_bytes(8);
  n.rings_charged = kernel_charges_rings(kernel_release);
  return n;
}

MemlockPlan apply_memlock_plan(EngineSelection requested, const MemlockNeed& need, const MemlockLimit& limit,
                               EngineKind& engine, std::string& reason, std::vector<std::string>& warnings) {
  if (engine != EngineKind::kIoUring) return MemlockPlan{};
  MemlockPlan p = plan_memlock(need, limit);
  if (p.raise_to && !raise_memlock_soft(p.raise_to)) p.step = MemlockStep::psync;  // cannot happen below the hard limit
  if (p.step != MemlockStep::psync) {
    if (!limit.cap_ipc_lock && limit.soft != UINT64_MAX) reason += "; " + p.text;  // only where a limit applies
    return p;
  }
  if (requested == EngineSelection::kIoUring)
    throw Error(fmt::format("--engine io_uring: {}; {}, use fewer workers (--workers, --gpus; raw: --numjobs), or "
                            "use --engine psync (--engine auto falls back to psync)",
                            p.text, memlock_fix_text(p.needed)),
                kExitFailure);
  engine = EngineKind::kPsync;
  reason = fmt::format("fallback: io_uring {}", p.text);
  warnings.push_back(fmt::format("io_uring does not fit the locked-memory limit ({}); running psync instead; to use "
                                 "io_uring, {}",
                                 p.text, memlock_fix_text(p.needed)));
  return p;
}

bool raise_memlock_soft(uint64_t bytes) {
  rlimit rl{};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0) return false;
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= bytes) return true;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < bytes) return false;
  rl.rlim_cur = bytes;
  return setrlimit(RLIMIT_MEMLOCK, &rl) == 0;
}

}  // namespace ioprobe
