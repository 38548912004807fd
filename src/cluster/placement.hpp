// Where a multi-host job's dataset lives, and who prepares it.
//
//  shared:     the same directory on every host (one filesystem): generated once, the files
//              split over the hosts (one writer process per host; cli/run_cluster.cpp) under
//              rank 0's lock, one manifest published by rank 0 when every host's share is
//              written; then every process checks the one manifest.
//  node-local: each host has its own copy at the same path: the first process of every host
//              generates (or checks) its host's copy, the host's other processes then reuse it.
// Generated datasets are told apart by a marker file rank 0 leaves beside the dataset directory
// for the others to look for (created and removed by ioprobe). The user's own files are never
// written to: their placement follows from the filesystem each host reads them on.
#pragma once

#include <functional>
#include <string>

#include "comm/comm.hpp"

namespace ioprobe::cluster {

struct Placement {
  std::string kind = "single host";  // "single host" | "shared" | "node-local"
  std::string how;                   // how it was told, for the report
  /// Several hosts, each seen to share the directory (rank 0's marker): a dataset ioprobe
  /// generates there may be written by all of them, each its share of the files.
  bool split_generation = false;
};

/// For a dataset ioprobe generates in `dir`. Collective. `create_parent`: rank 0 may create the
/// directory's missing parents first (ioprobe's own default location, as generation would).
/// Throws JobFailure (every rank) when some hosts other than rank 0's see rank 0's marker and
/// others do not.
Placement detect_generated(comm::Comm& comm, const std::string& dir, bool create_parent);

/// For the user's own files read on a filesystem of type `fs_type` (network: true for NFS,
/// Lustre, GPFS, FUSE network mounts and the like, as the target probe says). Collective.
Placement detect_user_files(comm::Comm& comm, const std::string& fs_type, bool network);

/// Runs `prepare` (generate or check the dataset, walk the user's files) on every process in
/// the order `placement` needs: shared, rank 0 first; node-local, each host's first process
/// first; a failure anywhere ends every rank (on_every_host). `prepare(first)`: whether this
/// process is the one that prepares (the others only reuse what it made).
void prepare_in_order(comm::Comm& comm, const Placement& placement, const std::function<void(bool first)>& prepare);

/// Checks that every process sees the same dataset: `fingerprint` (e.g. "N files, B bytes")
/// must equal rank 0's. Throws JobFailure naming the hosts that differ and what they see.
void check_same_dataset(comm::Comm& comm, const std::string& fingerprint, const std::string& what);

}  // namespace ioprobe::cluster
