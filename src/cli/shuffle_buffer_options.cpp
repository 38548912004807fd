#include "cli/shuffle_buffer_options.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/message.hpp"
#include "loader/wds_order.hpp"

namespace ioprobe::cli {

void add_shuffle_buffer_options(po::options_description& loader) {
  // clang-format off
  loader.add_options()
      ("shuffle-buffer", po::value<std::string>(),
       "sharded: read as webdataset does, WebDataset(urls, shardshuffle=100 (0 with --no-shuffle), seed=--seed, "
       "nodesplitter=split_by_node).shuffle(N, seed=--seed): shards split by rank then worker, and each worker "
       "delivers its samples through a shuffle buffer of N samples (webdataset 1.0.2's order, Python's random) "
       "[off: the plain IterableDataset order]")
      ("shuffle-initial", po::value<std::string>(),
       "with --shuffle-buffer: samples a worker's buffer holds before it yields the first (webdataset's initial=; "
       "at most N) [100]");
  // clang-format on
}

void apply_shuffle_buffer_options(const po::variables_map& vm, DatasetKind kind, LoaderConfig& l) {
  const bool buffer = has(vm, "shuffle-buffer");
  const bool initial = has(vm, "shuffle-initial");
  if (!buffer && !initial) return;
  if (kind != DatasetKind::kSharded) {
    const char* name = buffer ? "shuffle-buffer" : "shuffle-initial";
    throw UsageError(fmt::format("--{} {}: a shuffle buffer is webdataset's, over the samples streamed from shards; "
                                 "this dataset is kind {} (its sampler already shuffles every sample). Use "
                                 "--dataset-kind sharded, or leave --{} out",
                                 name, get_string(vm, name), dataset_kind_name(kind), name));
  }
  if (!buffer)
    throw UsageError(fmt::format("--shuffle-initial {}: needs --shuffle-buffer N (the buffer it fills)",
                                 get_string(vm, "shuffle-initial")));
  constexpr uint64_t kMaxSamples = 1ULL << 30;
  l.shuffle_buffer = get_count(vm, "shuffle-buffer", 0, 1, kMaxSamples);
  const uint64_t initial_given = get_count(vm, "shuffle-initial", kWdsDefaultInitial, 1, kMaxSamples);
  l.shuffle_initial = std::min(initial_given, l.shuffle_buffer);
  // webdataset takes min(initial, bufsize) without a word; the user hears which value is emulated.
  if (initial && initial_given > l.shuffle_buffer)
    warning(fmt::format("--shuffle-initial {} is more than --shuffle-buffer {}: a worker's buffer fills to {} samples "
                        "before its first (webdataset's own limit, initial = min(initial, bufsize))",
                        initial_given, l.shuffle_buffer, l.shuffle_buffer));
  l.wds_shard_shuffle = l.shuffle ? kWdsDefaultShardShuffle : 0;
}

}  // namespace ioprobe::cli
