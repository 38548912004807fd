#include "checkpoint/saver.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <new>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "checkpoint/shard_format.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/free_space.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/engine_choice.hpp"

namespace ioprobe::checkpoint {

namespace {

double cpu_seconds(bool user) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const timeval& tv = user ? ru.ru_utime : ru.ru_stime;
  return tv.tv_sec + tv.tv_usec / 1e6;
}

ErrorRecord describe_failure(const RankSaveResult& r, const std::string& dir) {
  const std::optional<FreeSpace> fs = free_space(dir);
  const bool have = fs.has_value();
  const uint64_t free_bytes = have ? fs->bytes : 0, free_inodes = have ? fs->inodes : 0;
  std::string what;
  if (r.err == ENOSPC) {
    // ENOSPC on create while bytes remain means no inode could be allocated.
    bool inodes = have && (free_inodes == 0 || (r.err_op == "create" && free_bytes > 0));
    what = inodes ? "the filesystem ran out of inodes" : "the filesystem ran out of space (bytes)";
  } else if (r.err == EDQUOT) {
    what = "a disk quota was exceeded";
  } else if (r.err_op == "io_uring_queue_init") {
    what = "io_uring could not be set up: " + io_uring_setup_hint(r.err) + "; ioprobe probe shows the details";
  } else if (r.err == EACCES || r.err == EPERM) {
    what = "permission denied: choose a writable --dir";
  } else if (r.err == ENOMEM) {
    what = "the host ran out of memory";
  } else if (r.err == EIO) {
    what = "the device reported an I/O error: check dmesg and the device's health";
  } else {
    what = "the save failed";
  }
  // err_detail is the whole IoError message (op and path included) for these operations: the
  // record's errno says it.
  const bool whole_message = r.err_op == "create" || r.err_op == "open" || r.err_op == "io_uring_queue_init";
  std::string detail = r.err_detail.empty() || whole_message ? std::string() : r.err_detail + "; ";
  detail += fmt::format("{} written of this shard; {} free, {} free inodes; {}; no file was published and temporary "
                        "files were removed",
                        format_bytes(r.written_bytes), have ? format_bytes(free_bytes) : "unknown",
                        have ? format_count(free_inodes) : "unknown", what);
  return ErrorRecord{.err = r.err, .op = r.err_op, .path = r.path, .detail = detail};
}

}  // namespace

namespace {

// rename(2) that never replaces: a file that appeared under the final name since the run checked
// (a second writer in the same directory) is kept and the call fails with EEXIST. Filesystems
// without RENAME_NOREPLACE (EINVAL) get a check just before a plain rename.
int publish(const std::string& tmp, const std::string& final) {
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  struct stat st {};
  if (::lstat(final.c_str(), &st) == 0) {
    errno = EEXIST;
    return -1;
  }
  return ::rename(tmp.c_str(), final.c_str());
}

}  // namespace

std::string shard_path(const std::string& dir, int rank) { return dir + "/" + shard_file_name(rank); }

