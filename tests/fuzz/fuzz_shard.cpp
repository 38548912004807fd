// libFuzzer target: the restorer (restore_checkpoint) on arbitrary shard files: trailer, region
// table and index parsing, cutting the stored stream into zstd frames, decoding (on the file's
// thread or by a decoder thread: inputs of odd length use one), ungrouping and checksums.
//
// Input: the whole shard file. It is written to a private directory on /dev/shm (tmpfs: no
// O_DIRECT there, so the buffered reader serves it, and fdatasync is free) and restored. The
// seed corpus (tests/fuzz/corpus/shard) holds small shards ioprobe wrote: format version 3
// (one frame per piece, piece checksums; with and without byte grouping), uncompressed, and
// zstd's own pool (one frame per chunk). A corrupt file must come back as an error in the
// result (never a crash, a hang or an exception), and a file that restores must be whole:
// every chunk verified.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "checkpoint/restorer.hpp"

namespace {

// The directory's name outlives the std::string below, which is destroyed before the exit
// handler runs.
char dir_name[64];

const std::string& fuzz_dir() {
  static std::string dir = [] {
    std::strcpy(dir_name, "/dev/shm/ioprobe-fuzz-shard-XXXXXX");
    if (!mkdtemp(dir_name)) std::abort();
    std::atexit([] {  // libFuzzer ends with exit() after -max_total_time: the directory goes
      std::error_code ec;
      std::filesystem::remove_all(dir_name, ec);
    });
    return std::string(dir_name);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz_dir() + "/__0_0.distcp";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  const auto r = ioprobe::checkpoint::restore_checkpoint({path}, 4096, static_cast<int>(size % 2));
  const auto& x = r.ranks.at(0);
  if (r.ok != (x.error.empty() && x.chunks_verified == x.chunks_total)) std::abort();
  if (x.corrupt && x.error.empty()) std::abort();
  return 0;
}
