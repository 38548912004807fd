#include "ingest/analysis.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/page_cache.hpp"

namespace ioprobe {

double rank_accelerator_utilization(const RankStats& rk) {
  if (rk.elapsed_ns <= 0) return 0;
  return std::min(1.0, static_cast<double>(rk.nominal_compute_ns) / static_cast<double>(rk.elapsed_ns));
}

std::string cache_source_note(const std::vector<double>& resident) {
  if (resident.empty()) return " [buffered reads; page-cache residency was not measured]";
  double lo = 1, hi = 0;
  for (double f : resident) {
    lo = std::min(lo, f);
    hi = std::max(hi, f);
  }
  if (std::string(residency_source(lo)) == "page cache") return " [measured from the page cache, not the device]";
  if (std::string(residency_source(hi)) == "device")
    return fmt::format(" [read from the device: at most {:.0f}% of the data was in the page cache before an epoch]",
                       hi * 100);
  return fmt::format(" [mixed: {:.0f}-{:.0f}% of the data was in the page cache before each epoch, so the figure is "
                     "partly memory, partly device]",
                     lo * 100, hi * 100);
}

std::string failed_reads_note(const LoaderResult& r) {
  if (r.errors == 0) return "";
  const double attempted = static_cast<double>(r.samples + r.errors);
  return fmt::format(", but {} ({:.0f}% of the samples attempted): the rate counts only the samples read (see ERRORS)",
                     failed_reads_text(r.errors, r.error_spread()), 100 * static_cast<double>(r.errors) / attempted);
}

uint64_t batches_per_rank_epoch(uint64_t samples_per_epoch, uint32_t ranks, uint32_t batch_size, bool drop_last) {
  if (samples_per_epoch == 0 || ranks == 0 || batch_size == 0) return 0;
  const uint64_t per_rank = (samples_per_epoch + ranks - 1) / ranks;
  return drop_last ? per_rank / batch_size : (per_rank + batch_size - 1) / batch_size;
}

std::string few_batches_warning(uint64_t batches, uint32_t ranks, uint32_t batch_size, const std::string& where,
                                const std::string& longer) {
  if (batches == 0 || batches >= kFewBatchesPerEpoch) return "";
  return fmt::format(
      "{} rests on {} batch{} per rank per epoch: each epoch start waits for the first batch again (the workers "
      "refill the prefetch pipeline, as a DataLoader without persistent_workers does), and with fewer than {} "
      "batches per epoch those waits, not the storage, can set the rate (their share was not measured); use "
      "more --files (at least {} for {} rank{} at batch size {}), or a larger dataset with {}",
      where, batches, batches == 1 ? "" : "es", kFewBatchesPerEpoch,
      kFewBatchesPerEpoch * static_cast<uint64_t>(ranks) * batch_size, ranks, ranks == 1 ? "" : "s", batch_size,
      longer);
}

WorkerLoad worker_load(const LoaderResult& r) {
  WorkerLoad w;
  double busy = 0, cpu_work = 0, runq = 0, put = 0;
  bool runq_known = !r.workers.empty();
  for (const auto& wk : r.workers) {
    busy += static_cast<double>(wk.busy_ns);
    cpu_work += static_cast<double>(wk.cpu_work_ns);
    put += static_cast<double>(wk.put_cpu_ns);
    runq += static_cast<double>(std::max<int64_t>(0, wk.runq_wait_ns));
    runq_known = runq_known && wk.runq_wait_ns >= 0;
  }
  const double worker_time = static_cast<double>(r.elapsed_ns) * static_cast<double>(r.workers.size());
  w.busy = worker_time > 0 ? std::min(1.0, busy / worker_time) : 0;
  w.cpu_share = busy > 0 ? std::min(1.0, cpu_work / busy) : 0;
  w.feeder_busy = worker_time > 0 ? std::min(1.0, put / worker_time) : 0;
  if (put > 0)
    w.feeder_ceiling_samples_per_s = static_cast<double>(r.samples) * static_cast<double>(r.workers.size()) /
                                     (put / 1e9);
  w.runq_share = !runq_known ? (r.workers.empty() ? 0 : -1) : busy > 0 ? std::min(1.0, runq / busy) : 0;
  return w;
}

IngestResult analyze_ingest(const LoaderResult& r, const Demand& d, const AnalysisInputs& in) {
  IngestResult out;
  out.demand = d;
  out.required_samples_per_s = d.samples_per_s_per_gpu * d.gpus;
  out.required_bytes_per_s = out.required_samples_per_s * in.sample_bytes;
  const double elapsed_s = static_cast<double>(r.elapsed_ns) / 1e9;
  if (elapsed_s > 0) {
    out.delivered_samples_per_s = static_cast<double>(r.samples) / elapsed_s;
    out.delivered_bytes_per_s = static_cast<double>(r.bytes) / elapsed_s;
  }
  double au_sum = 0, au_min = 1;
  for (const auto& rk : r.ranks) {
    double au = rank_accelerator_utilization(rk);
    au_sum += au;
    au_min = std::min(au_min, au);
    out.consumer_wait_s += static_cast<double>(rk.wait_ns) / 1e9;
    out.consumer_lag_s += std::max<double>(0, static_cast<double>(rk.elapsed_ns - rk.wait_ns - rk.nominal_compute_ns) /
                                                  1e9);
  }
  out.accelerator_utilization = r.ranks.empty() ? 0 : au_sum / static_cast<double>(r.ranks.size());
  out.accelerator_utilization_min = r.ranks.empty() ? 0 : au_min;

  const WorkerLoad load = worker_load(r);
  out.worker_busy_fraction = load.busy;
  out.worker_cpu_fraction = load.cpu_share;
  out.worker_runq_fraction = load.runq_share;
  out.worker_feeder_busy_fraction = load.feeder_busy;
  out.worker_feeder_ceiling_samples_per_s = load.feeder_ceiling_samples_per_s;

  const bool fed = out.accelerator_utilization >= d.au_target;
  out.demand_bytes_per_s_per_gpu = d.samples_per_s_per_gpu * in.sample_bytes;
  out.gpu_links = in.gpu_links;
  double step_s = 0;
  for (const auto& rk : r.ranks) {
    out.h2d_copies += rk.h2d_copies;
    out.h2d_bytes += rk.h2d_bytes;
    out.h2d_s += static_cast<double>(rk.h2d_ns) / 1e9;
    step_s += static_cast<double>(rk.compute_ns) / 1e9;
    if (out.h2d_error.empty() && !rk.h2d_error.empty()) out.h2d_error = rk.h2d_error;
  }
  if (out.h2d_s > 0) {
    out.h2d_bytes_per_s = static_cast<double>(out.h2d_bytes) / out.h2d_s;
    out.h2d_share_of_step = out.h2d_s / (out.h2d_s + step_s);
  }
  for (size_t i = 0; i < in.gpu_links.size(); ++i) {
    const double cap = in.gpu_links[i].bytes_per_s_per_direction;
    if (cap <= 0 || out.demand_bytes_per_s_per_gpu <= cap) continue;
    if (out.h2d_limiting < 0 || cap < in.gpu_links[static_cast<size_t>(out.h2d_limiting)].bytes_per_s_per_direction)
      out.h2d_limiting = static_cast<int>(i);
  }
  // Only what this run measured: its GPU count, fed or not. No multiplier of a rate or a busy
  // fraction (a GPU-paced run's headroom does not predict latency under more load).
  out.gpus_fed = fed ? d.gpus : 0;

  // The rank's serial stages: main process and pin thread.
  double main_ceiling = 0, pin_ceiling = 0;
  int main_n = 0, pin_n = 0;
  for (const auto& rk : r.ranks) {
    if (rk.elapsed_ns <= 0) continue;
    const double el = static_cast<double>(rk.elapsed_ns);
    if (rk.main_busy_ns > 0) {
      out.main_busy_fraction = std::max(out.main_busy_fraction, std::min(1.0, rk.main_busy_ns / el));
      main_ceiling += static_cast<double>(rk.samples) / (static_cast<double>(rk.main_busy_ns) / 1e9);
      ++main_n;
    }
    if (rk.pin_busy_ns > 0) {
      out.pin_busy_fraction = std::max(out.pin_busy_fraction, std::min(1.0, rk.pin_busy_ns / el));
      pin_ceiling += static_cast<double>(rk.samples) / (static_cast<double>(rk.pin_busy_ns) / 1e9);
      ++pin_n;
    }
  }
  if (main_n) out.main_ceiling_samples_per_s = main_ceiling / main_n;
  if (pin_n) out.pin_ceiling_samples_per_s = pin_ceiling / pin_n;

  // Bottleneck: the first of CPU, main process, pin memory, workers, metadata, storage that
  // explains the wait.
  const double cpu_s = r.cpu_user_s + r.cpu_sys_s;
  const double cpu_use = elapsed_s > 0 ? cpu_s / elapsed_s : 0;  // CPUs busy on average
  const double file_ns = r.file_latency.mean() * static_cast<double>(r.file_latency.count());
  const double open_ns = r.open_latency.mean() * static_cast<double>(r.open_latency.count());
  const double open_share = file_ns > 0 ? open_ns / file_ns : 0;
  const uint64_t reads_done = r.file_latency.count();
  if (r.samples == 0) {
    out.verdict = "failed";
    if (r.errors > 0)
      out.verdict_text = fmt::format("no sample was read: {} read{} failed (see ERRORS)", r.errors,
                                     r.errors == 1 ? "" : "s");
    else if (reads_done > 0 && r.stop.kind == LoaderStopKind::kDuration)
      // Reads finished but no whole batch reached the consumer: the duration was shorter than
      // the pipeline's first batch (worker start, a batch of reads and their CPU work).
      out.verdict_text = fmt::format(
          "no batch completed within the --duration of {:.2f} s (duration reached): {} read{} finished, but the "
          "first batch was not yet whole, so nothing was delivered to measure; rerun with a longer --duration (the "
          "first batch includes the workers' start, a batch of reads and their CPU work per sample)",
          elapsed_s, reads_done, reads_done == 1 ? "" : "s");
    else
      out.verdict_text = fmt::format(
          "no sample was read: the run ended ({}) after {:.1f} s before any sample was complete; a sample may be "
          "too large to read in the time given (see the dataset's sizes and the warnings), or the storage stalled",
          to_string(r.stop), elapsed_s);
    out.gpus_fed = 0;
  } else if (r.stopped_on_errors) {
    out.verdict = "failed";
    out.verdict_text = to_string(r.stop) + ": the rates measure the failure, not the storage";
    out.gpus_fed = 0;
  } else if (static_cast<double>(r.errors) > kMaxFailedShareForVerdict * static_cast<double>(r.samples + r.errors)) {
    out.verdict = "failed";
    out.verdict_text = fmt::format(
        "{} ({:.1f}% of the samples attempted, more than the {:.0f}% a verdict allows): the rates measure the files "
        "that could be read, not the dataset given, so no verdict on the storage and no GPU counts as fed; fix or "
        "drop the failing files (see ERRORS) and rerun",
        failed_reads_text(r.errors, r.error_spread()),
        100 * static_cast<double>(r.errors) / static_cast<double>(r.samples + r.errors),
        100 * kMaxFailedShareForVerdict);
    out.gpus_fed = 0;
  } else if (out.h2d_limiting >= 0) {
    const GpuLinkCeiling& g = out.gpu_links[static_cast<size_t>(out.h2d_limiting)];
    out.verdict = "host-to-device link";
    out.verdict_text = fmt::format(
        "host-to-device-link-bound: each GPU needs {:.2f} GB/s ({:.0f} samples/s x {:.0f} B) but GPU {}'s link "
        "carries at most {:.2f} GB/s per direction ({}){}; smaller samples in bytes (uint8, compressed on the GPU), "
        "a faster link, or fewer samples/s per GPU will help",
        out.demand_bytes_per_s_per_gpu / 1e9, d.samples_per_s_per_gpu, in.sample_bytes, g.pci_address,
        g.bytes_per_s_per_direction / 1e9, g.basis,
        g.downtrained ? "; the link is DOWNTRAINED: reseat the card or check the slot/riser to get its full speed"
                      : "");
    out.gpus_fed = 0;
  } else if (fed) {
    out.verdict = "none";
    out.verdict_text = fmt::format("storage keeps up: AU {:.1f}% >= {:.0f}% target for {} x {}",
                                   out.accelerator_utilization * 100, d.au_target * 100, d.gpus, d.accelerator_name);
  } else if (cpu_use >= 0.85 * in.cpus_allowed) {
    out.verdict = "CPU";
    out.verdict_text = fmt::format(
        "CPU-bound: the process used {:.2f} of {} allowed CPUs{}; more workers will not help, more cores or cheaper "
        "per-sample work will",
        cpu_use, in.cpus_allowed,
        in.cpu_per_sample_us > 0 ? fmt::format(" ({:.0f} µs of decode/transform per sample)", in.cpu_per_sample_us)
                                 : "");
  } else if (cpu_starved(load)) {
    out.verdict = "CPU";
    out.verdict_text = fmt::format(
        "CPU-starved: the workers waited for a CPU {:.0f}% of the time they had work (runnable, no allowed CPU free; "
        "the process itself used {:.2f} of {} allowed CPUs, so other processes on this host most likely took them); "
        "the storage "
        "was not the limit measured here: rerun on a quiet host, or with more cores",
        load.runq_share * 100, cpu_use, in.cpus_allowed);
  } else if (out.main_busy_fraction >= kSerialStageBound) {
    out.verdict = "main process";
    out.verdict_text = fmt::format(
        "main-process-bound: each rank's main process was busy {:.0f}% of the time receiving batches ({:.0f} µs CPU "
        "per batch), which caps a rank at {:.0f} samples/s however many workers it has; fewer, larger samples, a "
        "cheaper collate output (one tensor per batch) or more ranks per host will help",
        out.main_busy_fraction * 100, in.main_cpu_per_batch_us, out.main_ceiling_samples_per_s);
  } else if (out.pin_busy_fraction >= kSerialStageBound) {
    out.verdict = "pin memory";
    out.verdict_text = fmt::format(
        "pin-memory-bound: each rank's pin_memory thread was busy {:.0f}% of the time copying batches into "
        "page-locked memory, which caps a rank at {:.0f} samples/s; smaller batches in bytes (uint8 instead of "
        "float32) or pin_memory=False with a non-blocking copy will help",
        out.pin_busy_fraction * 100, out.pin_ceiling_samples_per_s);
  } else if (feeder_bound(load) && !workers_bound(load)) {
    out.verdict = "workers";
    out.verdict_text = fmt::format(
        "worker-bound (queue feeder): each worker's feeder thread was busy {:.0f}% of the time putting batches on "
        "the queue to the main process (pickling, moving tensors into shared memory), which caps the {} workers at "
        "{:.0f} samples/s; more num_workers (up to the {} allowed CPUs) or a collate output that is cheaper to send "
        "(one tensor per batch) will help",
        load.feeder_busy * 100, in.num_workers_total, out.worker_feeder_ceiling_samples_per_s, in.cpus_allowed);
  } else if (workers_bound(load)) {
    out.verdict = "workers";
    out.verdict_text = fmt::format(
        "worker-bound: the {} workers were busy {:.0f}% of the time, {:.0f}% of it on per-sample CPU work ({:.0f} µs "
        "per sample); more num_workers (up to the {} allowed CPUs) or cheaper per-sample work will help",
        in.num_workers_total, out.worker_busy_fraction * 100, out.worker_cpu_fraction * 100, in.cpu_per_sample_us,
        in.cpus_allowed);
  } else if (open_share >= 0.5) {
    out.verdict = "metadata";
    out.verdict_text = fmt::format(
        "metadata/open-bound: open+close take {:.0f}% of each file's time; {:.0f} files/s; larger files, shards or a "
        "faster metadata server would help",
        open_share * 100, out.delivered_samples_per_s);
  } else {
    out.verdict = "storage";
    out.verdict_text = fmt::format(
        "storage-bound: the loader delivered {:.0f} of the {:.0f} samples/s needed ({:.0f}%)",
        out.delivered_samples_per_s, out.required_samples_per_s,
        out.required_samples_per_s > 0 ? 100 * out.delivered_samples_per_s / out.required_samples_per_s : 0);
  }
  // A verdict on a run some of whose reads failed: the rate and AU count only the samples read, so
  // the verdict says so (a "keeps up" with a file unreadable every epoch is not a clean pass).
  if (out.verdict != "failed" && r.errors > 0) out.verdict_text += failed_reads_note(r);
  if (in.buffered_warm) out.verdict_text += cache_source_note(r.epoch_resident_fraction);
  return out;
}

}  // namespace ioprobe
