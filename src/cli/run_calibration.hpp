// --calibration: the user's own DataLoader's costs (ioprobe calibrate's document) into the run's
// loader configuration.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "cli/run_config.hpp"
#include "report/tune_document.hpp"

namespace ioprobe::cli {

/// Reads --calibration (load_calibration) into c.loader: the worker's loop, feeder and other-thread
/// CPU per sample (µs), the main process's CPU per batch (µs, scaled by --batch-size / the
/// calibration's batch size), start-up CPU, bytes and tensors per batch; keeps the document in
/// c.calibration and notes (c.calibration_notes) what it lacks or does not model. No-op without
/// the option. Throws UsageError naming the option when it is empty, given with --cpu-per-sample or
/// --main-cpu-per-batch, or the file is refused (calibrate/calibration.hpp).
void apply_calibration(po::variables_map& vm, RunConfig& c);

/// After c.loader's ranks and num_workers are final: with a calibration whose oversubscription
/// points were measured, sets the worker costs for this run's worker processes per CPU
/// (loader/worker_costs.hpp) and notes the level and figures used when above one per CPU; without
/// such points, notes that a run above one per CPU uses the uncrowded costs. `per_point` (tune,
/// capacity: the level changes from point to point, and each run resolves its own): notes only.
/// No-op without --calibration.
void resolve_calibrated_worker_costs(RunConfig& c, bool per_point);

/// A sweep over num_workers (tune): each point's worker costs at its own level, as its run takes
/// them, into points[i].worker_costs (basis: "measured" | "interpolated" | "beyond" | "uncrowded");
/// and a warning (into `warnings`) naming the points above the last measured level, whose costs
/// are that level's. No-op when c.loader has no worker cost curve.
void add_point_worker_costs(const RunConfig& c, std::vector<TunePointEntry>& points,
                            std::vector<std::string>& warnings);

}  // namespace ioprobe::cli
