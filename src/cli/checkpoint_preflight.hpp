// Checks `ioprobe checkpoint` makes before any work: memory for the buffers besides the state,
// the chunk index's size, zstd's pool against the chunk size, and temporary files a killed
// ioprobe left in --dir; and the lock that keeps a second run out of --dir.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/run_data.hpp"
#include "cli/checkpoint_config.hpp"
#include "core/dir_lock.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

/// Throws UsageError naming the options when the I/O buffers (--io-size x --io-depth per rank,
/// 4 read-ahead blocks with --restore), the (de)compression workers' buffers (about 20 MiB each:
/// 2 frames of compressBound(4 MiB) on huge pages and 1-2 pieces of 4 MiB) and the chunk index
/// (48 B per chunk; at most 16,777,216 chunks per rank) do not fit in `budget` bytes.
void check_buffers(const checkpoint::CheckpointRunData& d, bool restore, uint64_t budget);

/// Warnings for zstd's own pool (--compress-pool zstd, more than 1 thread): a --zstd-job-size
/// below zstd's 512 KiB minimum, and chunks that hold fewer of zstd's jobs than there are workers
/// (naming the busy workers and a chunk size, at zstd's job size for it, that keeps all busy).
std::vector<std::string> zstd_pool_warnings(const checkpoint::SaveOptions& o);

/// The temporary files in `dir` ("*.ioprobe-tmp.PID", ".ioprobe-raw.RANK.PID...") whose ioprobe
/// process no longer holds them open on this host (kill(PID, 0) gives ESRCH, or /proc/PID/fd has
/// no link to the file: the PID was reused), as one warning naming the first 3 paths, how many
/// more, and the processes; empty when there are none. The files are never removed: another host
/// may share the directory.
std::vector<std::string> leftover_warnings(const std::string& dir);

/// Takes `dir`'s exclusive lock into `lock` (core/dir_lock.hpp): one checkpoint run per directory,
/// since a second one would measure against the first one's I/O. While another
/// run holds it, one line on stderr names the holder and this one waits. When the run waited for
/// had created `dir` and removed it, empty, at its end, `dir` is made again and put first in
/// `made_dirs` (deepest first) with `created_dir` set. Throws as DirLock does.
void lock_checkpoint_dir(const std::string& dir, std::optional<DirLock>& lock, std::vector<std::string>& made_dirs,
                         bool& created_dir);

/// The checks and warnings of a run about to start on `target` (with `d`'s state and options):
/// a memory-backed --dir, temporary files a killed run left, no fsync, more ranks or
/// (de)compression workers than allowed CPUs, tiny chunks, byte grouping without compression,
/// zstd's pool; each warning goes to `warn`. Throws Error (exit 1) when an uncompressed
/// checkpoint cannot fit in the free space. Sets d.target_memory_fs.
void checkpoint_preflight(const ParsedCheckpoint& p, const TargetInfo& target, checkpoint::CheckpointRunData& d,
                          const std::function<void(const std::string&)>& warn);

/// --params: a whole parameter count such as 7B, 405B, 1.2T or 8e9. Throws UsageError otherwise.
double parse_params(const std::string& t);

/// Half of the host's RAM, or of its cgroup's limit when lower (bytes): the state's budget.
uint64_t memory_budget(const HostInfo& h);

}  // namespace ioprobe::cli
