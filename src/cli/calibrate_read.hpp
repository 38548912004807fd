// `ioprobe calibrate`'s measure of ioprobe's own read of the calibration's files from the page
// cache. A calibration's loop cost is the user's __getitem__ + collate, and __getitem__ reads its
// file; ioprobe's workers read each file for real with the engine and then burn the loop cost, so
// without this the read would be paid twice. `run` takes the figure for its engine off the loop
// burn (LoaderCosts::own_read_*_us). Measured on 2 CPUs (tools/bench-calibration; docs/benchmarks/calibration.md,
// "Blocking round trips, a calibration per round, ioprobe's own read"): ioprobe's own read of 4,096 files from the page
// cache was 20.6-22.4 µs of CPU per file with psync, 30.3-78.9 with io_uring; without taking it off, ioprobe
// burned 1.03-1.24 s of CPU per flat epoch on tmpfs where the real loader burned 0.88-1.20, and ran 0.85-0.92x it at
// 1-4 workers; with it, flat came out 0.93-1.06x on every row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/calibration.hpp"

namespace ioprobe::cli {

/// The driver's file list (python/ioprobe_calibrate.py --paths-out): each path's bytes followed
/// by a NUL. Throws Error naming `file` when it cannot be read or names no file.
std::vector<std::string> read_driver_paths(const std::string& file);

/// Reads `paths` (in the page cache: the driver has just read them) with ioprobe's loader as
/// `run` would, buffered, one worker, batches of `batch_size`, no CPU burned, three passes per
/// engine (io_uring, psync), and sets cal.own_read_measured and cal.own_read_io_uring_us /
/// own_read_psync_us: the whole process's CPU (user + system, getrusage: the worker, the engine,
/// io_uring's kernel workers) per file, µs, mean and spread over the passes. An engine that cannot
/// run here (io_uring disabled) or a pass with read errors keeps zeros and adds a line to
/// `notes`. Ends early, keeping what it has, when interrupted().
void measure_own_read(const std::vector<std::string>& paths, uint32_t batch_size, Calibration& cal,
                      std::vector<std::string>& notes);

}  // namespace ioprobe::cli
