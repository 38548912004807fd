// The options every process of a multi-host job must share (cluster/option_agreement.hpp),
// read off a subcommand's parsed options.
//
// The rule: every option must have the same value on every process, preset (INI) values included,
// except --json and --quiet (rank 0 alone writes the document and prints). Paths count too:
// --dir, --data and --file-list name one dataset whose placement (shared or node-local,
// cluster/placement.hpp) is told by that one path, so a host's own disk is mounted (or linked) at
// the same path on every host. --gpu is compared as its catalog key (h100 = H100-SXM).
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "cluster/option_agreement.hpp"

namespace ioprobe::cli {

/// The workload INI file whose keys count as options too (command line wins): run, gen, tune and
/// capacity read --dataset's preset (imagenet-like by default), checkpoint --model's.
enum class PresetFile { kNone, kDataset, kCheckpointModel };

/// Every option of `desc` as parsed into `vm`, plus the keys the preset file sets that the
/// command line does not, with the ones that may differ (--json, --quiet, --help) left out.
/// Never throws (a preset that cannot be read adds nothing: the command refuses it itself).
std::vector<cluster::OptionValue> shared_option_values(const po::variables_map& vm, const po::options_description& desc,
                                                       PresetFile preset = PresetFile::kNone);

/// Collective across the job's processes (ctx.comm); returns at once with one process. Throws
/// JobFailure (exit 2, on every process) when a process's options differ from rank 0's, before
/// the command has read or written anything. `command` names the subcommand in the message.
void check_same_options(const CommandContext& ctx, const po::variables_map& vm, const po::options_description& desc,
                        const std::string& command, PresetFile preset);

}  // namespace ioprobe::cli
