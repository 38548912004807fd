// Entry points of the subcommands. Each parses its own options (cli/), builds the typed
// configuration of its part, runs it and returns the process exit code (core/error.hpp).
#pragma once

#include "cli/options.hpp"

namespace ioprobe::cli {

int cmd_run(const CommandContext& ctx);     // default: the DataLoader emulation + ingest report
int cmd_gen(const CommandContext& ctx);     // generate (or verify) a synthetic dataset only
int cmd_report(const CommandContext& ctx);  // re-render a saved result document
int cmd_checkpoint(const CommandContext& ctx);  // save (and restore) emulated training state, vs raw write

}  // namespace ioprobe::cli
