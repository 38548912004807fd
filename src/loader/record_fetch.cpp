#include "loader/record_fetch.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

namespace {

void report(const RecordFetchEnv& env, const char* op, uint64_t file, int err) {
  if (env.on_error) env.on_error(ErrorRecord{.err = err, .op = op, .path = env.index->display_path(file)});
}

}  // namespace

ShardStream::~ShardStream() {
  if (fd_ >= 0) ::close(fd_);
}

void ShardStream::reset(std::vector<uint64_t> shards) {
  if (fd_ >= 0) ::close(fd_);  // a cancelled epoch may leave a shard open
  fd_ = -1;
  failed_ = false;
  shards_ = std::move(shards);
  shard_pos_ = 0;
  record_ = record_end_ = read_off_ = next_pos_ = 0;
}

void ShardStream::close_shard(RangeReader& reader, WorkerStats& ws) {
  if (fd_ >= 0) {
    int64_t close_ns = 0;
    reader.close(fd_, &close_ns);
    ws.open_latency.record(static_cast<uint64_t>(open_ns_ + close_ns));
  }
  fd_ = -1;
  failed_ = false;
  ++shard_pos_;
  record_ = record_end_ = read_off_ = 0;
}

void ShardStream::fail_shard(RangeReader& reader, const RecordFetchEnv& env, const char* op, int err) {
  report(env, op, shards_[shard_pos_], err);
  if (fd_ >= 0) {
    int64_t ns = 0;
    reader.close(fd_, &ns);
  }
  fd_ = -1;
  failed_ = true;  // the shard's remaining records are yielded as errors, batch by batch
}

Batch ShardStream::fetch(RangeReader& reader, const RecordFetchEnv& env, WorkerStats& ws, uint64_t begin, uint64_t end,
                         const std::atomic<bool>& cancel) {
  Batch r;
  r.sample_ids.reserve(end > begin ? end - begin : 0);  // one allocation per batch
  const RecordLayout& L = *env.layout;
  const uint64_t K = L.records_per_file();
  if (begin != next_pos_) {  // the schedule and the stream disagree: a bug, not an I/O error
    r.errors = end - begin;
    if (env.on_error)
      env.on_error(ErrorRecord{.op = "fetch batch",
                               .detail = fmt::format("internal: the batch starts at record {} of the worker's stream, "
                                                     "expected {}",
                                                     begin, next_pos_)});
    return r;
  }
  while (next_pos_ < end) {
    if (cancel) {
      r.cancelled = true;
      break;
    }
    if (shard_pos_ >= shards_.size()) {  // cannot happen with a schedule built from the same shards
      r.errors += end - next_pos_;
      next_pos_ = end;
      break;
    }
    const uint64_t f = shards_[shard_pos_];
    if (failed_) {  // records lost with a failed open or read: errors, so samples + errors = records
      for (; record_ < K && next_pos_ < end; ++record_, ++next_pos_) {
        ++r.errors;
        ++ws.errors;
      }
      if (record_ == K) close_shard(reader, ws);
      continue;
    }
    if (fd_ < 0) {
      int fd = reader.open(env.dirfd, env.index->path(f), &open_ns_);
      if (fd < 0) {
        fail_shard(reader, env, "open", -fd);
        continue;
      }
      fd_ = fd;
      record_end_ = L.record_size(f, 0);
    }
    // Yield every record whose bytes are all in.
    while (record_ < K && record_end_ <= read_off_ && next_pos_ < end) {
      ++r.samples;
      r.sample_ids.push_back(f * K + record_);
      ++ws.files;
      ++record_;
      ++next_pos_;
      if (record_ < K) record_end_ += L.record_size(f, record_);
      if (env.per_sample) env.per_sample();
    }
    if (record_ == K) {
      close_shard(reader, ws);
      continue;
    }
    if (next_pos_ >= end) break;
    RangeReadResult rr = reader.read(fd_, read_off_, env.read_size);
    ws.io_bytes += static_cast<uint64_t>(rr.io_bytes);
    if (rr.err || rr.bytes == 0) {  // a read error, or the shard ends before its records do
      fail_shard(reader, env, rr.err ? "read" : "read (shard shorter than its record index)", rr.err ? rr.err : EIO);
      continue;
    }
    read_off_ += static_cast<uint64_t>(rr.bytes);
    r.bytes += static_cast<uint64_t>(rr.bytes);
    ws.bytes += static_cast<uint64_t>(rr.bytes);
    ws.file_latency.record(static_cast<uint64_t>(rr.ns));
  }
  return r;
}

TokenFetcher::~TokenFetcher() {
  for (int fd : fds_)
    if (fd >= 0) ::close(fd);
}

Batch TokenFetcher::fetch(RangeReader& reader, const RecordFetchEnv& env, WorkerStats& ws,
                          const std::vector<uint64_t>& order, uint64_t begin, uint64_t end,
                          const std::atomic<bool>& cancel) {
  Batch r;
  r.sample_ids.reserve(end > begin ? end - begin : 0);  // one allocation per batch
  if (fds_.empty()) fds_.assign(env.layout->files(), -1);
  for (uint64_t pos = begin; pos < end; ++pos) {
    if (cancel) {
      r.cancelled = true;
      break;
    }
    const RecordPlace p = env.layout->locate_fixed(order[pos]);
    int& fd = fds_[p.file];
    if (fd < 0) {
      int64_t ns = 0;
      int res = reader.open(env.dirfd, env.index->path(p.file), &ns);
      if (res < 0) {
        ++r.errors;
        ++ws.errors;
        report(env, "open", p.file, -res);
        if (env.per_sample) env.per_sample();
        continue;
      }
      fd = res;
      ws.open_latency.record(static_cast<uint64_t>(ns));
    }
    RangeReadResult rr = reader.read(fd, p.offset, p.length);
    ws.io_bytes += static_cast<uint64_t>(rr.io_bytes);
    if (rr.err || static_cast<uint64_t>(rr.bytes) != p.length) {
      ++r.errors;
      ++ws.errors;
      report(env, rr.err ? "read" : "read (token file shorter than its samples)", p.file, rr.err ? rr.err : EIO);
    } else {
      ++r.samples;
      r.sample_ids.push_back(order[pos]);
      ++ws.files;
      r.bytes += p.length;
      ws.bytes += p.length;
      ws.file_latency.record(static_cast<uint64_t>(rr.ns));
    }
    if (env.per_sample) env.per_sample();
  }
  return r;
}

}  // namespace ioprobe
