// Entry points of the subcommands. Each parses its own options (cli/), builds the typed
// configuration of its part, runs it and returns the process exit code (core/error.hpp).
#pragma once

#include "cli/options.hpp"

namespace ioprobe::cli {

int cmd_run(const CommandContext& ctx);         // default: the DataLoader emulation + ingest report
int cmd_gen(const CommandContext& ctx);         // generate (or verify) a synthetic dataset only
int cmd_report(const CommandContext& ctx);      // re-render / compare saved documents (report_command.cpp)
int cmd_probe(const CommandContext& ctx);       // target, NUMA, io_uring and engine facts (probe_command.cpp)
int cmd_raw(const CommandContext& ctx);         // fio-like raw file / block device I/O (raw_command.cpp)
int cmd_tune(const CommandContext& ctx);        // sweep and recommend DataLoader settings (tune_command.cpp)
int cmd_capacity(const CommandContext& ctx);    // search the accelerators the storage feeds (capacity_command.cpp)
int cmd_checkpoint(const CommandContext& ctx);  // save (and restore) emulated training state (checkpoint_command.cpp)
int cmd_scaling(const CommandContext& ctx);     // RAID member scaling and nominal device speeds (scaling_command.cpp)
int cmd_calibrate(const CommandContext& ctx);   // measure the user's own DataLoader (calibrate_command.cpp)
int cmd_replay(const CommandContext& ctx);      // replay a recorded trace on this storage (replay_command.cpp)
int cmd_record(const CommandContext& ctx);      // record a job's data-file calls into a trace (record_command.cpp)

}  // namespace ioprobe::cli
