// The "capacity" result document as a typed value: built once by `ioprobe capacity`
// (cli/capacity_command.cpp), written by capacity_document_json, read back strictly by
// capacity_document_from_json for `ioprobe report`, and rendered (report/capacity_report.hpp)
// from this value only.
//
// Keys (reports/result.schema.json), besides the header of report/document.hpp document_header:
//   target, targets, dataset   report/document_sections.hpp (target: with the read setting)
//   loader    {num_workers, batch_size, prefetch_factor, engine, direct, shuffle, cpu_per_sample_us,
//              step_time_s} + the consumer model (run_document.hpp consumer_model_json: decode, ...)
//   demand    {accelerator, accelerator_name, model, rate_family, samples_per_s_per_gpu, source,
//              sample_bytes, au_target}
//   capacity  {accelerator, accelerator_name, model, au_target, gpus_fed, bound, boundary_measured,
//              answer, samples_per_s_per_gpu, sample_bytes, point_s, repeats, budget_s, elapsed_s,
//              max_gpus, stop_reason, points [capacity/point_json.hpp's point + demand_samples_per_s
//              (samples/s), passed, device_io (report/device_io_report.hpp, read ratio to the point's
//              delivered_bytes; in each host row likewise to the row's)], calibration_effect
//              (report/calibration_effect_report.hpp; with --calibration only)}
//   partial, warnings
//   cluster   (across hosts only) {launcher, hosts, hostnames [string], mpi_ranks, dataset_placement,
//              dataset_placement_how, split (each point's accelerators over the hosts, in words),
//              merge (how the processes' results were merged, in words)}
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "capacity/search.hpp"
#include "ingest/calibration_effect.hpp"
#include "report/document_sections.hpp"
#include "report/run_document.hpp"
#include "topology/device_io.hpp"

namespace ioprobe {

/// Why the search ended: "completed" (the answer found), "limit" (--max-gpus reached), "budget"
/// (--budget ran out before the boundary was measured), "interrupted" (a signal, on any host).
enum class CapacityStop { kCompleted, kLimit, kBudget, kInterrupted };
/// Its text, as the document's capacity.stop_reason holds it.
const char* to_string(CapacityStop s);
/// The stop a text names; nullopt for any other text.
std::optional<CapacityStop> capacity_stop_from_string(std::string_view text);

/// The search's settings and demand, beside its answer, in the "capacity" section.
struct CapacitySectionInputs {
  std::string accelerator, accelerator_name, model;
  double au_target = 0.9;                           // fraction
  double samples_per_s_per_gpu = 0;                 // the demand of one emulated accelerator, samples/s
  double sample_bytes = 0;                          // bytes per sample for the bytes/s demand
  double point_s = 0, budget_s = 0, elapsed_s = 0;  // s
  uint32_t repeats = 0, max_gpus = 0;
  CapacityStop stop = CapacityStop::kCompleted;  // the document's stop_reason
};

/// The loader setting every point ran (each point sets its own GPU ranks).
struct CapacityLoaderSection {
  uint32_t num_workers = 0;
  uint32_t batch_size = 0;  // samples
  uint32_t prefetch_factor = 0;
  EngineKind engine = EngineKind::kPsync;
  bool direct = false;  // O_DIRECT
  bool shuffle = false;
  double cpu_per_sample_us = 0;  // µs
  double step_time_s = 0;        // one GPU step of a full batch, s
  RunConsumerModel consumer;     // its "decode" is the loader section's
};

/// The demand of one emulated accelerator (ingest/catalog.hpp Demand, as the search used it).
struct CapacityDemandSection {
  std::string accelerator, accelerator_name, model, rate_family;
  double samples_per_s_per_gpu = 0;  // samples/s
  std::string source;                // where the rate comes from
  double sample_bytes = 0;           // B per sample
  double au_target = 0;              // fraction 0..1
};

/// What the target's devices did over a point's repeats (cli/device_accounting.hpp
/// CapacityDeviceIo): all hosts added, and each host's own by host index.
struct CapacityPointDeviceIo {
  DeviceIo all;
  std::map<int, DeviceIo> hosts;
};

/// The "capacity" section: the search's settings and answer, each point's devices, the
/// calibration's modelled effect.
struct CapacitySection {
  CapacitySectionInputs in;  // settings, demand figures and why the search stopped
  CapacityAnswer answer;     // how many accelerators this storage feeds (gpus_fed), bound, text, points
  std::map<uint32_t, CapacityPointDeviceIo> device_io;  // by the point's gpus; a point without one: not measured
  std::optional<CalibrationEffect> calibration_effect;  // with --calibration, at the GPU ranks found fed
};

/// A capacity search across hosts: how the job was laid out and each point split over it.
struct CapacityClusterSection {
  std::string launcher;  // "mpirun", "srun", ...
  int hosts = 0;
  std::vector<std::string> hostnames;  // by host index
  int mpi_ranks = 0;
  std::string dataset_placement;  // "shared" | "node-local"
  std::string dataset_placement_how;
  std::string split;  // how each point's accelerators are split over the hosts and processes
  std::string merge;  // how the processes' results were merged
};

/// A "capacity" result document.
struct CapacityDocument {
  RunHeader header;      // the common header (its fields are not run-specific)
  TargetSection target;  // with the read setting (report/document_sections.hpp)
  std::vector<TargetShareSection> targets;
  DatasetSection dataset;
  CapacityLoaderSection loader;
  CapacityDemandSection demand;
  CapacitySection capacity;
  bool partial = false;  // interrupted, or no point measured
  std::vector<std::string> warnings;
  std::optional<CapacityClusterSection> cluster;  // none: one process
};

/// The document exactly as `ioprobe capacity` writes it (the keys above). Derived figures
/// (demand_samples_per_s, passed, the device_io ratios) are computed here from the typed values.
nlohmann::json capacity_document_json(const CapacityDocument& doc);

/// Writes capacity_document_json(doc) to `path` as write_json_file does (atomically; its errors).
void write_capacity_document(const std::string& path, const CapacityDocument& doc);

/// A saved capacity document read back. Strict: a missing or mistyped field is refused with
/// UsageError naming `where` (e.g. "'a.json'") and the field's path ("'a.json'.capacity.points[1].au:
/// expected a number, found ..."). Derived figures are checked for type and
/// recomputed when written again.
CapacityDocument capacity_document_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace ioprobe
