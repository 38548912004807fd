#include "engine/file_engine.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <cerrno>

#include "core/clock.hpp"
#include "engine/file_ops.hpp"
#include "engine/page_cache.hpp"

namespace ioprobe {

int FileEngine::invalidate(int fd) { return evict_fd(fd); }

int psync_open(int dirfd, const char* path, bool direct, int64_t* ns) {
  const int64_t t0 = now_ns();
  const int fd = ::openat(dirfd, path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  const int res = fd < 0 ? -errno : fd;
  *ns = now_ns() - t0;
  return res;
}

int psync_close(int fd, int64_t* ns) {
  const int64_t t0 = now_ns();
  const int res = ::close(fd) == 0 ? 0 : -errno;
  *ns = now_ns() - t0;
  return res;
}

int uring_submit_and_wait(UringRing& ring) {
  io_uring_cqe* cqe = nullptr;
  int ret = io_uring_submit(ring.get());
  if (ret < 0) return ret;
  while ((ret = io_uring_wait_cqe(ring.get(), &cqe)) == -EINTR) {
  }
  if (ret < 0) return ret;
  const int res = cqe->res;
  io_uring_cqe_seen(ring.get(), cqe);
  return res;
}

int uring_open(UringRing& ring, int dirfd, const char* path, bool direct, int64_t* ns) {
  const int64_t t0 = now_ns();
  io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
  io_uring_prep_openat(sqe, dirfd, path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0), 0);
  const int res = uring_submit_and_wait(ring);
  *ns = now_ns() - t0;
  return res;
}

int uring_close(UringRing& ring, int fd, int64_t* ns) {
  const int64_t t0 = now_ns();
  io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
  io_uring_prep_close(sqe, fd);
  const int res = uring_submit_and_wait(ring);
  *ns = now_ns() - t0;
  return res < 0 ? res : 0;
}

}  // namespace ioprobe
