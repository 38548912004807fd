// The calibration document: what the user's own DataLoader costs on this host, measured by
// `ioprobe calibrate` (python/ioprobe_calibrate.py runs their Dataset in real PyTorch DataLoaders)
// and read back by `run`, `tune` and `capacity` (--calibration) to set the loader model's costs.
//
// Versioned JSON, schema reports/calibration.schema.json: kind "calibration", schema_version 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// The document's schema version this build writes and reads.
inline constexpr int kCalibrationSchemaVersion = 1;
/// Its "schema" identifier (reports/calibration.schema.json), written and checked on reading.
inline constexpr const char* kCalibrationSchema = "ioprobe.calibration/1";

/// A measured figure with its spread over the runs (and batches) it comes from.
struct CalFigure {
  double value = 0;  // the figure the model uses (a mean)
  double min = 0;
  double max = 0;
};

/// The worker's costs measured at one level of crowding: num_workers worker processes on `cpus`
/// CPUs (the driver's affinity for those passes), workers_per_cpu = num_workers / cpus > 1. The
/// values are fitted from the workers' whole-life CPU in two passes of different lengths (per
/// sample: the difference; one-time: the rest), min/max over that fit and each pass's windowed
/// figure; from a driver without whole-life figures, the windowed means.
struct CalLoadPoint {
  double workers_per_cpu = 0;
  int num_workers = 0;
  int cpus = 0;
  CalFigure worker_cpu_per_sample_us;  // the worker's steady CPU per sample, all threads, µs (mean over the passes)
  double loop_per_sample_us = 0;       // of its value, the loop (__getitem__ + collate), µs
  double put_per_sample_us = 0;        // of its value, the queue feeder thread, µs
  double other_per_sample_us = 0;      // of its value, the other threads (the resource sharer), µs
  CalFigure worker_startup_cpu_s;      // a fresh worker's one-time CPU per epoch, s (mean over the passes)
  // How the values were taken: "fit" (the two lengths' whole-life CPU), "floor" (the fit's CPU per
  // sample was below the level before's and is held at it), "windows" (no positive difference, or
  // no whole-life figures: the passes' windowed means).
  std::string basis = "windows";
};

struct Calibration {
  int schema_version = kCalibrationSchemaVersion;
  std::string ioprobe_version;
  std::string created;               // UTC, ISO 8601
  std::vector<std::string> command;  // the ioprobe command line that measured it
  // The user's code.
  std::string code_file;  // absolute path of FILE.py
  std::string function;   // FUNC: FUNC(paths) returns the Dataset
  std::string collate;    // "collate_fn of the module" | "torch default_collate"
  // "map-style" (__getitem__ + __len__, loaded with shuffle=True) | "iterable" (a torch
  // IterableDataset in its own order) | "thread-pipeline" (FUNC(paths, num_threads) returns an
  // iterable of batches built by threads of one process: thread_* figures below); documents
  // written before calibrate took streams: map-style
  std::string dataset_kind = "map-style";
  // The data it ran on (read into the page cache first: CPU costs, no storage wait).
  std::string data_dir;
  uint64_t files = 0;
  uint64_t data_bytes = 0;
  // The samples the files held where they are not one per file (shards, tables; an
  // IterableDataset's counted in its first pass, a map-style Dataset's len()); else 0
  uint64_t dataset_samples = 0;
  // Where.
  std::string hostname, kernel;
  int cpus_allowed = 0;
  std::string python, python_version, torch_version;
  bool cuda_available = false;
  uint32_t batch_size = 0;
  // Figures (the model's inputs).
  CalFigure
      worker_cpu_per_sample_us;  // CPU per sample in a worker process (all threads): fetch + collate + IPC put, µs
  CalFigure inprocess_cpu_per_sample_us;  // num_workers=0: the same work in the main process, µs
  CalFigure main_cpu_per_batch_us;        // main process per batch: receive + unpickle + shm attach, µs
  double main_cpu_per_batch_p10_us = 0, main_cpu_per_batch_p90_us = 0;  // per-batch spread (main thread)
  CalFigure bytes_per_batch;  // bytes of the batch's tensors (what crosses to the main process), B
  // The batch's parts that hold no tensor, so none of bytes_per_batch (strings, numbers a collate_fn
  // kept as Python objects, None it allowed: pickled through the worker's pipe instead), each with
  // what it held: ("batch['path']", "list of 32 str"). Empty when every part is a tensor, and in
  // documents written before they were named.
  struct NoTensorField {
    std::string field;
    std::string holds;
  };
  std::vector<NoTensorField> no_tensor_bytes;
  CalFigure tensors_per_batch;  // tensors in a batch (the main process's round trips with the worker's sharer);
                                // zeros in documents written before it was counted
  CalFigure worker_startup_s;   // iter(loader) to a worker's worker_init_fn, s
  // A fresh worker's one-time CPU each epoch (fork to worker_init_fn, plus its first batches'
  // costs beyond the steady per-sample cost, plus its shutdown and exit), s: the smallest of the
  // passes' means (a stall in one pass only adds to it), min/max over the passes; and the main
  // thread's CPU in iter() (the forks), s: the mean over the passes. Documents written before
  // these were measured lack them: startup_measured false, zeros.
  bool startup_measured = false;
  CalFigure worker_startup_cpu_s;
  CalFigure main_startup_cpu_s;
  // The worker's steady CPU by thread (they add up to worker_cpu_per_sample_us), µs per sample: the
  // loop (__getitem__ + collate); the multiprocessing.Queue feeder thread's put (pickling the batch,
  // moving its tensors into shared memory, writing the pipe), which overlaps the loop's next batch;
  // and the worker's other threads (chiefly multiprocessing's resource sharer, handing each
  // tensor's file descriptor to the main process as it unpickles: a round trip per tensor). Documents written
  // before the split was measured lack them: split_measured false, zeros (the whole cost is then
  // the loop's); documents written before the feeder thread's own clock was read lack the third:
  // other_measured false, and the put holds the other threads' CPU too.
  bool split_measured = false;
  CalFigure worker_loop_cpu_per_sample_us;
  CalFigure worker_put_cpu_per_sample_us;
  bool other_measured = false;
  CalFigure worker_other_cpu_per_sample_us;
  // The worker's costs with more worker processes than CPUs (`calibrate --oversubscribe`), by
  // increasing workers_per_cpu; the figures above stand for up to one worker process per CPU.
  // Documents written before it was measured, or calibrated with --oversubscribe none, lack it:
  // oversubscription_measured false, no points.
  bool oversubscription_measured = false;
  std::vector<CalLoadPoint> oversubscription;
  // ioprobe's own read of the files from the page cache, per engine, µs CPU per file (the whole
  // process: its worker, the engine, io_uring's kernel workers): the loop cost above includes the
  // Dataset's own read, and ioprobe's workers read the file for real, so `run` burns the loop cost
  // less this (cli/calibrate_read.hpp). Documents written before it was measured lack it:
  // own_read_measured false, zeros (nothing is taken off); an engine not measured here keeps zeros.
  bool own_read_measured = false;
  CalFigure own_read_io_uring_us;
  CalFigure own_read_psync_us;
  // The share (0..1) of the feeder's put CPU that holds CPython's GIL: the batch pickled as a
  // worker's feeder pickles it, beside a thread running pure Python (python/ioprobe_gil.py); torch
  // copies the tensors into shared memory without the GIL, and the worker's other threads run
  // meanwhile. min/max over the trials. Not measured on one CPU, nor in documents written before it:
  // feeder_gil_measured false, the share 1 (the whole put holds the lock), the reason in the method.
  bool feeder_gil_measured = false;
  std::string feeder_gil_method;
  CalFigure feeder_gil_share{1, 1, 1};
  // A thread pipeline (dataset_kind "thread-pipeline"; python/ioprobe_threads.py): its process's CPU
  // per sample (every thread, the main one too), µs, min/max over the thread counts measured; the
  // share (0..1) of it that holds the one GIL, 1 / the pipeline's parallelism (samples/s x CPU per
  // sample) where it is below the threads and CPUs, min/max over the passes of 2 or more threads,
  // and how it was taken. thread_cpu_bound: the pipeline filled the CPUs, the share is an upper
  // bound. worker_cpu_per_sample_us holds the CPU too; the DataLoader's other figures are 0.
  CalFigure thread_cpu_per_sample_us;
  bool thread_gil_measured = false;
  CalFigure thread_gil_share{1, 1, 1};
  std::string thread_gil_method;
  bool thread_cpu_bound = false;
  bool thread_pipeline() const { return dataset_kind == "thread-pipeline"; }
  bool pin_measured = false;                      // false: no pin figure (reason in pin_method)
  std::string pin_method;                         // how the pin cost was measured, or why it was not
  CalFigure pin_cpu_per_batch_us;                 // pin thread's CPU per batch, µs
  nlohmann::json rows = nlohmann::json::array();  // the driver's per-run measurements, as measured

