// --calibration: the user's own DataLoader's costs (ioprobe calibrate's document) into the run's
// loader configuration.
#pragma once

#include "cli/options.hpp"
#include "cli/run_config.hpp"

namespace ioprobe::cli {

/// Reads --calibration (load_calibration) into c.loader: the worker's loop, feeder and other-thread
/// CPU per sample (µs), the main process's CPU per batch (µs, scaled by --batch-size / the
/// calibration's batch size), start-up CPU, bytes and tensors per batch; keeps the document in
/// c.calibration and notes (c.calibration_notes) what it lacks or does not model. No-op without
/// the option. Throws UsageError naming the option when it is empty, given with --cpu-per-sample or
/// --main-cpu-per-batch, or the file is refused (calibrate/calibration.hpp).
void apply_calibration(po::variables_map& vm, RunConfig& c);

}  // namespace ioprobe::cli