SaveResult save_checkpoint(std::vector<ResidentState>& states, const std::string& dir, const SaveOptions& opts,
                           bool async, TrainingEmulator* emulator) {
  SaveResult res;
  res.async = async;
  const size_t n = states.size();
  res.ranks.resize(n);
  std::vector<std::string> tmp(n), final(n);
  for (size_t i = 0; i < n; ++i) {
    final[i] = shard_path(dir, states[i].rank().rank);
    tmp[i] = fmt::format("{}.ioprobe-tmp.{}", final[i], getpid());
  }
  // Async staging buffers are allocated (and faulted in) before the clock starts, as frameworks
  // keep pinned staging buffers across checkpoints.
  std::vector<ResidentState> staging;
  if (async) {
    staging.reserve(n);
    for (auto& s : states) staging.emplace_back(s.rank(), s.region_cap(), 0, false, opts.io.huge_pages);
  }
  std::atomic<bool> abort{false};
  const double u0 = cpu_seconds(true), s0 = cpu_seconds(false);
  const int64_t t0 = now_ns();

  if (async) {
    std::vector<std::jthread> copiers;
    for (size_t i = 0; i < n; ++i) copiers.emplace_back([&, i] { staging[i].copy_from(states[i]); });
    for (auto& t : copiers) t.join();
    res.staged_ns = now_ns() - t0;
  }
  std::atomic<size_t> running{n};
  // When each rank's save returned: with --async, training steps go on until the step in flight
  // ends, but the storage's figures end with the last rank.
  std::vector<int64_t> rank_end(n, 0);
  std::vector<std::jthread> writers;  // joined on every exit
  for (size_t i = 0; i < n; ++i) {
    try {
      writers.emplace_back([&, i] {
        try {
          res.ranks[i] = save_shard(async ? staging[i] : states[i], tmp[i], opts, &abort);
        } catch (const std::exception& e) {  // save_shard reports its own failures; this is a last resort
          RankSaveResult& r = res.ranks[i];
          r.rank = states[i].rank().rank;
          r.path = tmp[i];
          r.err = dynamic_cast<const std::bad_alloc*>(&e) ? ENOMEM : EINVAL;
          r.err_op = "create";  // not known to be ours: never removed
          r.err_detail = e.what();
        }
        if (res.ranks[i].err) abort.store(true);
        rank_end[i] = now_ns();
        running.fetch_sub(1);
      });
    } catch (const std::system_error& e) {
      // No thread for rank i (EAGAIN: a thread or memory limit): it fails, the ranks started
      // stop (abort), and the ones after it never start. None of them created a file.
      abort.store(true);
      for (size_t j = i; j < n; ++j) {
        RankSaveResult& r = res.ranks[j];
        r.rank = states[j].rank().rank;
        r.path = tmp[j];
        r.err_op = "create";
        r.interrupted = j > i;
      }
      res.ranks[i].err = e.code().value() ? e.code().value() : EAGAIN;
      res.ranks[i].err_detail = fmt::format("cannot start the rank's writer thread ({}); lower --ranks", e.what());
      running.fetch_sub(n - i);
      break;
    }
  }
  // The emulated training steps run on this thread: their CPU is training's, not the save's.
  int64_t training_cpu_ns = 0;
  if (async && emulator) {
    const int64_t c0 = thread_cpu_ns();
    while (running.load() > 0 && !interrupted()) res.step_s.push_back(emulator->step());
    training_cpu_ns = thread_cpu_ns() - c0;
  }
  for (auto& t : writers) t.join();
  const int64_t joined = now_ns();
  int64_t last_rank = t0;
  for (int64_t e : rank_end) last_rank = std::max(last_rank, e ? e : joined);  // 0: the rank's thread never started
  res.ranks_done_ns = last_rank - t0;

  bool all_ok = true;
  for (const auto& r : res.ranks) {
    if (r.err && res.failed_rank < 0) res.failed_rank = r.rank;
    if (r.err || r.interrupted) all_ok = false;
  }
  if (interrupted()) all_ok = false;
  res.interrupted = !all_ok && res.failed_rank < 0;
  if (!all_ok) {
    if (res.failed_rank >= 0) {  // free space is read before our temporary files are removed
      for (const auto& r : res.ranks)
        if (r.rank == res.failed_rank) res.failure = describe_failure(r, dir);
      res.interrupted = false;
    }
    for (size_t i = 0; i < n; ++i)  // only files this save created (a failed O_EXCL create made none)
      if (res.ranks[i].err_op != "create") ::unlink(tmp[i].c_str());
  } else {
    int64_t p0 = now_ns();
    for (size_t i = 0; i < n && res.failure.empty(); ++i) {
      if (publish(tmp[i], final[i]) != 0) {
        int e = errno;
        res.failure = ErrorRecord{
            .err = e,
            .op = "rename " + escape_bytes(tmp[i]) + " ->",
            .path = final[i],
            .detail = e == EEXIST ? "it appeared while this save ran (another ioprobe, or another job, writing to the "
                                    "same --dir?); it was left as it is and this save was not published"
                                  : ""};
        for (size_t j = 0; j < i; ++j) ::unlink(final[j].c_str());  // ours, published a moment ago
        for (size_t j = i; j < n; ++j) ::unlink(tmp[j].c_str());
      }
    }
    if (res.failure.empty()) {
      int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0 || (opts.fsync && ::fsync(dfd) != 0)) {
        int e = errno;
        res.failure = ErrorRecord{.err = e,
                                  .op = dfd < 0 ? "open" : "fsync",
                                  .path = dir,
                                  .detail = "the directory entry may not be durable"};
      }
      if (dfd >= 0) ::close(dfd);
    }
    res.publish_ns = now_ns() - p0;
    if (res.failure.empty()) {
      res.ok = true;
      res.final_paths = final;
      res.durable_ns = res.ranks_done_ns + res.publish_ns;
    }
  }
  res.user_cpu_s = std::max(0.0, cpu_seconds(true) - u0 - static_cast<double>(training_cpu_ns) / 1e9);
  res.sys_cpu_s = cpu_seconds(false) - s0;
  return res;
}

}  // namespace ioprobe::checkpoint
