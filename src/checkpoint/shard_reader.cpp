#include "checkpoint/shard_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "engine/engine_choice.hpp"
#include "engine/uring_reader.hpp"

namespace ioprobe::checkpoint {

namespace {

bool pread_full(int fd, uint8_t* p, size_t n, uint64_t off, std::string& why) {
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0) {
      if (errno == EINTR) continue;
      why = fmt::format("read at offset {}: {}", off, errno_text(errno));
      return false;
    }
    if (r == 0) {
      why = fmt::format("file ends before offset {}", off + n);
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return true;
}

// The trailer at the file's end, then the region table and chunk index it points at, checked
// (shard_format.hpp). Returns "" or why the file is not a shard this ioprobe reads.
std::string read_metadata(int fd, Trailer& t, std::vector<Region>& regions, std::vector<IndexEntry>& index) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fmt::format("fstat: {}", errno_text(errno));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  std::string why;
  uint8_t tb[kTrailerBytes];
  if (size < kTrailerBytes) return fmt::format("file of {} B is too short for the {} B trailer", size, kTrailerBytes);
  if (!pread_full(fd, tb, kTrailerBytes, size - kTrailerBytes, why) || !decode_trailer(tb, t, why)) return why;
  std::vector<uint8_t> meta(size - kTrailerBytes - std::min<uint64_t>(t.meta_offset, size - kTrailerBytes));
  if (!pread_full(fd, meta.data(), meta.size(), t.meta_offset, why) || !decode_metadata(meta, t, regions, index, why))
    return why;
  return {};
}

}  // namespace

std::string check_shard_metadata(const std::string& path, Trailer& t, std::vector<IndexEntry>& index) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(errno, "open", escape_bytes(path)).what();
  std::vector<Region> regions;
  std::string why = read_metadata(fd, t, regions, index);
  ::close(fd);
  return why;
}

ErrorRecord ShardReader::make_cold(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrorRecord{.err = errno, .op = "open", .path = path};
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return {};
}

ShardReader::ShardReader(const std::string& path, uint64_t read_block_bytes, bool cold) : path_(path), cold_(cold) {
  try {
    rd_ = std::make_unique<UringFileReader>(path, UringReaderOptions{static_cast<size_t>(read_block_bytes), 4, cold});
  } catch (const IoError& e) {
    // The ring's refusal keeps its hint (sysctl, seccomp, locked memory); the open's needs none.
    failure_ = ErrorRecord{.err = e.err(),
                           .op = e.op(),
                           .path = path,
                           .detail = e.op() == "io_uring_queue_init" ? io_uring_setup_hint(e.err()) : ""};
    return;
  }
  direct_ = rd_->direct();
  const int fd = rd_->plain_fd();
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<Region> regions;
  const std::string why = read_metadata(fd, trailer_, regions, index_);
  if (!why.empty()) {
    corrupt_ = true;
    failure_ = ErrorRecord{.path = path, .detail = why};  // the line: "PATH: why"
    return;
  }
  shape_.regions = std::move(regions);
  shape_.bytes = trailer_.logical_bytes;
  // The chunks' stored bytes lie back to back from offset 0 to the metadata: one stream, read
  // ahead by the reader; a chunk the index places elsewhere is corrupt (begin_chunk).
  const uint64_t data_end = index_.empty() ? 0 : index_.back().stored_offset + index_.back().stored_len;
  if (rd_->start(0, std::min<uint64_t>(data_end, trailer_.meta_offset)) < 0) {
    failure_ = rd_->last_failure();
    failure_.path = path;
  }
}

ShardReader::~ShardReader() {
  if (rd_ && cold_) ::posix_fadvise(rd_->plain_fd(), 0, 0, POSIX_FADV_DONTNEED);
}

std::string ShardReader::begin_chunk(const IndexEntry& e) {
  if (e.stored_offset != pos_)  // (no bytes are carried over a chunk's end)
    return fmt::format("the index places it at offset {}, the previous chunk ended at {}", e.stored_offset, pos_);
  left_ = e.stored_len;
  read_failure_ = ErrorRecord{};
  return {};
}

bool ShardReader::next(const uint8_t*& p, size_t& k, size_t max) {
  if (left_ == 0 || read_failed()) return false;
  if (blk_pos_ == blk_len_) {
    const int64_t t0 = now_ns();
    const int r = rd_->next(blk_, blk_len_);
    read_ns_ += now_ns() - t0;
    if (r != 0) {
      read_failure_ = r == 1 ? ErrorRecord{.detail = "stored data ends early"} : rd_->last_failure();
      return false;
    }
    blk_pos_ = 0;
  }
  k = static_cast<size_t>(std::min<uint64_t>({blk_len_ - blk_pos_, left_, max}));
  p = blk_ + blk_pos_;
  blk_pos_ += k;
  stored_bytes_ += k;
  pos_ += k;
  left_ -= k;
  return true;
}

}  // namespace ioprobe::checkpoint
