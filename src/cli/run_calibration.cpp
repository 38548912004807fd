#include "cli/run_calibration.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "calibrate/calibration.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "loader/config.hpp"
#include "loader/worker_costs.hpp"

namespace ioprobe::cli {

namespace {

// A thread pipeline's calibration (Calibration::thread_pipeline): the loader's workers are threads
// of one process, all on one GIL (loader/worker_gil.hpp), each sample's CPU holding it for the
// calibrated share; no feeder, sharer, start-up or main-process costs (none of a process's batches
// is pickled or handed to another process).
void apply_thread_pipeline(const Calibration& cal, RunConfig& c) {
  LoaderCosts& k = c.loader.costs;
  k.worker = WorkerCosts{cal.thread_cpu_per_sample_us.value, 0, 0, 0};
  k.worker_curve.points.clear();
  k.own_read_io_uring_us = cal.own_read_measured ? cal.own_read_io_uring_us.value : 0;
  k.own_read_psync_us = cal.own_read_measured ? cal.own_read_psync_us.value : 0;
  k.python_gil = true;
  k.threads_share_gil = true;
  k.loop_gil_share = cal.thread_gil_share.value;
  k.put_gil_share = 1.0;
  k.tensors_per_batch = 0;
  k.main_startup_cpu_us = 0;
  k.main_cpu_per_batch_us = 0;
  c.calibration = calibration_to_json(cal);
  const std::string path = escape_bytes(c.calibration_path);
  c.calibration_notes.push_back(fmt::format(
      "--calibration {}: model: a thread pipeline ({}): each rank's {} worker(s) are threads of one process sharing "
      "one GIL, each sample's {:.0f} µs of CPU holding it for {:.2f} of it ({}{}); no worker processes, so no batch "
      "pickling, shared memory, start-up or main-process costs",
      path, escape_bytes(cal.function), c.loader.num_workers, cal.thread_cpu_per_sample_us.value,
      cal.thread_gil_share.value, cal.thread_gil_measured ? "measured: " : "", cal.thread_gil_method));
  if (cal.batch_size != c.loader.batch_size)
    c.calibration_notes.push_back(fmt::format(
        "--calibration {}: your pipeline made batches of {} samples; --batch-size {} is what this run emulates", path,
        cal.batch_size, c.loader.batch_size));
}

}  // namespace

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
  if (cal.thread_pipeline()) {
    apply_thread_pipeline(cal, c);
    return;
  }
  LoaderConfig& l = c.loader;
  LoaderCosts& k = l.costs;
  const double scale = static_cast<double>(l.batch_size) / cal.batch_size;
  // The worker's threads: its loop burns the fetch + collate part, its feeder thread the put,
  // overlapped. Older documents lack the split: the whole cost stays in the worker's loop.
  k.worker.loop_us = cal.split_measured ? cal.worker_loop_cpu_per_sample_us.value : cal.worker_cpu_per_sample_us.value;
  k.worker.put_us = cal.split_measured ? cal.worker_put_cpu_per_sample_us.value : 0;
  // Its other threads (the resource sharer), beside both; documents without them have that CPU in the put.
  k.worker.other_us = cal.other_measured ? cal.worker_other_cpu_per_sample_us.value : 0;
  // The loop cost includes the Dataset's own read of each file, which ioprobe's worker does for
  // real: the burn leaves out what that read costs ioprobe with the run's engine (calibrate_read.hpp).
  k.own_read_io_uring_us = cal.own_read_measured ? cal.own_read_io_uring_us.value : 0;
  k.own_read_psync_us = cal.own_read_measured ? cal.own_read_psync_us.value : 0;
  // The three are a worker's Python threads: they take turns on its GIL (loader/worker_gil.hpp).
  k.python_gil = true;
  // Of the feeder's CPU, the part that holds the GIL (measured; else all of it, as before).
  k.put_gil_share = cal.feeder_gil_measured ? cal.feeder_gil_share.value : 1.0;
  if (!cal.split_measured)
    c.calibration_notes.push_back(fmt::format(
        "--calibration {} predates the split of the worker's CPU into its loop and its queue feeder thread: the "
        "whole {:.0f} µs per sample is burned serially by each worker, which underestimates workers whose batches "
        "take long to pickle (rerun `ioprobe calibrate`)",
        escape_bytes(c.calibration_path), cal.worker_cpu_per_sample_us.value));
  k.main_cpu_per_batch_us = cal.main_cpu_per_batch_us.value * scale;
  k.worker.startup_cpu_us = cal.worker_startup_cpu_s.value * 1e6;  // zeros when not measured
  k.main_startup_cpu_us = cal.main_startup_cpu_s.value * 1e6;
  if (!cal.feeder_gil_measured)
    c.calibration_notes.push_back(fmt::format(
        "--calibration {}: the queue feeder's GIL share was not measured ({}): all of the feeder's CPU holds the "
        "worker's GIL, which can predict a per-tensor Dataset slower than it runs (rerun `ioprobe calibrate` on a "
        "host with 2 or more CPUs)",
        escape_bytes(c.calibration_path),
        cal.feeder_gil_method.empty() ? "the document predates the figure" : cal.feeder_gil_method));
  if (!cal.startup_measured)
    c.calibration_notes.push_back(fmt::format(
        "--calibration {} predates the start-up figures: the workers' start-up CPU at each epoch is not modelled "
        "(rerun `ioprobe calibrate`)",
        escape_bytes(c.calibration_path)));
  // The same costs with more worker processes than CPUs, where measured: the figures above stand
  // for up to one per CPU, the points for their levels (loader/worker_costs.hpp).
  k.worker_curve.points.clear();
  if (cal.oversubscription_measured) {
    k.worker_curve.points.push_back({1.0, k.worker});
    for (const CalLoadPoint& p : cal.oversubscription)
      k.worker_curve.points.push_back(
          {p.workers_per_cpu,
           {p.loop_per_sample_us, p.put_per_sample_us, p.other_per_sample_us, p.worker_startup_cpu_s.value * 1e6}});
  }
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
  k.tensors_per_batch = static_cast<uint32_t>(std::llround(tensors >= cal.batch_size ? tensors * scale : tensors));
  c.calibration = calibration_to_json(cal);
  if (cal.batch_size != l.batch_size)
    c.calibration_notes.push_back(
        fmt::format("--calibration {} was measured at batch size {}; its per-batch figures (main process, bytes, "
                    "tensors) are scaled "
                    "by {:.3g} to --batch-size {}: calibrate at this batch size for measured figures",
                    escape_bytes(c.calibration_path), cal.batch_size, scale, l.batch_size));
}

