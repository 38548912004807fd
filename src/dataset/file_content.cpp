#include "dataset/file_content.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "dataset/dataset_dir.hpp"
#include "dataset/generator.hpp"
#include "dataset/jpeg_content.hpp"

namespace ioprobe {

void fill_pseudorandom(char* buf, size_t len, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    x += 0x9E3779B97F4A7C15ULL;  // splitmix64
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    std::memcpy(buf + i, &z, 8);
  }
  for (; i < len; ++i) buf[i] = static_cast<char>(x >> (8 * (i % 8)));
}

namespace {

// Writes all `len` bytes to `fd` (retrying short writes and EINTR); on failure closes `fd` and
// throws IoError naming `path`.
void write_all(int fd, const char* data, size_t len, const std::string& path) {
  size_t off = 0;
  while (off < len) {
    ssize_t n = write(fd, data + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      throw IoError(e, "write", path, e == ENOSPC ? "the filesystem is full" : "");
    }
    off += static_cast<size_t>(n);
  }
}

// Creates `path` for a generated file; never opens one that exists: the earlier generation's files
// are gone by now (remove_listed_files), so a file there is someone else's.
int create_new(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) return fd;
  const int e = errno;
  if (e == EEXIST) throw foreign_file_error(path);
  throw IoError(e, "create", path, e == ENOSPC ? "the filesystem is out of space or inodes" : "");
}

}  // namespace

uint64_t write_one(const std::string& path, uint64_t size, uint64_t seed, ContentKind content, std::vector<char>& buf) {
  JpegFile jpeg;
  if (content == ContentKind::kJpeg)
    jpeg = make_jpeg_file(size, seed);  // before the file exists: a failure leaves none
  const int fd = create_new(path);
  if (content == ContentKind::kJpeg) {
    write_all(fd, reinterpret_cast<const char*>(jpeg.bytes.data()), jpeg.bytes.size(), path);
  } else {
    if (buf.size() < size) buf.resize(size);
    fill_pseudorandom(buf.data(), size, seed);
    write_all(fd, buf.data(), size, path);
  }
  if (close(fd) != 0) throw IoError(errno, "close", path);
  return content == ContentKind::kJpeg ? size - jpeg.image_bytes : 0;
}

void write_records(const std::string& path, const std::vector<uint64_t>& sizes, uint64_t first, uint64_t count,
                   uint64_t seed, std::vector<char>& buf) {
  const int fd = create_new(path);
  constexpr size_t kChunk = 4u << 20;
  if (buf.size() < kChunk) buf.resize(kChunk);
  size_t used = 0;
  auto flush = [&] {
    write_all(fd, buf.data(), used, path);
    used = 0;
  };
  for (uint64_t r = first; r < first + count; ++r) {
    uint64_t left = sizes[r], piece = 0;
    while (left > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, kChunk - used));
      fill_pseudorandom(buf.data() + used, n, seed ^ (r * 0x100000001B3ULL) ^ (piece++ << 48));
      used += n;
      left -= n;
      if (used == kChunk) flush();
    }
  }
  flush();
  if (close(fd) != 0) throw IoError(errno, "close", path);
}

}  // namespace ioprobe
