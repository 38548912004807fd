// `ioprobe checkpoint --restore-only` / `--verify-only`: reads back a checkpoint saved earlier (by
// `ioprobe checkpoint --keep`, here or on another host) from --dir, and writes nothing there: no
// lock file, no temporary file, no shard removed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/config.hpp"
#include "cli/options.hpp"
#include "report/checkpoint_readback.hpp"
#include "topology/host.hpp"

namespace ioprobe::cli {

/// The shard files (__RANK_0.distcp) in `dir`, in rank order, each with its trailer and index
/// read and checked (checkpoint/shard_reader.hpp, check_shard_metadata). Throws UsageError (exit
/// 2) naming the path and what to do when `dir` is missing or not a directory, holds no shard, or
/// a shard's trailer or index is truncated or damaged; IoError when the directory cannot be read.
std::vector<ReadbackShard> find_checkpoint_shards(const std::string& dir);

/// Runs the read-back of `c` (c.readback is not kNone) and prints its report; writes the result
/// document to c.json_path, which may not lie in c.dir. Returns the exit code: 0 every chunk
/// verified, 1 a chunk refused (the message names the shard, the chunk, its byte ranges and the
/// expected and computed checksums) or a read failed, 130/143 interrupted. Throws UsageError as
/// find_checkpoint_shards does, and for a --json path inside --dir.
int run_checkpoint_readback(const CommandContext& ctx, const checkpoint::CheckpointConfig& c, const HostInfo& host,
                            int64_t t_start_ns);

}  // namespace ioprobe::cli
