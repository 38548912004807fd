// Which I/O engine to run against a target, and whether io_uring is usable at all.
//
// probe_io_uring() really creates a ring (io_uring_queue_init) and, on refusal, tells the layers
// apart with /proc/sys/kernel/io_uring_disabled (Linux 6.6+): 1 or 2 means the sysctl refused it;
// 0 (or no such file) with EPERM/ENOSYS means a seccomp filter (Docker's default profile since
// 25.0, moby#47532) or a kernel without io_uring. liburing returns -errno and leaves errno alone,
// so the error is taken from the return value and never printed as "errno 0" (liburing#1384).
//
// Wiring: the run preflight calls probe_io_uring(registered_bytes) once, then
// choose_engine(--engine, target, buffered, availability) and puts EngineChoice in the report
// header ("engine: psync (fallback: io_uring EPERM, io_uring_disabled=0)").
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine_kind.hpp"
#include "engine/uring_memlock.hpp"
#include "topology/target.hpp"

namespace ioprobe {

struct UringAvailability {
  bool available = false;  // a ring could be created (and registered buffers fit, see below)
  bool ring_ok = false;    // io_uring_queue_init succeeded
  int err = 0;             // positive errno of io_uring_setup, 0 when it succeeded
  std::string syscall = "io_uring_setup";
  int io_uring_disabled = -1;  // /proc/sys/kernel/io_uring_disabled, -1 when absent (kernel < 6.6)
  std::string cause;           // "ok" | "disabled by sysctl" | "blocked by seccomp/container" |
                               // "kernel without io_uring" | "RLIMIT_MEMLOCK too low for registered buffers" | other
  uint64_t memlock_limit_bytes = 0;          // RLIMIT_MEMLOCK soft limit (UINT64_MAX = unlimited)
  uint64_t memlock_needed_bytes = 0;         // what registered buffers would pin
  bool cap_ipc_lock = false;                 // CAP_IPC_LOCK lifts the limit
  uint64_t memlock_hard_bytes = UINT64_MAX;  // RLIMIT_MEMLOCK hard limit (UINT64_MAX = unlimited)
  bool rings_charged = true;                 // this kernel charges ring memory to RLIMIT_MEMLOCK (uring_memlock.hpp)
  uint64_t ring_bytes = 0;                   // locked bytes of one 8-entry ring (a loader worker's)
  std::string memlock_allows;                // what the limit allows, for `probe` (memlock_allows_text)
  std::string message;                       // one line: "io_uring unavailable: io_uring_setup failed with EPERM
                        // (Operation not permitted); io_uring_disabled=0: blocked by seccomp/container; ..."
};

/// Creates and destroys an 8-entry ring, reads the sysctl and RLIMIT_MEMLOCK. `registered_bytes`:
/// the bytes of fixed buffers the engine would register (0: none). Never throws.
UringAvailability probe_io_uring(uint64_t registered_bytes = 0);

/// One line for `probe`: the locked-memory limit and how many loader workers' rings it allows
/// (`ring_bytes` each, one more ring for the probe's), or why no limit applies.
std::string memlock_allows_text(const MemlockLimit& limit, bool rings_charged, uint64_t ring_bytes);

/// The pure decision behind probe_io_uring (exposed for tests): explains a setup result `setup_err`
/// (0 or positive errno) given the sysctl value (-1 absent) and the memlock facts.
UringAvailability explain_io_uring(int setup_err, int io_uring_disabled, uint64_t memlock_limit_bytes,
                                   uint64_t memlock_needed_bytes, bool cap_ipc_lock);

/// The engine chosen for a run, and why.
struct EngineChoice {
  EngineKind engine = EngineKind::kPsync;
  std::string reason;     // human sentence for the report header
  bool fallback = false;  // io_uring was wanted (auto on a block device) but refused
  std::string warning;    // non-empty when the user should hear about it
};

/// What an engine is chosen for: the same request gives the same engine whoever asks (the
/// loader's preflight, `raw`, `probe`, `scaling`).
struct EngineRequest {
  EngineSelection requested = EngineSelection::kAuto;
  bool buffered = true;       // through the page cache (no O_DIRECT)
  unsigned depth = 1;         // requests in flight per thread: 1 for a loader worker, raw's --iodepth
  bool write = false;         // raw's write patterns; the loader only reads
  double residency = -1;      // share of the data in the page cache, 0..1 (-1 unknown); for the reason only
  bool file_per_read = true;  // each read opens and closes its own file (a loader's samples); raw reads a
                              // region of one open file: for the reason only
};

/// The one engine chooser. io_uring requested when `uring` says it is refused throws IoError (exit 1) naming the
/// syscall, errno and cause. auto picks:
///  - psync on tmpfs/ramfs (memory copies gain nothing from a ring; io_uring hands them to io-wq);
///  - at depth 1 (a DataLoader worker, raw --iodepth 1), psync for buffered reads (a cached read
///    is one copy; a miss is punted to io-wq or waits for the page anyway, with nothing else to
///    keep in flight), on network/FUSE filesystems (io-wq as well) and where no block device is
///    under the target; io_uring for O_DIRECT reads on a block device (open, read and close in
///    one io_uring_enter per file, no page cache);
///  - at depth > 1, io_uring for O_DIRECT and for buffered reads and writes: one io_uring_enter
///    submits the whole batch, cached reads complete inline and misses are read asynchronously,
///    where psync would run one request at a time (figures: ARCHITECTURE.md's engine row and
///    tools/bench-fio);
///  - psync with `fallback` and a warning when it would pick io_uring and `uring` is refused.
EngineChoice choose_engine(const EngineRequest& request, const TargetInfo& target, const UringAvailability& uring);

/// choose_engine() for a DataLoader worker (depth 1, reads): `buffered` is true when reads go
/// through the page cache (no O_DIRECT).
EngineChoice choose_engine(EngineSelection requested, const TargetInfo& target, bool buffered,
                           const UringAvailability& uring);

/// Same, probing io_uring itself (no registered buffers).
EngineChoice choose_engine(EngineSelection requested, const TargetInfo& target, bool buffered);

/// The message for a worker whose io_uring_queue_init failed with `err` (positive errno): the
/// errno name and which layer refused (sysctl io_uring_disabled, seccomp/container, memlock),
/// ending with "rerun with --engine psync". For Error(..., kExitFailure).
std::string io_uring_setup_failure_text(int err);

/// The hint for an IoError from io_uring_queue_init / io_uring_setup failing with `err` (positive
/// errno): ENOMEM names the locked-memory limit (memlock_enomem_text), EPERM/EACCES/ENOSYS the
/// sysctl or seccomp, by what /proc/sys/kernel/io_uring_disabled says. Every io_uring user
/// (run, raw, checkpoint) words the failure with it.
std::string io_uring_setup_hint(int err);

/// The likely cause of io_uring reads failing with ECANCELED, for reports that show such an
/// error: the kernel cancels a request it hands to io-wq when no io-wq worker thread can be
/// created (io_uring/io-wq.c), and those threads count against a cgroup's pids.max and ulimit -u.
/// Empty unless `err` (positive errno of a failed read) is ECANCELED.
std::string io_uring_canceled_hint(int err);

}  // namespace ioprobe
