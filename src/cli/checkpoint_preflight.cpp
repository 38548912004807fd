#include "cli/checkpoint_preflight.hpp"

#include <unistd.h>
#include <csignal>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checkpoint/chunker.hpp"
#include "checkpoint/shard_format.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/free_space.hpp"
#include "core/message.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace ioprobe::cli {

void check_buffers(const checkpoint::CheckpointRunData& d, bool restore, uint64_t budget) {
  const auto& o = d.opts;
  const uint64_t ranks_n = d.state.ranks.size();
  const uint64_t io = o.io.io_size * std::max<uint64_t>(o.io.depth, restore ? 4 : 0) * ranks_n;
  const uint64_t kWorker = 20ull << 20;
  const uint64_t workers = o.compress.enabled ? (static_cast<uint64_t>(std::max(1, o.compress_threads)) +
                                                 (restore ? std::max(1, d.restore_threads) : 0)) *
                                                    ranks_n
                                              : 0;
  if (io + workers * kWorker > budget)
    throw UsageError(
        fmt::format("--io-size {} x --io-depth {}{} x {} rank(s) = {} of I/O buffers{}: above half of this "
                    "host's memory ({}); lower --io-size, --io-depth{}",
                    format_bytes(o.io.io_size), o.io.depth,
                    restore && o.io.depth < 4 ? " (4 for the restore's reads)" : "", ranks_n, format_bytes(io),
                    workers ? fmt::format(", and {} (de)compression workers x ~20 MiB", workers) : std::string(),
                    format_bytes(budget), workers ? ", --compress-threads or --restore-threads" : ""));
  if (d.state.ranks.empty()) return;
  const uint64_t per_rank = d.state.ranks.front().bytes;
  const uint64_t chunks = (per_rank + o.chunk_bytes - 1) / o.chunk_bytes;
  if (chunks > (16u << 20))
    throw UsageError(
        fmt::format("--chunk-size {}: {} chunks per rank (an index of {} in memory, and as many checksums); "
                    "give at least {}",
                    format_bytes(o.chunk_bytes), format_count(chunks), format_bytes(chunks * 48),
                    format_bytes((per_rank + (16u << 20) - 1) / (16u << 20))));
}

std::vector<std::string> zstd_pool_warnings(const checkpoint::SaveOptions& o) {
  using checkpoint::zstd_busy_workers;
  using checkpoint::zstd_job_bytes;
  std::vector<std::string> out;
  if (!o.compress.enabled || o.compress_pool != checkpoint::CompressPool::kZstd || o.compress_threads <= 1) return out;
  // zstd's pool gives a chunk (one frame) one job per job size: fewer jobs than workers leave
  // workers idle, a chunk of exactly one job included.
  const uint64_t job = zstd_job_bytes(o.compress.level, o.chunk_bytes, o.zstd_job_bytes);
  const int busy = zstd_busy_workers(o.compress.level, o.chunk_bytes, o.compress_threads, o.zstd_job_bytes);
  if (o.zstd_job_bytes > 0 && o.zstd_job_bytes < job)
    out.push_back(fmt::format("--zstd-job-size {} is below zstd's minimum job size: zstd uses {}",
                              format_bytes(o.zstd_job_bytes), format_bytes(job)));
  if (busy < o.compress_threads) {
    // zstd sizes its jobs from the chunk, so the advice is a chunk size that keeps every worker
    // busy at the job size zstd picks for that chunk (a fixed point, reached in a few steps).
    uint64_t advice = static_cast<uint64_t>(o.compress_threads) * job;
    for (int i = 0; i < 8; ++i) {
      const uint64_t j = zstd_job_bytes(o.compress.level, advice, o.zstd_job_bytes);
      if (static_cast<uint64_t>(o.compress_threads) * j <= advice) break;
      advice = static_cast<uint64_t>(o.compress_threads) * j;
    }
    out.push_back(fmt::format("--chunk-size {} {} zstd's job size {} at level {}: {} of {} workers busy per chunk{}; "
                              "use chunks of at least {} "
                              "(at that size zstd's jobs are {})",
                              format_bytes(o.chunk_bytes),
                              o.chunk_bytes < job ? std::string("is below")
                                                  : fmt::format("holds {} job(s) of", (o.chunk_bytes + job - 1) / job),
                              format_bytes(job), o.compress.level, busy, o.compress_threads,
                              busy == 1 ? " (zstd multithreading stays off)" : "", format_bytes(advice),
                              format_bytes(zstd_job_bytes(o.compress.level, advice, o.zstd_job_bytes))));
  }
  return out;
}

