// --shuffle-buffer and --shuffle-initial: a sharded dataset read in webdataset's order
// (loader/wds_order.hpp), parsed into the run's LoaderConfig.
#pragma once

#include "cli/options.hpp"
#include "dataset/spec.hpp"
#include "loader/config.hpp"

namespace ioprobe::cli {

/// Adds the two options to a loader options table.
void add_shuffle_buffer_options(po::options_description& loader);

/// Sets l.shuffle_buffer, l.shuffle_initial and l.wds_shard_shuffle (webdataset's shardshuffle:
/// 100, its value for True, when l.shuffle; else 0) from the options; l.shuffle must be parsed
/// already. Throws UsageError, naming the option and its value, when either is given for a
/// dataset kind other than sharded (`kind`), when --shuffle-initial comes without
/// --shuffle-buffer, or when a value is out of range (1 .. 2^30 samples).
void apply_shuffle_buffer_options(const po::variables_map& vm, DatasetKind kind, LoaderConfig& l);

}  // namespace ioprobe::cli
