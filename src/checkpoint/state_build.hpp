// The training state a checkpoint run saves, generated in memory before anything is timed, and
// the compression speeds measured on it (before any write of the run).
#pragma once

#include <cstdint>
#include <vector>

#include "checkpoint/config.hpp"
#include "checkpoint/resident_state.hpp"
#include "checkpoint/run_data.hpp"

namespace ioprobe::checkpoint {

/// One ResidentState per rank of `c.state`, filled with `c.content` (tensors: the state's own
/// bf16/fp32 values; text or random: state_content.hpp) from `c.seed`, generated in parallel. The
/// state is kept within c.memory_budget_bytes (half of that with c.async, which stages a copy):
/// a larger state keeps a window per region, read cyclically. Records the resident bytes, those
/// on huge pages and whether the state is cyclic in `d`. Throws std::bad_alloc when memory is short.
std::vector<ResidentState> build_states(const CheckpointConfig& c, CheckpointRunData& d);

/// With compression on, measures on a 64 MiB sample of the first rank's state (its regions in
/// their proportions) the best of 3 runs of: one core's speed (d.zstd_probe, the better of one
/// frame and ioprobe's own scheme on one thread), zstd's own multithreading (d.zstd_mt_probe) and
/// ioprobe's pool (d.pool_probe) on compression_cores(d) cores. Ctrl-C stops the probing with what
/// was measured. Does nothing without compression or state.
void probe_compression(const std::vector<ResidentState>& states, CheckpointRunData& d);

}  // namespace ioprobe::checkpoint