namespace {

// Whether process `pid` runs here and holds `file` open (its /proc/PID/fd links): a save or raw
// baseline in progress keeps its temporary file open, while after a kill the PID may have been
// given to another program, and the file is a leftover all the same. A process whose descriptors
// cannot be read (another user, another PID namespace) counts as holding it.
bool held_open(long pid, const std::filesystem::path& file) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  std::error_code ec;
  const auto want = std::filesystem::weakly_canonical(file, ec);
  std::filesystem::directory_iterator fds(fmt::format("/proc/{}/fd", pid), ec);
  if (ec) return true;
  for (const auto& fd : fds) {
    std::error_code lec;
    if (std::filesystem::read_symlink(fd.path(), lec) == want) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> leftover_warnings(const std::string& dir) {
  std::vector<std::string> out;
  std::vector<std::string> paths;  // sorted for a stable message
  std::vector<long> pids;
  std::error_code ec;
  for (const auto& de : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = de.path().filename().string();
    const size_t tmp = name.find(".ioprobe-tmp.");
    size_t pid_at = 0;
    if (tmp != std::string::npos) pid_at = tmp + 13;
    else if (name.rfind(".ioprobe-raw.", 0) == 0) pid_at = name.find('.', 13) + 1;  // after ".ioprobe-raw.RANK."
    if (pid_at == 0 || pid_at >= name.size()) continue;
    const long pid = std::strtol(name.c_str() + pid_at, nullptr, 10);
    if (pid > 0 && !held_open(pid, de.path())) {
      paths.push_back(escape_bytes(de.path().string()));
      if (std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
    }
  }
  if (paths.empty()) return out;
  std::sort(paths.begin(), paths.end());
  std::sort(pids.begin(), pids.end());
  // One warning for all of them: a killed multi-rank run leaves a file per rank.
  constexpr size_t kNamed = 3;
  std::string names = paths[0];
  for (size_t i = 1; i < std::min(paths.size(), kNamed); ++i) names += ", " + paths[i];
  if (paths.size() > kNamed) names += fmt::format(" and {} more", paths.size() - kNamed);
  out.push_back(fmt::format("{} {} left by ioprobe process{} {}, which no longer {} {} on this host (killed?); "
                            "remove {} once no other run uses this directory",
                            names, paths.size() == 1 ? "was" : "were", pids.size() == 1 ? "" : "es",
                            fmt::join(pids, ", "), pids.size() == 1 ? "holds" : "hold",
                            paths.size() == 1 ? "it" : "them", paths.size() == 1 ? "it" : "them"));
  return out;
}

void lock_checkpoint_dir(const std::string& dir, std::optional<DirLock>& lock, std::vector<std::string>& made_dirs,
                         bool& created_dir) {
  auto on_wait = [&](const std::string& holder) {
    message(fmt::format("--dir '{}' is in use by {}: two runs in one directory measure each other's I/O; "
                        "waiting until it ends (Ctrl-C to stop)",
                        escape_bytes(dir), holder));
  };
  try {
    lock.emplace(dir, DirLock::Mode::kExclusive, "", on_wait);
  } catch (const IoError& e) {
    std::error_code ec;
    if (e.err() != ENOENT || !std::filesystem::create_directory(dir, ec)) throw;
    made_dirs.insert(made_dirs.begin(), dir);
    created_dir = true;
    lock.emplace(dir, DirLock::Mode::kExclusive, "", on_wait);
  }
}

double parse_params(const std::string& t) {
  std::string s = t;
  double mul = 1;
  if (!s.empty()) {
    char c = static_cast<char>(toupper(s.back()));
    if (c == 'K') mul = 1e3;
    else if (c == 'M') mul = 1e6;
    else if (c == 'B' || c == 'G') mul = 1e9;
    else if (c == 'T') mul = 1e12;
    if (mul != 1) s.pop_back();
  }
  // Decimal only (core/units.hpp parse_decimal): strtod read "0x10B" as 0x10 x 10^9.
  double v = 0;
  try {
    v = parse_decimal(s, "--params");
  } catch (const UsageError&) {
    v = 0;
  }
  if (!(v > 0) || !std::isfinite(v))
    throw UsageError(fmt::format("--params: '{}' is not a parameter count like 7B, 405B, 1.2T or 8e9 (decimal "
                                 "digits, an optional fraction or exponent, then K, M, B/G or T)",
                                 escape_bytes(t)));
  // A count is whole: 1.5 would be cut to 1 in the per-rank shard sizes.
  const double count = v * mul, whole = std::round(count);
  if (std::fabs(count - whole) > 1e-9 * std::max(1.0, count))  // above double rounding of 1.2T
    throw UsageError(
        fmt::format("--params: '{}' is {:.12g} parameters, not a whole number; give a whole count (e.g. {:.0f}) "
                    "or a unit (1.5B = 1,500,000,000)",
                    t, count, std::max(1.0, whole)));
  return whole;
}

uint64_t memory_budget(const HostInfo& h) {
  uint64_t mem = h.memory_bytes;
  if (h.cgroup_memory_limit_bytes && h.cgroup_memory_limit_bytes < mem) mem = h.cgroup_memory_limit_bytes;
  return mem / 2;
}

void checkpoint_preflight(const ParsedCheckpoint& p, const TargetInfo& target, checkpoint::CheckpointRunData& d,
                          const std::function<void(const std::string&)>& warn) {
  const checkpoint::CheckpointConfig& c = p.config;
  using checkpoint::CompressPool;
  using checkpoint::kPieceBytes;
  if (target.memory_backed) d.target_memory_fs = target.fs_type;
  if (target.memory_backed)
    warn(fmt::format("{} is {} (RAM): this measures memory, not a storage device", d.dir, target.fs_type));
  for (const auto& w : leftover_warnings(d.dir)) warn(w);
  if (!c.save.fsync) warn("--fsync false: the save is not durable (page cache); the figures are not storage bandwidth");
  if (static_cast<int>(d.state.ranks.size()) > d.cpus_allowed)
    warn(fmt::format(
        "{} ranks on {} allowed CPUs: the ranks' threads share CPUs, so the figures include that contention "
        "(a training job runs one rank per accelerator, typically 8 per host)",
        d.state.ranks.size(), d.cpus_allowed));
  const int64_t ranks_n = static_cast<int64_t>(d.state.ranks.size());
  if (c.save.compress.enabled && ranks_n <= d.cpus_allowed && c.save.compress_threads * ranks_n > d.cpus_allowed)
    warn(
        fmt::format("{} compression workers ({} per rank) on {} allowed CPUs: they take turns on the CPUs, so the save "
                    "measures the scheduler more than the storage; --compress-threads {} fits",
                    c.save.compress_threads * ranks_n, c.save.compress_threads, d.cpus_allowed,
                    std::max<int64_t>(1, d.cpus_allowed / ranks_n)));
  if (c.restore && p.restore_threads_given && c.save.compress_pool == CompressPool::kZstd)
    warn("--restore-threads has no effect with --compress-pool zstd: its one frame per chunk is decoded on the rank's "
         "thread");
  else if (c.restore && c.save.compress.enabled && ranks_n <= d.cpus_allowed &&
           d.restore_threads * ranks_n > d.cpus_allowed)
    warn(fmt::format("{} restore decompression workers ({} per rank) on {} allowed CPUs: they take turns on the CPUs; "
                     "--restore-threads {} fits",
                     d.restore_threads * ranks_n, d.restore_threads, d.cpus_allowed,
                     std::max<int64_t>(1, d.cpus_allowed / ranks_n)));
  if (c.save.chunk_bytes < (64u << 10))
    warn(fmt::format("--chunk-size {}: every chunk adds a 48 B index entry{} ({:.1f}% more bytes for the index alone) "
                     "and a checksum to verify; training frameworks write chunks of MiB to GiB",
                     format_bytes(c.save.chunk_bytes), c.save.compress.enabled ? " and zstd frame(s) of its own" : "",
                     48.0 * 100.0 / static_cast<double>(c.save.chunk_bytes)));
  if (!c.save.compress.enabled && c.save.byte_group)
    warn("--byte-group without compression only reorders bytes (a copy per chunk, no saving); it helps with --compress "
         "zstd:N");
  // Space preflight. The run writes, one after the other: the raw comparison file (as many bytes
  // as the state), the checkpoint, and the raw file again, after the checkpoint was removed
  // (unless --keep). The peak is the larger of the two, or both with --keep.
  uint64_t ckpt_need = 0, raw_need = 0;
  for (const auto& r : d.state.ranks) {
    ckpt_need += checkpoint::uncompressed_shard_bytes(r.bytes, r.regions.size(), c.save.chunk_bytes);
    raw_need += (r.bytes + 4095) / 4096 * 4096;
  }
  if (!c.save.compress.enabled && target.free_known &&
      ckpt_need > target.free_bytes)  // made directories go with CheckpointDir
    throw Error(fmt::format("not enough space in {}: the checkpoint needs {} ({} shard(s), uncompressed), {} are free; "
                            "free space, choose a smaller --size or another --dir",
                            escape_bytes(d.dir), format_bytes(ckpt_need), d.state.ranks.size(),
                            format_bytes(target.free_bytes)),
                kExitFailure);
  if (c.save.compress.enabled && target.free_known && ckpt_need > target.free_bytes)
    warn(fmt::format(
        "the state ({}) is larger than the free space ({}); the save will fail unless compression saves enough",
        format_bytes(d.state.host_bytes), format_bytes(target.free_bytes)));
  if (c.raw_baseline && c.keep && target.free_known && ckpt_need + raw_need > target.free_bytes)
    warn(fmt::format(
        "with --keep the checkpoint (up to {}) and the raw write after the save ({}) must fit together "
        "and {} are free: that raw run will likely be skipped (the baseline is then the run before the save)",
        format_bytes(ckpt_need), format_bytes(raw_need), format_bytes(target.free_bytes)));
  if (c.save.compress.enabled && c.save.compress_pool == CompressPool::kIoprobe && c.save.compress_threads > 1 &&
      d.state.ranks.front().bytes < static_cast<uint64_t>(c.save.compress_threads) * kPieceBytes)
    warn(fmt::format("a rank's state ({}) is less than {} compression workers x {} pieces: at most {} worker(s) "
                     "can be busy",
                     format_bytes(d.state.ranks.front().bytes), c.save.compress_threads, format_bytes(kPieceBytes),
                     (d.state.ranks.front().bytes + kPieceBytes - 1) / kPieceBytes));
  for (const auto& w : zstd_pool_warnings(c.save)) warn(w);
}

}  // namespace ioprobe::cli
