// `ioprobe checkpoint`'s options: their descriptions and their parsing into the typed
// checkpoint::CheckpointConfig (the only place that knows the option names).
#pragma once

#include <string>
#include <vector>

#include "checkpoint/config.hpp"
#include "cli/options.hpp"
#include "topology/host.hpp"

namespace ioprobe::cli {

class CheckpointJob;

/// The option descriptions (--help prints them).
po::options_description checkpoint_options();

/// What parse_checkpoint_config found.
struct ParsedCheckpoint {
  checkpoint::CheckpointConfig config;
  bool help = false;                   // --help: nothing else was read
  bool restore_threads_given = false;  // --restore-threads was given (a preflight warning names it)
};

/// The command line `args` (with --model's preset added) parsed and checked into a config: the
/// state sized for `host` and numbered across the job's processes (`job`: an exchange with the
/// others when a launcher started several), the save's options, the restore, the series. Throws
/// UsageError naming the option, the value and what to give instead (exit 2).
ParsedCheckpoint parse_checkpoint_config(const std::vector<std::string>& args, const HostInfo& host,
                                         CheckpointJob& job);

}  // namespace ioprobe::cli
