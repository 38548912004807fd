#include "cli/run_calibration.hpp"

#include <cmath>

#include <fmt/format.h>

#include "calibrate/calibration.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe::cli {

// --calibration: the worker, main-process and pin costs of the user's own DataLoader. The
// main-process and pin figures are per batch: scaled by --batch-size / the calibration's batch size.
void apply_calibration(po::variables_map& vm, RunConfig& c) {
  c.calibration_path = get_string(vm, "calibration");
  if (c.calibration_path.empty()) {
    if (vm.count("calibration"))
      throw UsageError(
          "--calibration is empty; give the file `ioprobe calibrate --json` wrote, or leave the option out");
    return;
  }
  for (const char* other : {"cpu-per-sample", "main-cpu-per-batch"})
    if (has(vm, other))
      throw UsageError(fmt::format("--calibration and {} both set a cost of the loader; give one (the calibration's "
                                   "figures, or your own)",
                                   option_label(vm, other)));
  Calibration cal = checked_value(vm, "calibration", [&] {
    try {
      return load_calibration(c.calibration_path);
    } catch (const UsageError& e) {
      throw UsageError(std::string("--calibration ") + e.what());
    }
  });
  LoaderConfig& l = c.loader;
  const double scale = static_cast<double>(l.batch_size) / cal.batch_size;
  // The worker's threads: its loop burns the fetch + collate part, its feeder thread the put,
  // overlapped. Older documents lack the split: the whole cost stays in the worker's loop.
  l.cpu_per_sample_us = cal.split_measured ? cal.worker_loop_cpu_per_sample_us.value
                                           : cal.worker_cpu_per_sample_us.value;
  l.worker_put_cpu_per_sample_us = cal.split_measured ? cal.worker_put_cpu_per_sample_us.value : 0;
  // Its other threads (the resource sharer), beside both; documents without them have that CPU in the put.
  l.worker_other_cpu_per_sample_us = cal.other_measured ? cal.worker_other_cpu_per_sample_us.value : 0;
  if (!cal.split_measured)
    c.calibration_notes.push_back(fmt::format(
        "--calibration {} predates the split of the worker's CPU into its loop and its queue feeder thread: the "
        "whole {:.0f} µs per sample is burned serially by each worker, which underestimates workers whose batches "
        "take long to pickle (rerun `ioprobe calibrate`)",
        escape_bytes(c.calibration_path), cal.worker_cpu_per_sample_us.value));
  l.main_cpu_per_batch_us = cal.main_cpu_per_batch_us.value * scale;
  l.worker_startup_cpu_us = cal.worker_startup_cpu_s.value * 1e6;  // zeros when not measured
  l.main_startup_cpu_us = cal.main_startup_cpu_s.value * 1e6;
  if (!cal.startup_measured)
    c.calibration_notes.push_back(fmt::format(
        "--calibration {} predates the start-up figures: the workers' start-up CPU at each epoch is not modelled "
        "(rerun `ioprobe calibrate`)",
        escape_bytes(c.calibration_path)));
  l.pin_bytes_per_batch = cal.bytes_per_batch.value * scale;
  if (l.pin_memory && cal.pin_measured)
    c.calibration_notes.push_back(fmt::format(
        "--pin-memory: the pin thread copies each batch's {:.0f} B into page-locked memory itself (this host's copy "
        "speed); --calibration {}'s pin_memory figure ({:.0f} µs CPU per batch, {}) is not used, so the pin "
        "ceiling shown is the copy's, not your DataLoader's pin_memory thread's",
        l.pin_bytes_per_batch, escape_bytes(c.calibration_path), cal.pin_cpu_per_batch_us.value * scale,
        cal.pin_method));
  // The main process's round trips with the worker's sharer, one per tensor: a batch of one (or
  // more) tensors per sample scales with the batch size, a collate into a few tensors does not.
  const double tensors = cal.tensors_per_batch.value;
  l.tensors_per_batch = static_cast<uint32_t>(std::llround(tensors >= cal.batch_size ? tensors * scale : tensors));
  c.calibration = calibration_to_json(cal);
  if (cal.batch_size != l.batch_size)
    c.calibration_notes.push_back(
        fmt::format("--calibration {} was measured at batch size {}; its per-batch figures (main process, bytes, "
                    "tensors) are scaled "
                    "by {:.3g} to --batch-size {}: calibrate at this batch size for measured figures",
                    escape_bytes(c.calibration_path), cal.batch_size, scale, l.batch_size));
}

}  // namespace ioprobe::cli
