// `ioprobe checkpoint` on many hosts: the steps of cmd_checkpoint that differ when mpirun / srun
// started one ioprobe per host (checkpoint/cluster_parts.hpp merges, report/checkpoint_cluster_json
// formats; this file wires them to the command).
//
// Every step that involves the other processes is an exchange: an allgather in which each process
// sends its outcome (ok, interrupted, or its failure) and a payload. A process that fails
// anywhere sends its failure at the next exchange the others reach, so every process learns it
// there and ends with the same exit code, and rank 0 names the host and rank (cluster/collective's
// raise_failures). Decisions that change which exchanges follow (interrupted or not) are taken
// from the exchange's shared outcome, never from one process's own state, so no process waits in
// an exchange the others skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/cluster_parts.hpp"
#include "checkpoint/run_data.hpp"
#include "cli/options.hpp"
#include "comm/comm.hpp"
#include "report/checkpoint_document.hpp"
#include "topology/device_io.hpp"

namespace ioprobe::cli {

class CheckpointJob {
 public:
  explicit CheckpointJob(comm::Comm& comm);
  bool multi() const { return comm_.multi(); }
  bool lead() const { return comm_.rank() == 0; }

  /// Every process's `payload` in MPI rank order (this one's alone without a launcher). Throws
  /// cluster::JobFailure on every process when any process failed.
  std::vector<std::string> exchange(const char* step, const std::string& payload = "");
  /// Sends this process's failure (cluster::outcome_of's encoding) at the exchange the others are
  /// at; always throws cluster::JobFailure.
  [[noreturn]] void fail(const std::string& outcome);
  /// A barrier (an exchange) that returns true when any process was interrupted (Ctrl-C, SIGTERM)
  /// by then. Without a launcher: interrupted().
  bool sync_stopped(const char* step);

  /// Refuses the options that do not run across hosts yet (UsageError): --repeat, --duration, --async.
  void check_options(bool series, bool async) const;
  /// Numbers the checkpoint ranks across processes: this process's `ranks` follow those of the
  /// lower MPI ranks. `size_bytes` is --size (0 with --params). Returns the ranks of the job.
  int number_ranks(int ranks, uint64_t size_bytes);
  int first_rank() const { return first_rank_; }
  /// Keeps this process's ranks of `s` (built for the first first_rank()+ranks ranks with
  /// --params, or for this process's --size alone) and numbers them job-wide.
  void own_ranks(checkpoint::StateSpec& s) const;

  /// Runs `create` (making --dir when missing) on every process in turn: rank 0 first, then the
  /// first process of each other host, then the others, an exchange after each turn. So on each
  /// host the directory is made by the process that then locks it and leaves its markers in it
  /// (detect_dir_placement), and removing it again, empty, after a failure never races another
  /// process's file in it. A `create` that throws ends the job at that turn's exchange.
  /// Without a launcher: create().
  void create_in_turn(const std::function<void()>& create);

  /// Finds out whether --dir is one directory for all processes (shared) or one per host; call
  /// once it exists on every host. The processes that take --dir's lock: rank 0, and on hosts that
  /// do not share rank 0's directory the host's first process.
  void detect_dir_placement(const std::string& dir);
  bool locks_dir() const { return locks_dir_; }

  /// The raw baseline of every process merged (checkpoint::merge_raw_writes); absent with a reason
  /// naming the hosts when any process has none. Without a launcher: `mine` as it is.
  std::optional<checkpoint::RawWriteResult> merge_raw(std::optional<checkpoint::RawWriteResult> mine, std::string& why);

  /// After the save: a save that failed on this process ends the job (naming the checkpoint rank);
  /// after the barrier that waits for every process's save, a mark of `devices`: from the mark
  /// before this process's save to it is this process's save accounting (sent with finish()),
  /// then every process restores, when asked and nothing was interrupted, the shards of the
  /// process restore_sources() gives it (its own when --dir is per host) into d.restore. The
  /// restore runs between two barriers, with a mark of `devices` after the first and after the
  /// second, so that the interval each process measures covers every restore on its host; that
  /// interval becomes this process's restore accounting (sent with finish()).
  void after_save(checkpoint::CheckpointRunData& d, bool restore, DeviceIoRecorder& devices);

  /// Sends every process's part to every process; rank 0 merges them and replaces the ranks,
  /// save, files and restore of `d` with the cluster's. Call on every process.
  void finish(checkpoint::CheckpointRunData& d);
  /// Adds "cluster" and "hosts" to rank 0's document and a host to every rank row.
  void add_sections(CheckpointDocument& doc) const;

 private:
  std::vector<std::string> collect(const char* step, const std::string& tagged);

  comm::Comm& comm_;
  std::vector<std::string> hosts_;  // hostname per MPI rank
  std::vector<int> host_of_;        // host index per MPI rank
  bool shared_ = false;             // --dir is one directory for every host
  bool stopped_ = false;
  int first_rank_ = 0, job_ranks_ = 0;
  uint64_t job_size_bytes_ = 0;
  std::vector<int> first_of_, count_of_;  // per MPI rank
  std::string placement_ = "one host", restore_placement_;
  bool locks_dir_ = true;
  std::vector<int> restore_shards_;
  std::string restore_writer_;
  std::optional<DeviceIo> restore_device_io_;
  std::optional<DeviceIo> save_device_io_;
  std::optional<checkpoint::CheckpointCluster> cluster_;
};

/// Runs `body` on this process; across hosts, a failure on any process ends every process through
/// CheckpointJob::fail, and rank 0's exit code becomes every process's.
int run_checkpoint_job(const CommandContext& ctx, const std::function<int(CheckpointJob&)>& body);

}  // namespace ioprobe::cli
