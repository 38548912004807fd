// O_DIRECT probing and STATX_DIOALIGN (declared in topology/target.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "topology/target.hpp"

namespace ioprobe {

std::pair<uint32_t, uint32_t> dio_alignment(const std::string& file) {
#ifdef STATX_DIOALIGN
  struct statx stx {};
  if (statx(AT_FDCWD, file.c_str(), 0, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN))
    return {stx.stx_dio_mem_align, stx.stx_dio_offset_align};
#else
  (void)file;
#endif
  return {0, 0};
}

int probe_o_direct(const std::string& file) {
  auto [mem_align, off_align] = dio_alignment(file);
  size_t align = std::max<size_t>({4096, mem_align, off_align});
  int fd = open(file.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return -errno;
  void* buf = nullptr;
  if (posix_memalign(&buf, align, align) != 0) {
    close(fd);
    return -ENOMEM;
  }
  ssize_t n = pread(fd, buf, align, 0);
  int err = n < 0 ? errno : 0;
  free(buf);
  close(fd);
  return -err;
}

}  // namespace ioprobe