void resolve_calibrated_worker_costs(RunConfig& c, bool per_point) {
  LoaderConfig& l = c.loader;
  // A thread pipeline's threads are no worker processes: its costs have no crowding curve.
  if (c.calibration_path.empty() || l.costs.threads_share_gil) return;
  const std::string path = escape_bytes(c.calibration_path);
  if (l.costs.worker_curve.empty()) {
    if (per_point)
      c.calibration_notes.push_back(fmt::format(
          "--calibration {} has no figures for more worker processes than CPUs (calibrated with "
          "--oversubscribe none, or by an older ioprobe): points with more workers than CPUs use the uncrowded costs, "
          "which a real DataLoader exceeds there (rerun `ioprobe calibrate` without --oversubscribe none)",
          path));
    else if (const double x = loader_workers_per_cpu(l); x > 1)
      c.calibration_notes.push_back(fmt::format(
          "--calibration {} has no figures for more worker processes than CPUs (calibrated with "
          "--oversubscribe none, or by an older ioprobe): this run's {:.2g} worker processes per CPU use the uncrowded "
          "costs, which a real DataLoader exceeds there: the prediction is likely optimistic (rerun `ioprobe "
          "calibrate` without --oversubscribe none)",
          path, x));
    return;
  }
  const double last = l.costs.worker_curve.points.back().workers_per_cpu;
  if (per_point) {
    c.calibration_notes.push_back(fmt::format(
        "--calibration {}: each point's worker costs are taken at its own worker processes per CPU (GPU ranks x "
        "num_workers / CPUs) from the calibration's points, measured up to {:.3g} per CPU",
        path, last));
    return;
  }
  // Still the options (the preflight has not run): the run's own level's costs are the config's.
  const WorkerCostLookup w = worker_costs_for(l);
  l.costs.worker = w.costs;
  if (w.workers_per_cpu <= 1) return;  // the uncrowded figures, as measured
  const bool measured = std::string_view(w.basis) == "measured";
  c.calibration_notes.push_back(fmt::format(
      "--calibration {}: {} GPU rank(s) x {} worker(s) on {} CPU(s) = {:.3g} worker processes per CPU: the worker "
      "costs "
      "{} ({:.0f} µs CPU per sample: {:.0f} in the loop, {:.0f} putting batches on the queue, {:.0f} in other "
      "threads; {:.2f} s start-up CPU per worker per epoch){}",
      path, l.ranks, l.num_workers, loader_cpus(l), w.workers_per_cpu,
      w.beyond   ? fmt::format("are those measured at {:.3g} per CPU, the most calibrated", last)
      : measured ? "are those measured at this level"
                 : fmt::format("are interpolated linearly between the levels measured at {:.3g} and {:.3g} per CPU",
                               w.lower, w.upper),
      w.costs.loop_us + w.costs.put_us + w.costs.other_us, w.costs.loop_us, w.costs.put_us, w.costs.other_us,
      w.costs.startup_cpu_us / 1e6,
      w.beyond ? "; crowding beyond it likely costs more: calibrate with a larger --oversubscribe for a measured "
                 "figure"
               : ""));
}

void add_point_worker_costs(const RunConfig& c, std::vector<TunePointEntry>& points,
                            std::vector<std::string>& warnings) {
  if (c.loader.costs.worker_curve.empty()) return;
  std::vector<std::string> beyond;
  double last = 0;
  for (auto& p : points) {
    // As the point's run takes them (loader_run.cpp).
    const WorkerCostLookup w = worker_costs_for(with_num_workers(c.loader, p.point.num_workers));
    p.worker_costs = TuneWorkerCosts{w.workers_per_cpu,
                                     w.costs.loop_us + w.costs.put_us + w.costs.other_us,
                                     w.costs.loop_us,
                                     w.costs.put_us,
                                     w.costs.other_us,
                                     w.costs.startup_cpu_us / 1e6,
                                     w.basis};
    if (w.beyond) {
      beyond.push_back(fmt::format("num_workers {} ({:.3g} per CPU)", p.point.num_workers, w.workers_per_cpu));
      last = w.last_measured;
    }
  }
  if (!beyond.empty())
    warnings.push_back(fmt::format(
        "--calibration {}: {} lie(s) above the most crowded level calibrated, {:.3g} worker processes per CPU; "
        "their worker costs are that level's, and crowding beyond it likely costs more: those points are likely "
        "optimistic (calibrate with a larger --oversubscribe for measured figures)",
        c.calibration_path, fmt::join(beyond, ", "), last));
}

}  // namespace ioprobe::cli
