#include "checkpoint/state_spec.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe::checkpoint {

const char* tensor_kind_name(TensorKind k) {
  switch (k) {
    case TensorKind::kWeightsBf16:
      return "weights (bf16)";
    case TensorKind::kMasterFp32:
      return "master (fp32)";
    case TensorKind::kAdamM:
      return "adam_m (fp32)";
    case TensorKind::kAdamV:
      return "adam_v (fp32)";
  }
  return "?";
}

uint32_t element_bytes(TensorKind k) { return k == TensorKind::kWeightsBf16 ? 2 : 4; }

namespace {

void add_region(RankState& r, TensorKind k, uint64_t bytes) {
  if (bytes == 0) return;
  r.regions.push_back(Region{k, r.bytes, bytes});
  r.bytes += bytes;
}

}  // namespace

StateSpec state_from_params(double params, int tp, int pp, int dp, int zero_stage, int ranks_on_host) {
  if (!(params >= 1)) throw UsageError(fmt::format("--params: {} is not a parameter count >= 1", params));
  // 1e15 parameters are 14 PB of state, some 700 times the largest preset (llama3-1t).
  if (params > 1e15)
    throw UsageError(
        fmt::format("--params: {:g} is above 1e15 (14 PB of state); give a real model's count, e.g. 405B", params));
  if (tp < 1 || pp < 1 || dp < 1) throw UsageError("--tp, --pp and --dp must be >= 1");
  const int64_t world = int64_t{tp} * pp * dp;
  if (world > (int64_t{1} << 24))
    throw UsageError(
        fmt::format("tp {} x pp {} x dp {} = {} ranks in the job: at most 16,777,216; lower --tp, --pp or --dp", tp, pp,
                    dp, world));
  if (zero_stage < 0 || zero_stage > 3) throw UsageError(fmt::format("--zero-stage: {} is not 0..3", zero_stage));
  StateSpec s;
  s.source = "--params";
  s.params = params;
  s.tp = tp;
  s.pp = pp;
  s.dp = dp;
  s.zero_stage = zero_stage;
  s.world = tp * pp * dp;
  if (ranks_on_host < 1 || ranks_on_host > s.world)
    throw UsageError(
        fmt::format("--ranks: {} is not 1..{} (tp {} x pp {} x dp {})", ranks_on_host, s.world, tp, pp, dp));
  const double model_shard = params / (double(tp) * pp);
  const double full_shard = model_shard / dp;
  for (int g = 0; g < s.world; ++g) {
    int dp_rank = (g / tp) % dp;
    uint64_t weight_elems = 0;
    if (zero_stage >= 3) weight_elems = static_cast<uint64_t>(std::floor(full_shard));
    else if (dp_rank == 0) weight_elems = static_cast<uint64_t>(std::floor(model_shard));
    uint64_t opt_elems = static_cast<uint64_t>(
        std::floor(zero_stage >= 1 ? full_shard : (dp_rank == 0 ? model_shard : 0)));
    RankState r;
    r.rank = g;
    add_region(r, TensorKind::kWeightsBf16, weight_elems * 2);
    add_region(r, TensorKind::kMasterFp32, opt_elems * 4);
    add_region(r, TensorKind::kAdamM, opt_elems * 4);
    add_region(r, TensorKind::kAdamV, opt_elems * 4);
    s.world_bytes += r.bytes;
    if (g < ranks_on_host) {
      s.host_bytes += r.bytes;
      s.ranks.push_back(std::move(r));
    }
  }
  return s;
}

StateSpec state_from_size(uint64_t bytes, int ranks) {
  if (ranks < 1) throw UsageError("--ranks must be >= 1");
  if (bytes < static_cast<uint64_t>(ranks))
    throw UsageError(
        fmt::format("--size: {} B cannot be split over {} ranks; give at least 1 B per rank", bytes, ranks));
  StateSpec s;
  s.source = "--size";
  s.dp = ranks;
  s.world = ranks;
  for (int g = 0; g < ranks; ++g) {
    uint64_t b = bytes / ranks + (static_cast<uint64_t>(g) < bytes % ranks ? 1 : 0);
    RankState r;
    r.rank = g;
    uint64_t w = (b * 2 / kBytesPerParam) & ~uint64_t{1};
    uint64_t rest = b - w;
    uint64_t each = (rest / 3) & ~uint64_t{3};
    add_region(r, TensorKind::kWeightsBf16, w);
    add_region(r, TensorKind::kMasterFp32, each);
    add_region(r, TensorKind::kAdamM, each);
    add_region(r, TensorKind::kAdamV, rest - 2 * each);
    s.world_bytes += r.bytes;
    s.host_bytes += r.bytes;
    s.ranks.push_back(std::move(r));
  }
  return s;
}

}  // namespace ioprobe::checkpoint
