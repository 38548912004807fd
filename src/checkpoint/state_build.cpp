#include "checkpoint/state_build.hpp"

#include <algorithm>
#include <memory>

#include "checkpoint/chunker.hpp"
#include "checkpoint/compressor.hpp"
#include "checkpoint/piece_pool.hpp"
#include "core/interrupt.hpp"
#include "core/threads.hpp"

namespace ioprobe::checkpoint {

std::vector<ResidentState> build_states(const CheckpointConfig& c, CheckpointRunData& d) {
  const uint64_t budget = c.memory_budget_bytes / (c.async ? 2 : 1);
  uint64_t cap = UINT64_MAX;
  if (d.state.host_bytes > budget) cap = std::max<uint64_t>(64ull << 20, budget / (d.state.ranks.size() * 4));
  std::vector<ResidentState> states;
  states.reserve(d.state.ranks.size());
  {
    std::vector<std::unique_ptr<ResidentState>> tmp(d.state.ranks.size());
    run_threads(tmp.size(), [&](size_t i) {  // std::bad_alloc and the like reach the caller
      const uint64_t seed = c.seed * 1000003 + d.state.ranks[i].rank;
      tmp[i] = std::make_unique<ResidentState>(d.state.ranks[i], cap, seed, c.content == StateContent::tensors,
                                               c.save.io.huge_pages);
      if (c.content != StateContent::tensors)
        tmp[i]->overwrite([&](uint8_t* dst, size_t len, size_t region) {
          fill_state_content(c.content, seed * 16 + region, dst, len);
        });
    });
    for (auto& p : tmp) states.push_back(std::move(*p));
  }
  for (const auto& s : states) {
    d.resident_bytes += s.resident_bytes();
    d.resident_huge_page_bytes += s.huge_page_bytes();
    d.state_cyclic = d.state_cyclic || s.cyclic();
  }
  return states;
}

void probe_compression(const std::vector<ResidentState>& states, CheckpointRunData& d) {
  const SaveOptions& o = d.opts;
  if (!o.compress.enabled || states.empty()) return;
  // A 64 MiB sample mixing the rank's regions in their proportions (bf16 first, then fp32).
  std::vector<uint8_t> sample(std::min<uint64_t>(64u << 20, states[0].bytes()));
  size_t filled = 0;
  for (const Region& g : states[0].rank().regions) {
    size_t k = static_cast<size_t>(static_cast<double>(g.bytes) / states[0].bytes() * sample.size());
    k = std::min(k, sample.size() - filled);
    states[0].copy_out(g.offset, k, sample.data() + filled);
    filled += k;
  }
  sample.resize(filled);
  // Speeds are limits: the best of 3 runs each, measured before any write of this run (on a
  // virtual disk the host's flush after a large write slows the guest's CPUs for seconds).
  auto best_of_3 = [](auto&& measure) {
    ZstdProbe best;
    for (int i = 0; i < 3 && !interrupted(); ++i) {  // Ctrl-C: stop probing, keep what was measured
      ZstdProbe p = measure();
      if (p.bytes_per_s > best.bytes_per_s) best = p;
    }
    return best;
  };
  const int cores = compression_cores(d);
  // One core's speed: the better of one frame over the sample (zstd's usual benchmark) and the
  // save's own scheme on one thread (4 MiB frames, one reused output buffer). On this project's
  // VM the first ran 0.7x the second (its 64 MiB output on cold 4 KiB pages), which made
  // cores x one core look like less than the pool's measured speed on all cores.
  d.zstd_probe = best_of_3([&] { return measure_zstd(sample.data(), sample.size(), o.compress.level); });
  const ZstdProbe one_pool = best_of_3(
      [&] { return measure_piece_pool(sample.data(), sample.size(), o.compress.level, 1, kPieceBytes); });
  if (one_pool.bytes_per_s > d.zstd_probe->bytes_per_s) d.zstd_probe = one_pool;
  d.zstd_mt_probe = best_of_3(
      [&] { return measure_zstd(sample.data(), sample.size(), o.compress.level, cores, o.zstd_job_bytes); });
  d.pool_probe = best_of_3(
      [&] { return measure_piece_pool(sample.data(), sample.size(), o.compress.level, cores, kPieceBytes); });
}

}  // namespace ioprobe::checkpoint
