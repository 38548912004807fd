// The "checkpoint" section of a result document (kind "checkpoint") for a read-back of a checkpoint
// saved earlier (`ioprobe checkpoint --restore-only` or `--verify-only`): the shards found, and the
// restore (decoded, both XXH3-64 checksums of every chunk) or the verification (the stored bytes'
// checksum of every chunk, nothing decompressed), with its text rendering. The text is rendered
// from the typed section (report/checkpoint_document.hpp CheckpointReadbackSection), so `ioprobe
// report FILE.json` re-renders it after decoding.
//
// Keys of the section: "mode" ("restore-only" | "verify-only"), "dir", "checks" (what was checked,
// in words), "shards" [{path, rank, format_version, codec ("none" | "zstd"), chunks,
// logical_bytes, file_bytes}], then "restore" (restore-only: the keys of a save's restore
// section, checkpoint_json.cpp) or "verify" (verify-only: ok, interrupted, cache, direct,
// stored_bytes, chunks_verified, chunks_total, duration_max_s, verify_bytes_per_s = stored bytes
// checked / the slowest rank's duration, ranks [{path, stored_bytes, chunks_verified,
// chunks_total, duration_s, read_s, hash_s, direct}], error), and "elapsed_s". Bytes in B, times in
// s, rates in B/s (printed as MB/s = 10^6 B/s and MiB/s).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/restorer.hpp"
#include "checkpoint/shard_format.hpp"
#include "report/checkpoint_document.hpp"

namespace ioprobe {

/// One shard file found in the directory, with its trailer as read before the clock started.
struct ReadbackShard {
  std::string path;
  int rank = 0;                 // from its name, __RANK_0.distcp
  checkpoint::Trailer trailer;  // version, codec, logical bytes, chunk count
  uint64_t file_bytes = 0;      // the file's size (st_size)
};

/// What a read-back measured, for checkpoint_readback_section.
struct ReadbackRun {
  checkpoint::RestoreMode mode = checkpoint::RestoreMode::kDecode;
  std::string dir;
  std::vector<ReadbackShard> shards;
  checkpoint::RestoreResult result;  // ranks in the order of `shards`
  bool cold = true;                  // page cache dropped, O_DIRECT where taken
  std::string memory_fs;             // the target's filesystem when it lives in RAM (tmpfs, ramfs), else ""
};

/// Builds the "checkpoint" section of a read-back (keys above); elapsed_s is the command's to set.
CheckpointReadbackSection checkpoint_readback_section(const ReadbackRun& run);

/// Human-readable report of a read-back document (doc.readback present).
std::string render_checkpoint_readback_text(const CheckpointDocument& doc);

}  // namespace ioprobe
