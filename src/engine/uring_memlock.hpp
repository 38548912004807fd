// Locked memory (RLIMIT_MEMLOCK) that io_uring needs, and the preflight that compares a run's
// need with the limit before any ring is created.
//
// Kernel rule. io_uring charges pages to the *user* (user_struct->locked_vm, shared by every
// process of the uid) against the caller's RLIMIT_MEMLOCK soft limit, and skips the charge for
// a process with CAP_IPC_LOCK (io_uring/rsrc.c __io_account_mem; ctx->user is only set without
// CAP_IPC_LOCK). Charged:
//  - registered buffers (io_uring_register_buffers): the pinned pages, on every kernel; a
//    transparent huge page counts whole (io_uring/rsrc.c io_buffer_account_pin).
//  - ring memory (the SQ/CQ rings and the SQE array): before Linux 5.12, and again since 6.14,
//    where the rings moved to the region API (commits 8078486e1d53 "io_uring: use region api for
//    SQ" and 81a4058e0cd0 "... for CQ": io_uring/memmap.c io_create_region charges
//    __io_account_mem(ctx->user, nr_pages)). 5.12 to 6.13 charge rings to the memory cgroup
//    instead (commit 26bfa89e25f4 "io_uring: place ring SQ/CQ arrays under memcg memory limits").
// Measured on 6.18 as uid nobody (setpriv) with `ulimit -l 64`: eight 8-entry rings fit, the
// ninth fails with ENOMEM; rings of up to 64 entries cost 8 KiB, 128 entries 16 KiB, 256 entries
// 28 KiB (ring_locked_bytes reproduces these). A ring's pages are uncharged when the kernel frees
// it, which happens asynchronously after close: the preflight counts the ring that
// probe_io_uring() just closed as still charged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine_kind.hpp"

namespace ioprobe {

/// RLIMIT_MEMLOCK of this process and whether it is exempt. Bytes; UINT64_MAX = unlimited.
struct MemlockLimit {
  uint64_t soft = UINT64_MAX;
  uint64_t hard = UINT64_MAX;
  bool cap_ipc_lock = false;  // CAP_IPC_LOCK in the effective set: io_uring charges nothing
};

/// Reads getrlimit(RLIMIT_MEMLOCK) and CapEff from /proc/self/status. Never throws.
MemlockLimit read_memlock_limit();

/// Whether a kernel release ("6.18.44-fc-v1045") charges ring memory to RLIMIT_MEMLOCK:
/// below 5.12 or from 6.14 on (see the rule above). An unparsable release counts as charging.
bool kernel_charges_rings(const std::string& kernel_release);

/// Locked bytes of one ring of `sq_entries` submission entries (rounded up to a power of two)
/// and `cq_entries` completion entries (0 = twice the SQ, the kernel's default): the rings page(s)
/// (a 64-byte header, 16-byte CQEs, the 4-byte SQ index array) plus the 64-byte SQEs, each rounded
/// up to `page_bytes`. io_uring_queue_init(8) -> 8 KiB with 4 KiB pages.
uint64_t ring_locked_bytes(unsigned sq_entries, unsigned cq_entries = 0, uint64_t page_bytes = 4096);

/// Locked bytes of `buffer_bytes` registered as fixed buffers from one allocation: rounded up to
/// 2 MiB transparent huge pages when the allocation is at least 2 MiB (alloc_io_memory advises
/// THP, and a huge page is charged whole), else to 4 KiB pages.
uint64_t registered_locked_bytes(uint64_t buffer_bytes);

/// What a run would lock: `rings` rings of `ring_bytes` each (charged only when
/// `rings_charged`) and `registered_bytes` of fixed buffers in all.
struct MemlockNeed {
  uint64_t rings = 0;
  uint64_t ring_bytes = 0;
  uint64_t registered_bytes = 0;
  bool rings_charged = true;
  uint64_t ring_total() const { return rings_charged ? rings * ring_bytes : 0; }
  uint64_t total() const { return ring_total() + registered_bytes; }
};

/// The preflight's decision, in the order a run tries them.
enum class MemlockStep : uint8_t {
  fits,              // everything fits under the soft limit (or no limit applies)
  raise_soft,        // fits under the hard limit: raise the soft limit to `raise_to` first
  no_fixed_buffers,  // the rings fit, the registered buffers do not: run without them
  psync,             // not even the rings fit: io_uring cannot run
};

struct MemlockPlan {
  MemlockStep step = MemlockStep::fits;
  uint64_t needed = 0;    // bytes the chosen step locks
  uint64_t raise_to = 0;  // raise_soft: the new soft limit (bytes)
  std::string text;       // one line for the report: needed vs limit and what was decided
};

/// Pure decision: compares `need` with `limit`. Prefers raising the soft limit (allowed without
/// privileges up to the hard limit) over dropping registered buffers over psync.
MemlockPlan plan_memlock(const MemlockNeed& need, const MemlockLimit& limit);

/// Locked memory a data-loading run needs: one 8-entry ring per worker (file and range readers
/// alike, no registered buffers) plus the ring probe_io_uring() just closed (uncharged
/// asynchronously). `kernel_release` decides whether rings are charged.
MemlockNeed loader_memlock_need(uint64_t workers_total, const std::string& kernel_release);

/// Carries out plan_memlock for an engine chosen as io_uring (`engine`; any other engine is
/// left alone and the plan is `fits`). raise_soft: raises the soft limit. no_fixed_buffers: the
/// caller runs without registered buffers. psync: with `requested` io_uring throws Error
/// (exit 1) naming needed vs limit and the fix; with auto sets `engine` to psync, `reason` to
/// the fallback and appends a warning. Otherwise the plan's text is appended to `reason` where a
/// limit applies (not with CAP_IPC_LOCK or an unlimited soft limit).
MemlockPlan apply_memlock_plan(EngineSelection requested, const MemlockNeed& need, const MemlockLimit& limit,
                               EngineKind& engine, std::string& reason, std::vector<std::string>& warnings);

/// "64 KiB", "8192 KiB (8.00 MiB)" (ulimit -l counts KiB) or "unlimited".
std::string memlock_text(uint64_t bytes);

/// How to raise the limit to `needed` bytes: ulimit -l, limits.conf, Docker, CAP_IPC_LOCK.
std::string memlock_fix_text(uint64_t needed);

/// Raises the soft RLIMIT_MEMLOCK to `bytes` (at most the hard limit). Returns true on success.
bool raise_memlock_soft(uint64_t bytes);

}  // namespace ioprobe
