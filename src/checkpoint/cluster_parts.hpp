// A checkpoint across hosts: what each process of an mpirun / srun job measured, and how rank 0
// merges it into the cluster's figures and one row per host.
//
// Merge rules (MLPerf Storage's checkpointing rules): every process
// starts its save right after a common barrier and measures its ranks locally (monotonic clock);
// the save's duration is the maximum over ranks (time to durable: the slowest process's ranks
// written, fsynced and published), its throughput the total bytes over that duration; the raw
// write baseline runs on every host at once and merges the same way (bytes summed, duration the
// slowest rank's). Per-rank and per-host rows are kept beside the merged figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/rank_totals.hpp"
#include "checkpoint/raw_baseline.hpp"
#include "checkpoint/restorer.hpp"
#include "checkpoint/saver.hpp"
#include "checkpoint/state_spec.hpp"
#include "topology/device_io.hpp"

namespace ioprobe::checkpoint {

/// One process's share of a checkpoint across hosts, as sent to rank 0.
struct CheckpointPart {
  int mpi_rank = 0;
  int host_index = 0;  // comm::Comm::host_index()
  std::string hostname;
  std::vector<RankState> state;          // the ranks this process wrote (global rank numbers)
  SaveResult save;                       // its save (ranks in the order of `state`)
  std::vector<uint64_t> file_bytes;      // stat of its published files, per rank
  std::optional<RestoreResult> restore;  // the shards it restored (another process's with a shared --dir)
  std::vector<int> restore_shards;       // the global rank whose shard each restore row read
  std::string restore_writer_host;       // the host that wrote those shards
  // Its host's devices over the restore window (from the barrier before every process's restore
  // to the barrier after), measured by this process; absent without a restore.
  std::optional<DeviceIo> restore_device_io;
  // Its host's devices over the save window: from this process's mark just before its save to
  // the barrier after every process's save (so the host's earliest-starting process covers every
  // save on its host); absent when no save ran.
  std::optional<DeviceIo> save_device_io;
};

/// nlohmann's hooks (cluster_parts_json.cpp has the form): every field, so that rank 0 merges what
/// each process measured. from_json is strict: a missing or mistyped field, or another version,
/// throws UsageError naming its path ("checkpoint part.save.ranks[0][3]").
void to_json(nlohmann::json& j, const CheckpointPart& p);
void from_json(const nlohmann::json& j, CheckpointPart& p);

/// One host: its processes' ranks taken together.
struct CheckpointHostRow {
  std::string hostname;
  int host_index = 0;
  std::vector<int> mpi_ranks;
  std::vector<int> ckpt_ranks;  // global checkpoint ranks written on this host
  SaveTotals save;              // its ranks' save figures (duration = its slowest rank)
  int64_t durable_ns = 0;       // its slowest process's time to durable (published)
  bool restored = false;
  RestoreTotals restore;                   // the shards its processes restored
  std::vector<std::string> restored_from;  // hosts whose shards it read (sorted, unique)
  // The host's devices over the restore window, as its first process measured them (every
  // process of a host sees the same devices over the same window: counted once per host).
  std::optional<DeviceIo> restore_device_io;
  uint64_t restore_file_bytes = 0;  // bytes on disk of the shard files its processes restored
  // The host's devices over the save window, counted once for the host (host_device_io of its
  // processes': the widest window, which covers every save on the host).
  std::optional<DeviceIo> save_device_io;
  uint64_t save_file_bytes = 0;  // bytes on disk of the shard files its ranks published
};

/// The cluster's checkpoint: every rank's rows in global rank order, ready for report/ as one
/// host's run would be, plus the host rows.
struct CheckpointCluster {
  std::vector<RankState> state;          // every rank, by global rank
  SaveResult save;                       // ranks of every process; ok = all ok; times = max over processes
  std::vector<uint64_t> file_bytes;      // by global rank
  std::optional<RestoreResult> restore;  // rows sorted by the shard's global rank
  std::vector<int> restore_shards;       // the shard each restore row read (global rank)
  std::vector<std::string> restore_reader_host, restore_writer_host;  // per restore row
  int restores_from_other_host = 0;           // restore rows read on a host other than the writer's
  std::optional<DeviceIo> restore_device_io;  // the host rows' accounting added (DeviceIo::merge)
  uint64_t restore_file_bytes = 0;            // bytes on disk of every shard restored
  std::optional<DeviceIo> save_device_io;     // the host rows' save accounting added (DeviceIo::merge)
  std::vector<std::string> rank_host;         // hostname per global rank (save rows)
  std::vector<CheckpointHostRow> hosts;       // by host index
  int mpi_ranks = 0;
  std::vector<std::string> warnings;
};

/// Merges the parts (one per process, any order). Throws Error when two processes claim the same
/// global rank or the ranks do not number 0..world-1 without a gap (a configuration mismatch).
CheckpointCluster merge_checkpoint_parts(std::vector<CheckpointPart> parts);

/// The raw write baseline of every host run at once: bytes summed, per-rank durations
/// concatenated, duration = the slowest rank's, O_DIRECT only when every host's was.
RawWriteResult merge_raw_writes(const std::vector<RawWriteResult>& runs);

/// Whose shards process `p` of `sizes.size()` restores across hosts so that none is read on the
/// host that wrote it where possible: the process `shift` places after it (mod the process
/// count), `shift` = the processes on rank 0's host when there are several hosts, else 1 (another
/// process's shard, same host). `host_of[p]` is each process's host index. Returns the source
/// process of every process (a permutation).
std::vector<int> restore_sources(const std::vector<int>& host_of);

}  // namespace ioprobe::checkpoint
