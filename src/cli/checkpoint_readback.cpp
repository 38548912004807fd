#include "cli/checkpoint_readback.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "checkpoint/restorer.hpp"
#include "checkpoint/shard_reader.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/message.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "report/checkpoint_report.hpp"
#include "report/document.hpp"
#include "report/error_text.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

using namespace checkpoint;

namespace {

constexpr const char* kHowToSave =
    "give the directory that `ioprobe checkpoint --keep --dir DIR` saved into (its shards are __RANK_0.distcp)";

// The rank of a shard name "__RANK_0.distcp", or -1 for any other name.
int shard_rank(const std::string& name) {
  const std::string tail = "_0.distcp";
  if (name.size() <= 2 + tail.size() || name.compare(0, 2, "__") != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return -1;
  const std::string digits = name.substr(2, name.size() - 2 - tail.size());
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return -1;
  return std::atoi(digits.c_str());
}

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

// Refuses shards whose save block (format version 4) disagrees with their names or with each
// other, or that record a world size the shards present do not fill: the ranks missing at the top.
void check_world_size(const std::string& dir, const std::vector<ReadbackShard>& shards) {
  uint32_t world = 0;
  for (const auto& s : shards) {
    const Trailer& t = s.trailer;
    if (t.world_size == 0) continue;  // format versions 1-3: not recorded
    if (t.rank != static_cast<uint32_t>(s.rank))
      throw UsageError(fmt::format("{}: its save block says rank {}, its name rank {}: the file was renamed or copied "
                                   "over another rank's; restore the shards under the names the save gave them",
                                   escape_bytes(s.path), t.rank, s.rank));
    if (world != 0 && t.world_size != world)
      throw UsageError(fmt::format("--dir {}: shards of two saves: {} records a save of {} ranks, another shard {}; "
                                   "give a directory that holds the shards of one save",
                                   escape_bytes(dir), escape_bytes(s.path), t.world_size, world));
    world = t.world_size;
  }
  if (world == 0 || shards.size() >= world) return;
  throw UsageError(fmt::format("--dir {}: the save wrote {} shard(s) (ranks 0 to {}, recorded in each shard), {} "
                               "found here: rank(s) {}{} missing, so this checkpoint is incomplete; copy the missing "
                               "__RANK_0.distcp files into it, or give the directory that holds all of them",
                               escape_bytes(dir), world, world - 1, shards.size(), shards.back().rank + 1,
                               world - 1 > static_cast<uint32_t>(shards.back().rank + 1)
                                   ? fmt::format(" to {} are", world - 1)
                                   : std::string(" is")));
}

}  // namespace

std::vector<ReadbackShard> find_checkpoint_shards(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw UsageError(fmt::format("--dir {}: {}; {}", escape_bytes(dir),
                                 errno == ENOENT ? std::string("no such directory") : errno_text(errno), kHowToSave));
  if (!S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("--dir {}: {}, not a directory; {}", escape_bytes(dir),
                                 S_ISREG(st.st_mode) ? "is a regular file" : "exists", kHowToSave));
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) throw IoError(errno, "opendir", escape_bytes(dir));
  std::vector<ReadbackShard> shards;
  while (const dirent* e = ::readdir(d.get())) {
    const int rank = shard_rank(e->d_name);
    if (rank < 0) continue;
    ReadbackShard s;
    s.path = dir + "/" + e->d_name;
    s.rank = rank;
    shards.push_back(s);
  }
  if (shards.empty())
    throw UsageError(fmt::format("--dir {}: holds no checkpoint ioprobe wrote (no __RANK_0.distcp shard file); {}",
                                 escape_bytes(dir), kHowToSave));
  std::sort(shards.begin(), shards.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  // A save writes one shard per rank, numbered from 0: a gap is a shard lost or not copied. (A
  // missing last rank is seen below, from the world size that shards of format version 4 record.)
  std::string missing;
  int next = 0;
  for (const auto& s : shards) {
    for (int r = next; r < s.rank && missing.size() < 200; ++r)
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", r);
    next = s.rank + 1;
  }
  if (!missing.empty())
    throw UsageError(fmt::format("--dir {}: {} shard file(s), up to rank {}, but none of rank(s) {}: a save writes one "
                                 "shard per rank from rank 0, so this checkpoint is incomplete; copy the missing "
                                 "__RANK_0.distcp files into it, or give the directory that holds all of them",
                                 escape_bytes(dir), shards.size(), shards.back().rank, missing));
  for (auto& s : shards) {
    struct stat fs {};
    if (::stat(s.path.c_str(), &fs) != 0 || !S_ISREG(fs.st_mode))
      throw UsageError(
          fmt::format("{}: not a regular file, so not a shard ioprobe wrote; {}", escape_bytes(s.path), kHowToSave));
    s.file_bytes = static_cast<uint64_t>(fs.st_size);
    std::vector<IndexEntry> index;
    const std::string why = check_shard_metadata(s.path, s.trailer, index);
    if (!why.empty())
      throw UsageError(fmt::format("{}: not a checkpoint shard this ioprobe can read: {}; the file is truncated or "
                                   "damaged, or was not written by ioprobe: read another copy of the checkpoint, "
                                   "or save it again with `ioprobe checkpoint --keep`",
                                   escape_bytes(s.path), why));
  }
  check_world_size(dir, shards);
  return shards;
}

int run_checkpoint_readback(const CommandContext& ctx, const CheckpointConfig& c, const HostInfo& host,
                            int64_t t_start_ns) {
  const bool verify = c.readback == Readback::kVerify;
  if (!c.json_path.empty()) {
    const std::string dir_real = real_path(c.dir), json_dir = real_path(parent_directory(c.json_path));
    if (!dir_real.empty() && dir_real == json_dir)
      throw UsageError(fmt::format("--json {}: inside --dir {}, which {} leaves untouched; write it elsewhere",
                                   escape_bytes(c.json_path), escape_bytes(c.dir),
                                   verify ? "--verify-only" : "--restore-only"));
  }
  ReadbackRun run;
  run.mode = verify ? RestoreMode::kVerifyStored : RestoreMode::kDecode;
  run.dir = c.dir;
  run.shards = find_checkpoint_shards(c.dir);
  run.cold = c.restore_cold;
  const TargetInfo target = probe_target(c.dir, false);  // false: no O_DIRECT probe file written
  if (target.memory_backed) run.memory_fs = target.fs_type;
  std::vector<std::string> paths;
  uint64_t logical = 0;
  for (const auto& s : run.shards) {
    paths.push_back(s.path);
    logical += s.trailer.logical_bytes;
  }
  const int threads = c.restore_threads >= 0
                          ? c.restore_threads
                          : std::max(1, c.cpus_allowed / static_cast<int>(std::max<size_t>(1, paths.size())));
  if (!c.quiet)
    message(fmt::format("{} {} shard(s), {} logical, in {} ({} cache)...", verify ? "verifying" : "restoring",
                        paths.size(), format_bytes(logical), escape_bytes(c.dir), c.restore_cold ? "cold" : "warm"));
  run.result = restore_checkpoint(paths, c.save.io.io_size, threads, c.restore_cold, run.mode);

  CheckpointDocument doc;
  doc.header = checkpoint_header(ctx.argv, host);
  doc.target = target_section(target);
  doc.readback = checkpoint_readback_section(run);
  doc.readback->elapsed_s = (now_ns() - t_start_ns) / 1e9;
  const bool partial = interrupted() || run.result.interrupted;
  doc.partial = partial;
  for (const auto& s : run.shards)
    if (s.trailer.world_size == 0) {
      doc.warnings.push_back(fmt::format(
          "these shards (format version {}) do not record how many ranks the save wrote, so a missing highest rank "
          "cannot be detected: compare the {} shard(s) here with the save's ranks",
          s.trailer.version, run.shards.size()));
      break;
    }
  std::fputs(render_checkpoint_readback_text(doc).c_str(), stdout);
  std::fflush(stdout);
  if (!c.json_path.empty()) write_checkpoint_document(c.json_path, doc);
  if (partial) return interrupt_exit_code() ? interrupt_exit_code() : kExitSigint;
  if (run.result.ok) return kExitOk;
  for (const auto& r : run.result.ranks)
    if (!r.error.empty())
      error_message(fmt::format("{} failed: {}{}", verify ? "verify" : "restore", error_text(r.error),
                                r.corrupt ? "; the shard's bytes are not those it was saved with: read another copy "
                                            "of the checkpoint, and check the device (dmesg, SMART) and any cache or "
                                            "network layer under --dir"
                                          : ""));
  return kExitFailure;
}

}  // namespace ioprobe::cli
