// The GPU side of a run: what N GPUs demand, the accelerator utilization (AU) the loader gave
// them, the bottleneck verdict, and whether this run's GPUs were fed.
//
// AU = compute time / (compute time + time waiting for data), per rank, as MLPerf Storage
// defines it; the run's AU is the mean over ranks. MLPerf Storage requires AU >= 90% for
// unet3d and resnet50 and >= 70% for cosmoflow (mlcommons/storage Rules.md, v1.0 and v2.0).
#pragma once

#include <string>
#include <vector>

#include "loader/loader_run.hpp"

namespace ioprobe {

/// The demand side, resolved from the catalog or from the user's own figures.
struct Demand {
  std::string accelerator;  // "h100", or "custom"
  std::string accelerator_name;
  std::string model;
  std::string rate_family;  // "training" | "emulation" | "user"
  double samples_per_s_per_gpu = 0;
  std::string source;  // where samples_per_s_per_gpu comes from
  uint32_t gpus = 1;
  double au_target = 0.9;  // fraction
};

/// One GPU's host-to-device link: the nominal ceiling the verdict checks the demand against
/// (filled by ingest/h2d_link.hpp from the topology).
struct GpuLinkCeiling {
  std::string pci_address;  // "0000:81:00.0"
  int numa_node = -1;
  double bytes_per_s_per_direction = 0;  // B/s, nominal; 0 unknown (no PCIe link facts)
  std::string basis;                     // PcieLink::describe(): speed, width, "computed ... (nominal)"
  bool downtrained = false;              // current speed or width below the maximum
};

/// Inputs beyond the loader result that the verdict needs.
struct AnalysisInputs {
  int cpus_allowed = 1;
  uint32_t num_workers_total = 1;
  double cpu_per_sample_us = 0;
  double main_cpu_per_batch_us = 0;  // the main process's CPU per batch the run modelled, µs (0: none)
  uint32_t batch_size = 0;           // samples per full batch (the main-process ceiling is per batch)
  double sample_bytes = 0;           // bytes per sample used for the bytes/s demand (measured mean or --sample-bytes)
  bool buffered_warm = false;        // buffered reads without eviction: the page cache may serve them; the verdict
                                     // then says where they came from (cache_source_note)
  std::vector<GpuLinkCeiling> gpu_links;  // the links of the GPUs this host's ranks feed; empty: no GPU seen
};

struct IngestResult {
  Demand demand;
  double required_samples_per_s = 0;  // gpus x per-GPU rate
  double required_bytes_per_s = 0;    // required_samples_per_s x sample_bytes
  double delivered_samples_per_s = 0;
  double delivered_bytes_per_s = 0;
  double accelerator_utilization = 0;  // mean over ranks, fraction 0..1
  double accelerator_utilization_min = 0;
  double consumer_wait_s = 0;       // summed over ranks
  double consumer_lag_s = 0;        // summed over ranks: elapsed - wait - nominal compute (host delays)
  double worker_busy_fraction = 0;  // mean fraction of wall time workers spent fetching
  uint64_t gpus_fed = 0;            // measured by this run only: d.gpus when AU >= au_target, else 0 (fewer
                                    // than d.gpus). How many this storage feeds is found by search
                                    // (`ioprobe capacity`), never extrapolated from one run's rate.
  // The serial stages of a rank beside its workers (0 when the run did not model them). A stage
  // busy >= kSerialStageBound of the time caps the rank at its ceiling however many workers it has.
  double main_busy_fraction = 0;          // max over ranks: main-process work / elapsed
  double main_ceiling_samples_per_s = 0;  // per rank: samples / main-process busy time (mean over ranks)
  double pin_busy_fraction = 0;           // max over ranks: pin-thread copying / elapsed
  double pin_ceiling_samples_per_s = 0;   // per rank: samples / pin-thread busy time (mean over ranks)
  double worker_cpu_fraction = 0;         // workers' per-sample CPU work / their busy time, 0..1
  double worker_runq_fraction = 0;        // workers' wait for a CPU / their busy time, 0..1; -1 not measured
  // The workers' queue feeder threads (LoaderCosts: worker.put_us), 0 when not modelled:
  // their put CPU / (elapsed x workers), and the rate they cap all workers at (samples / put CPU
  // time per worker, samples/s). Busy >= kSerialStageBound: the put, not the fetch, sets the pace.
  double worker_feeder_busy_fraction = 0;
  double worker_feeder_ceiling_samples_per_s = 0;
  double demand_bytes_per_s_per_gpu = 0;  // samples_per_s_per_gpu x sample_bytes
  std::vector<GpuLinkCeiling> gpu_links;  // as given
  int h2d_limiting = -1;
  // The measured copies to the GPU (--h2d cuda), summed over ranks; zeros when none ran.
  uint64_t h2d_copies = 0;
  uint64_t h2d_bytes = 0;
  double h2d_s = 0;              // wall time of the copies, all ranks
  double h2d_bytes_per_s = 0;    // h2d_bytes / h2d_s: one rank's copy rate, B/s
  double h2d_share_of_step = 0;  // copy time / (copy time + GPU step time), fraction 0..1
  std::string h2d_error;  // the first rank's CUDA error, "" none                   // index in gpu_links of the slowest
                          // link below the demand, -1 none
  std::string verdict;    // one of kVerdicts
  std::string verdict_text;  // one sentence for the report
};

/// Every verdict analyze() gives: the bottleneck's name, "none" when the GPUs were fed, "failed"
/// when the run delivered nothing usable.
inline constexpr const char* kVerdicts[] = {"none",       "host-to-device link",
                                            "CPU",        "main process",
                                            "pin memory", "workers",
                                            "metadata",   "storage",
                                            "failed"};

/// AU of one rank, as MLPerf Storage defines it: compute time / total time, where compute time
/// is the nominal step time of the batches delivered (what the GPUs' rate asks for) and total
/// time the rank's elapsed time. A consumer that fell behind its nominal step (a busy host
/// oversleeping) therefore lowers AU rather than hiding in it. Fraction 0..1.
double rank_accelerator_utilization(const RankStats& rk);

/// The verdict's note on where buffered reads came from, from the resident fraction measured
/// before each epoch (engine/page_cache.hpp residency_source): every epoch "page cache" ->
/// "[measured from the page cache, not the device]"; every epoch "device" -> read from the
/// device; otherwise "mixed" with the range. Empty `resident`: not measured.
std::string cache_source_note(const std::vector<double>& resident);

/// The clause a verdict other than "failed" gets when some reads failed (r.errors > 0): ", but 24
/// failed reads of 1 file (11% of the samples attempted): the rate counts only the samples read
/// (see ERRORS)"; the share is errors / (samples + errors), the files from r.error_samples
/// (core/error_record.hpp error_spread: "at least" when records were dropped). "" when none failed.
std::string failed_reads_note(const LoaderResult& r);

/// Batches per rank per epoch below which a storage verdict (or a capacity bound) is flagged: each
/// epoch start waits for its first batch again (the workers refill the prefetch pipeline, as a
/// DataLoader without persistent_workers does), so an epoch of few batches loses a share of its
/// rate to the boundary. Measured (ext4, 1 rank, 8 workers, batch 256, 1,000 samples/s demand,
/// --duration 5s; docs/run.md): AU 91.3% at 4 batches per epoch, 95.2% at 10,
/// 98.4% at 20, 98.3% at 40: the loss is gone by 20 batches, so below it the boundary, not the
/// storage, can decide the verdict (a field run at 4 batches read 800 of 1,000 samples/s needed
/// from storage that delivered 4,088 unthrottled).
inline constexpr uint64_t kFewBatchesPerEpoch = 20;

/// Batches one rank gets per epoch: samples_per_epoch split over `ranks` (DistributedSampler:
/// ceil), in batches of `batch_size` (ceil; floor with drop_last). 0 when any input is 0.
uint64_t batches_per_rank_epoch(uint64_t samples_per_epoch, uint32_t ranks, uint32_t batch_size, bool drop_last);

/// The warning for a storage verdict (or capacity bound) at `batches` (< kFewBatchesPerEpoch)
/// batches per rank per epoch: names the count, that each epoch start waits for the first batch
/// again, that its share was not measured, and what to do (at least kFewBatchesPerEpoch x ranks x
/// batch_size samples: more --files, or a larger dataset with `longer`, the option that lengthens
/// the run: "--duration", "--point-time"). `where` begins the sentence ("the storage verdict",
/// "the answer (storage-bound at 1 GPU rank)"). "" when batches is 0 or >= kFewBatchesPerEpoch.
std::string few_batches_warning(uint64_t batches, uint32_t ranks, uint32_t batch_size, const std::string& where,
                                const std::string& longer = "--duration");

/// Busy fraction of a serial stage (main process, pin thread) at and above which it is named the
/// bottleneck: the stage then runs nearly all the time and the rank cannot go faster.
inline constexpr double kSerialStageBound = 0.8;

/// The largest share of the samples attempted that may fail for a run to get a verdict on the
/// storage (fed or not, and what bounds it): 1%. Beyond it the rate measures a smaller, different
/// dataset than the one given (a file list with half its paths missing reads half the data, fast),
/// so the verdict is "failed" and no GPU counts as fed. An ioprobe choice: a missing or unreadable
/// file stops a real PyTorch DataLoader at its first read, so any share above a few stray errors
/// is a run that would not train.
inline constexpr double kMaxFailedShareForVerdict = 0.01;

/// How busy a run's workers were. busy: their wall time spent fetching (I/O + per-sample CPU
/// work) / (elapsed x number of workers); cpu_share: their per-sample CPU work (thread CPU time)
/// / that busy time; runq_share: their run-queue wait inside that busy time (runnable, no CPU free:
/// WorkerStats::runq_wait_ns) / that busy time, -1 when not measured; feeder_busy: the workers'
/// queue feeder threads' CPU in the put (WorkerStats::put_cpu_ns) / (elapsed x number of workers),
/// 0 when the run modelled no put; feeder_ceiling_samples_per_s: the samples/s the feeders could
/// put if they ran all the time (samples x workers / their summed put CPU seconds), 0 when no put.
/// Fractions 0..1; all 0 when the run had no workers.
struct WorkerLoad {
  double busy = 0;
  double cpu_share = 0;
  double runq_share = 0;
  double feeder_busy = 0;
  double feeder_ceiling_samples_per_s = 0;
};
WorkerLoad worker_load(const LoaderResult& r);

/// Worker-bound: the workers fetched >= 90% of the time, at least half of it per-sample CPU work,
/// so more num_workers (or cheaper per-sample work), not faster storage, would deliver more.
inline bool workers_bound(const WorkerLoad& w) { return w.busy >= 0.9 && w.cpu_share >= 0.5; }

/// Feeder-bound: the workers' queue feeder threads put batches >= kSerialStageBound of the time, so
/// each worker's loop waits for its put, and more num_workers (or a cheaper-to-send collate
/// output), not faster storage, would deliver more.
inline bool feeder_bound(const WorkerLoad& w) { return w.feeder_busy >= kSerialStageBound; }

/// Share of the workers' busy time spent waiting for a CPU at and above which they were starved of
/// CPUs: the host's CPUs, not the storage, set the pace (another process on the host, or more
/// runnable threads than allowed CPUs).
inline constexpr double kCpuStarvedShare = 0.3;
inline bool cpu_starved(const WorkerLoad& w) { return w.runq_share >= kCpuStarvedShare; }

/// Computes the ingest analysis. Pure function of its inputs. The verdict, when the GPUs are not
/// fed, is the first that holds of: host-to-device link (the demand per GPU, bytes/s, exceeds a
/// known link ceiling of a GPU the ranks feed: checked first, since the emulated consumer does not
/// cross that link, and the GPUs are then not fed whatever the loader delivered), CPU (the process used >= 85% of the
/// allowed CPUs, or its workers waited >= kCpuStarvedShare of their busy time for a CPU: cpu_starved), main process
/// (busy >= kSerialStageBound), pin memory (likewise), workers (busy >= 90% of the time, most of it
/// per-sample CPU work, or their queue feeder threads busy >= kSerialStageBound: more num_workers
/// help), metadata (open+close >= 50% of a file's time), storage. When some reads failed and the
/// verdict is not "failed", verdict_text ends with failed_reads_note (the enum is unchanged).
IngestResult analyze_ingest(const LoaderResult& r, const Demand& d, const AnalysisInputs& in);

}  // namespace ioprobe
