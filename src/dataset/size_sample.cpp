#include "dataset/size_sample.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace ioprobe {

SizeSample sample_sizes(const FileIndex& index, size_t max_files) {
  SizeSample s;
  s.files = index.size();
  if (index.empty()) return s;
  int dirfd = AT_FDCWD;
  if (!index.root().empty()) dirfd = open(index.root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const size_t n = index.size();
  const size_t step = max_files == 0 || n <= max_files ? 1 : (n + max_files - 1) / max_files;
  for (size_t i = 0; i < n; ++i) {
    int64_t size = index.file_size(i);
    if (size < 0) {
      if (i % step != 0 || dirfd < 0) continue;
      struct stat st {};
      if (fstatat(dirfd, index.path(i), &st, 0) != 0) continue;
      size = st.st_size;
    }
    ++s.sampled;
    s.sampled_bytes += static_cast<uint64_t>(size);
    if (static_cast<uint64_t>(size) > s.largest) {
      s.largest = static_cast<uint64_t>(size);
      s.largest_index = i;
    }
  }
  s.exact = s.sampled == n;
  if (dirfd >= 0 && dirfd != AT_FDCWD) close(dirfd);
  return s;
}

}  // namespace ioprobe
