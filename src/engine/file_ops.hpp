// engine/-internal: the open and close steps each FileEngine implementation shares (psync: the
// system calls; io_uring: one request on the engine's ring, waited for).
#pragma once

#include <cstdint>

#include "engine/uring_ring.hpp"

namespace ioprobe {

/// openat(2) read-only (O_DIRECT with `direct`, O_CLOEXEC). Returns fd or -errno; `ns` = time taken.
int psync_open(int dirfd, const char* path, bool direct, int64_t* ns);
/// close(2). Returns 0 or -errno; `ns` = time taken.
int psync_close(int fd, int64_t* ns);
/// IORING_OP_OPENAT on `ring` (nothing else in flight), as psync_open.
int uring_open(UringRing& ring, int dirfd, const char* path, bool direct, int64_t* ns);
/// IORING_OP_CLOSE on `ring` (nothing else in flight), as psync_close.
int uring_close(UringRing& ring, int fd, int64_t* ns);
/// Submits what is queued on `ring` and waits for one completion: its result (or -errno).
int uring_submit_and_wait(UringRing& ring);

}  // namespace ioprobe