  /// The main-process cost per sample (main_cpu_per_batch_us / batch_size), µs.
  double main_cpu_per_sample_us() const { return batch_size ? main_cpu_per_batch_us.value / batch_size : 0; }
};

/// The document (kind, schema_version and every field above).
nlohmann::json calibration_to_json(const Calibration& c);

/// Reads a document back. Throws UsageError naming `where` (the file) and the field when it is not
/// a calibration document, has another "schema" or schema_version, lacks a field, or holds a figure that is
/// negative, not finite, or out of order (min <= value <= max); a batch_size outside 1..1,000,000 or a
/// tensors_per_batch above 1,000,000 (edited or damaged: no DataLoader's) or a feeder GIL share above 1 too, and
/// oversubscription points whose workers_per_cpu are not above 1 and strictly increasing, or whose loop + put + other
/// is not their worker total.
Calibration calibration_from_json(const nlohmann::json& j, const std::string& where);

/// Reads and checks the file at `path` (calibration_from_json). Throws UsageError naming the path
/// when it is not a regular file (a device or FIFO would be read without end), is larger than
/// 64 MiB (a document is tens of KB), cannot be read or is not valid JSON.
Calibration load_calibration(const std::string& path);

/// Builds the figures from the driver's output (python/ioprobe_calibrate.py's JSON object: rows
/// of num_workers x pin_memory): worker cost = mean over the rows with workers, main cost = mean
/// over the rows with workers and without pin, pin cost = mean over the pin rows with workers;
/// min/max over the same rows; rows marked "oversubscribed" (a pass on fewer CPUs than workers)
/// are left out of those and become the oversubscription points instead. Throws Error naming `where` when a field is
/// missing or no row has workers.
Calibration calibration_from_driver(const nlohmann::json& out, const std::string& where);

/// The driver's result as it wrote it to its result file (`text`: one JSON object) into the figures
/// (calibration_from_driver). Returns nullopt when `text` is not JSON: the driver did not finish (a
/// --python that is no Python, or the user's code ended the process early); throws as
/// calibration_from_driver otherwise.
std::optional<Calibration> calibration_from_driver_result(const std::string& text, const std::string& where);

}  // namespace ioprobe
