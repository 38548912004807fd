// What a checkpoint holds: per-rank shards of the training state, laid out as regions of one
// tensor kind each (bf16 weights, fp32 master copy, Adam m, Adam v).
//
// 14 bytes per parameter (2 B bf16 weights + 3 x 4 B fp32), as DLIO's base_checkpointing.py
// @e1919d7 and the MLPerf Storage v2.0 checkpoint-size table (Submission_guidelines.md 2.2.1) count it.
// Per-rank split as MLPerf Storage v2.0 / DLIO @e1919d7 derive it: weights are sharded over TP x PP, and
// also over DP under ZeRO-3; under ZeRO-1/2 only DP rank 0 writes them. Optimizer state (fp32
// master, m, v) is sharded over TP x PP x DP. Rank order is Megatron's: TP fastest, then DP, then PP.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ioprobe::checkpoint {

constexpr uint64_t kBytesPerParam = 14;  // DLIO base_checkpointing.py @e1919d7

enum class TensorKind : uint32_t { kWeightsBf16 = 0, kMasterFp32 = 1, kAdamM = 2, kAdamV = 3 };

/// Name for reports: "weights (bf16)", "master (fp32)", "adam_m (fp32)", "adam_v (fp32)".
const char* tensor_kind_name(TensorKind k);
/// Element size in bytes: 2 for bf16, 4 for fp32.
uint32_t element_bytes(TensorKind k);

/// A contiguous byte range of one tensor kind within a rank's shard. `bytes` need not be a
/// multiple of the element size (a --size that is not gives a partial last element).
struct Region {
  TensorKind kind;
  uint64_t offset = 0;  // within the rank's logical stream
  uint64_t bytes = 0;
};

/// One writer's shard.
struct RankState {
  int rank = 0;        // global rank
  uint64_t bytes = 0;  // logical bytes of this shard (sum of regions)
  std::vector<Region> regions;
};

/// The whole state written by this host.
struct StateSpec {
  std::string source;          // "--size", "--params", or the preset name
  double params = 0;           // model parameters (0 when given by --size)
  int tp = 1, pp = 1, dp = 1;  // parallelism of the emulated job
  int zero_stage = 3;
  int world = 1;                 // tp * pp * dp
  uint64_t world_bytes = 0;      // the whole job's checkpoint (all ranks)
  uint64_t host_bytes = 0;       // sum over `ranks`
  std::vector<RankState> ranks;  // the ranks this host writes (0 .. ranks_on_host-1)
};

/// State of a model with `params` parameters under TP x PP x DP and a ZeRO stage (0..3), for the
/// first `ranks_on_host` ranks. Throws UsageError when ranks_on_host > tp*pp*dp or params < 1.
StateSpec state_from_params(double params, int tp, int pp, int dp, int zero_stage, int ranks_on_host);

/// State of exactly `bytes` logical bytes split as evenly as possible over `ranks` shards, each
/// with the 2:12 bf16:fp32 mix of 14 B/param. Throws UsageError when bytes < ranks.
StateSpec state_from_size(uint64_t bytes, int ranks);

}  // namespace ioprobe::checkpoint
