#include "report/run_text.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "report/calibration_effect_report.hpp"
#include "report/cluster_json.hpp"
#include "report/device_io_report.hpp"
#include "report/document_merge.hpp"
#include "report/error_text.hpp"
#include "report/run_document.hpp"
#include "report/text_common.hpp"

#include "core/units.hpp"
#include "engine/engine_choice.hpp"
#include "engine/engine_kind.hpp"
#include "engine/page_cache.hpp"
#include "loader/config.hpp"
#include "stats/latency_json.hpp"

namespace ioprobe {

namespace {

// The percentiles of `h` as the document writes them (latency_us_json, µs), in words.
std::string lat_line(const LatencyHistogram& h) {
  const nlohmann::json l = latency_us_json(h);
  auto f = [](double us) { return format_ns(us * 1e3); };
  return fmt::format("p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  (mean {})", f(l.at("p50")), f(l.at("p90")),
                     f(l.at("p99")), f(l.at("p999")), f(l.at("max")), f(l.at("mean")));
}

using Line = std::function<void(const std::string&, const std::string&)>;

void target_lines(const RunDocument& doc, const Line& line, std::string& o) {
  const TargetSection& t = doc.target;
  const HostSection& host = doc.header.host;
  const TargetReadSetting reading = t.reading.value_or(TargetReadSetting{.cache = "?"});
  const TargetRunFacts facts = t.run.value_or(TargetRunFacts{});
  const std::string& dev = t.device;
  line("path", t.path);
  line("filesystem", fmt::format("{}{}{}", t.fs_type, t.mount_fstype.empty() ? "" : " (" + t.mount_fstype + ")",
                                 t.memory_backed ? ": RAM, not a device measurement" : ""));
  line("device", dev.empty() ? fmt::format("none ({})", t.mount_source)
                             : fmt::format("{}{}", dev,
                                           t.rotational == 1   ? " (rotational)"
                                           : t.rotational == 0 ? " (solid state)"
                                                               : ""));
  o += render_target_rows(doc.targets, "filesystems", 20);
  line("cache", fmt::format("{}: {}", reading.cache, reading.cache_detail));
  if (const auto& b = facts.cache_budget) {
    line("cache budget",
         fmt::format("{} ({}); the dataset ({}) {}", format_bytes(b->bytes), b->source, format_bytes(b->dataset_bytes),
                     b->fits ? "fits" : "does not fit: later epochs partly from the device"));
  }
  if (!facts.epoch_resident_fraction.empty()) {
    std::string res;
    const auto& fr = facts.epoch_resident_fraction;
    const size_t n = fr.size();
    for (size_t i = 0; i < n; ++i) {
      if (n > kMaxEpochRows && i == kMaxEpochRows - 1 && i + 1 < n) {  // many epochs: the first and the last
        res += fmt::format(", ... {} more (results.epochs in the JSON)", n - 1 - i);
        i = n - 1;
      }
      const double f = fr[i];
      const std::string src = residency_source(f);
      res += fmt::format("{}epoch {}: {:.0f}% ({})", res.empty() ? "" : ", ", i + 1, 100 * f,
                         src == "mixed" ? "mixed: partly page cache, partly device" : "from the " + src);
    }
    line("resident before", res + " [" + facts.residency_method + "]");
  }
  line("engine", fmt::format("{} ({})", t.reading ? to_string(reading.engine) : "?", reading.engine_reason));
  if (t.run)
    line("NUMA", fmt::format("{}{}", facts.numa, facts.numa_reason.empty() ? "" : " (" + facts.numa_reason + ")"));
  line("host", fmt::format("{} CPUs allowed ({}) of {} online, {} RAM, kernel {}", host.cpus_allowed, host.cpu_list,
                           host.cpus_online, format_bytes(host.memory_bytes), host.kernel));
}

void dataset_lines(const RunDocument& doc, const Line& line) {
  const DatasetSection& ds = doc.dataset;
  uint64_t files = ds.files;
  const uint64_t full = ds.full_files.value_or(0);
  // A file list naming paths that are not there: the files that hold the data, then what was listed.
  const uint64_t listed = files, missing = std::min(ds.files_missing.value_or(0), files);
  files -= missing;
  const std::string description = ds.description.value_or("");
  line("preset", ds.preset + (description.empty() ? "" : ": " + description));
  const std::string& kind = ds.kind;
  line("files", fmt::format("{} {}, {}{}", format_count(files),
                            kind == "sharded" ? (files == 1 ? "shard" : "shards")
                            : kind == "token" ? (files == 1 ? "token file" : "token files")
                                              : (files == 1 ? "file" : "files"),
                            format_bytes(ds.bytes) + (ds.bytes_basis ? " (" + *ds.bytes_basis + ")" : ""),
                            full      ? fmt::format(" ({:.2f}% of the real dataset's {} files)", 100.0 * files / full,
                                                    format_count(full))
                            : missing ? fmt::format(" (of {} listed paths: {} could not be found or read, each read of "
                                                    "one a read error)",
                                                    format_count(listed), format_count(missing))
                                      : ""));
  if (kind == "sharded")
    line("records",
         fmt::format("{} records in {} shards of {} records ({} mean record, {})", format_count(ds.records.value_or(0)),
                     format_count(files), format_count(ds.records_per_file),
                     format_bytes(ds.size_mean_bytes.value_or(0)), ds.size_dist.value_or("")));
  if (kind == "token")
    line("records", fmt::format("{} samples of {} tokens x {} B in {} token file(s), {} samples each",
                                format_count(ds.records.value_or(0)), ds.seq_len.value_or(0),
                                ds.token_bytes.value_or(0), format_count(files), format_count(ds.records_per_file)));
  const double generate_s = ds.generate_s.value_or(0);
  line("location", fmt::format("{} ({}{})", ds.root, ds.action,
                               generate_s > 0 ? fmt::format(" in {}", format_seconds(generate_s)) : ""));
  if (ds.generation)  // written by several hosts, each its share
    for (const auto& h : ds.generation->hosts) {
      const double hs = h.generate_s;
      const uint64_t hb = h.bytes;
      line("generated on " + h.hostname,
           fmt::format("{} files, {} in {}{}", format_count(h.files), format_bytes(hb), format_seconds(hs),
                       hs > 0 ? fmt::format(" ({})", format_rate(hb / hs)) : ""));
    }
  if (ds.enumerate_s > 0) line("enumeration", format_seconds(ds.enumerate_s));
}

void loader_lines(const RunDocument& doc, const std::string& kind, const Line& line, std::string& o) {
  const RunLoaderSection& ld = doc.loader;
  const RunConsumerModel& m = ld.consumer;
  line("DataLoader",
       fmt::format("num_workers={} batch_size={} prefetch_factor={} shuffle={} drop_last={} epochs={}", ld.num_workers,
                   ld.batch_size, ld.prefetch_factor, ld.shuffle ? "True" : "False", ld.drop_last ? "True" : "False",
                   // With --duration and no --epochs the epoch count is only a cap.
                   ld.duration_s > 0 && ld.epochs >= kMaxEpochs
                       ? fmt::format("until --duration {}", format_seconds(ld.duration_s))
                       : std::to_string(ld.epochs)));
  if (kind != "files") line("pattern", ld.pattern);
  // The loop cost less the worker's own read of the file is what the worker burns.
  const double loop_us = ld.cpu_per_sample_us, own_read_us = m.own_read_cpu_per_file_us;
  // Each CPU figure says where it comes from: the calibration's (as ioprobe calibrate measured it,
  // per-batch ones scaled to this batch size), the model built on it, or this run's measurement.
  const auto& cal = m.calibration;
  line("ranks", fmt::format("{} GPU rank(s) x {} workers; {:.1f} µs CPU work per sample{}{}; step {} per full batch "
                            "(a partial batch its share)",
                            ld.gpus, ld.num_workers, loop_us,
                            cal ? " in each worker's loop (the calibration's, as ioprobe calibrate measured it)" : "",
                            own_read_us > 0 ? fmt::format(" ({:.1f} µs burned beside the read of the file)",
                                                          std::max(0.0, loop_us - own_read_us))
                                            : "",
                            format_ns(ld.step_time_s * 1e9)));
  if (m.worker_put_cpu_per_sample_us > 0)
    line("worker CPU",
         fmt::format("{}{:.0f} µs/sample (loop{}) + {:.0f} µs/sample (queue feeder thread, overlapped{}){}",
                     cal ? "the calibration's, burned as measured: " : "", ld.cpu_per_sample_us,
                     own_read_us > 0
                         ? fmt::format(", of it {:.0f} µs the worker's own read of the file, not burned", own_read_us)
                         : "",
                     m.worker_put_cpu_per_sample_us,
                     m.worker_put_gil_share
                         ? fmt::format("; {:.0f}% of it holds the worker's GIL{}", 100 * *m.worker_put_gil_share,
                                       m.worker_put_gil_share_basis == "measured" ? ""
                                                                                  : ", " + m.worker_put_gil_share_basis)
                         : "",
                     m.worker_other_cpu_per_sample_us > 0
                         ? fmt::format(" + {:.0f} µs/sample (resource sharer thread, in {} round "
                                       "trip{} per batch with the main process)",
                                       m.worker_other_cpu_per_sample_us, std::max(1U, m.tensors_per_batch),
                                       m.tensors_per_batch > 1 ? "s" : "")
                         : ""));
  if (m.main_cpu_per_batch_us > 0 || m.pin_memory)
    line("main process",
         fmt::format("{:.1f} µs CPU per full batch beside the GPU step{}{}", m.main_cpu_per_batch_us,
                     cal && cal->batch_size > 0 && static_cast<uint32_t>(cal->batch_size) != ld.batch_size
                         ? fmt::format(" (the calibration's, scaled from its batch size {} to {})", cal->batch_size,
                                       ld.batch_size)
                         : "",
                     m.pin_memory ? "; pin_memory: a pin thread per rank" : ""));
  if (cal)
    o += fmt::format("  {:<{}} {}{} ({}:{} on {}, torch {}, batch size {})\n", "calibration", 20, "", cal->file,
                     cal->code, cal->function, cal->host, cal->torch_version, cal->batch_size);
}

void results_lines(const RunDocument& doc, const std::string& kind, const Line& line, std::string& o) {
  const LoaderResult& r = doc.results.loader;
  const ResultRates x = result_rates(r);
  line("delivered",
       fmt::format("{} samples, {} in {} ({}, {} epoch(s) completed)", format_count(r.samples), format_bytes(r.bytes),
                   format_seconds(x.elapsed_s), to_string(r.stop), r.epochs_completed));
  // Files per second only where a sample is a file; records and token windows are reads.
  line("throughput", fmt::format("{:.0f} samples/s, {}{}{}", x.samples_per_s, format_rate(x.bytes_per_s),
                                 kind == "files" ? fmt::format(", {:.0f} files/s", x.files_per_s) : "",
                                 doc.sources_apart ? " (the sum of runs that did not overlap in time)" : ""));
  if (const auto d = decode_totals(r))
    line("JPEG decode",
         fmt::format("{:.1f} µs CPU per sample on the worker threads (libjpeg-turbo, measured; {} "
                     "decoded, {:.1f} µs per megapixel{})",
                     d->cpu_us_per_sample, format_count(d->samples), d->us_per_megapixel,
                     d->errors ? fmt::format(", {} did not decode: see ERRORS", format_count(d->errors)) : ""));
  if (kind == "files") {
    line("file latency", lat_line(r.file_latency));
    line("open+close part", lat_line(r.open_latency));
  } else {
    line("read latency", lat_line(r.file_latency));
    line("open+close", lat_line(r.open_latency) + " per file");
    if (r.io_bytes != r.bytes)
      line("transferred",
           fmt::format("{} (O_DIRECT alignment and reads of dropped batches included)", format_bytes(r.io_bytes)));
  }
  // No batch in hand: no first-batch time was measured (the field holds 0).
  line("first batch", r.samples == 0 ? std::string("none: no batch completed before the run ended")
                                     : format_seconds(static_cast<double>(r.first_batch_ns) / 1e9));
  line("consumer waited",
       fmt::format("{} for data over all ranks", format_seconds(static_cast<double>(r.wait_ns) / 1e9)));
  if (!r.workers.empty()) {
    std::map<std::string, int> sets;
    for (const auto& w : r.workers) ++sets[w.cpu_list];
    std::string txt;
    for (const auto& [cpus, n] : sets)
      txt += fmt::format("{}{} worker(s) on CPUs {}", txt.empty() ? "" : "; ", n, cpus);
    line("worker CPU sets", txt);
  }
  const double prep_s = r.cache_prep_cpu_s;
  line("CPU (ioprobe)", fmt::format("user {:.2f} s, sys {:.2f} s, {:.1f} µs per sample (measured: the whole "
                                    "ioprobe process, I/O and emulated costs together){}",
                                    r.cpu_user_s, r.cpu_sys_s, x.cpu_per_sample_us,
                                    prep_s >= 0.005 ? fmt::format("; not counted: {:.2f} s preparing the cache "
                                                                  "before the epochs (eviction, residency sample)",
                                                                  prep_s)
                                                    : std::string()));
  o += render_device_io_text(doc.results.device_io, doc.results.epochs.value_or(std::vector<RunEpoch>{}), 20);
  if (r.errors > 0) {
    // Reads and files apart: one file failing every epoch is many failed reads of one file;
    // identical failures once, with their count; hints from the errno.
    line("ERRORS", failed_reads_text(r.errors, r.error_spread()) + "; first ones:");
    o += error_list_text(r.error_samples, "    ");
  }
  if (!doc.sources.empty()) {
    o += fmt::format("\nSources (merged: counts summed, elapsed the longest, latency from the added buckets)\n");
    for (const auto& src : doc.sources)
      line(src.file, fmt::format("{}: {} samples in {}, {:.0f} samples/s, {}, file p99 {}", src.hostname,
                                 format_count(src.samples), format_seconds(src.elapsed_s), src.samples_per_s,
                                 format_rate(src.bytes_per_s), format_ns(src.file_latency_p99_us * 1e3)));
  }
}

void ingest_lines(const RunIngestSection& s, const Line& line, std::string& o) {
  const IngestResult& in = *s.result;
  const Demand& d = in.demand;
  // No model named (the user's own rate, no --model): no "training resnet50" the run did not use.
  line("demand",
       fmt::format("{} x {}{}: {:.0f} samples/s per GPU ({} rate: {})", d.gpus, d.accelerator_name,
                   d.model.empty() ? "" : " training " + d.model, d.samples_per_s_per_gpu, d.rate_family, d.source));
  line("required", fmt::format("{:.0f} samples/s = {} at {:.0f} B/sample", in.required_samples_per_s,
                               format_rate(in.required_bytes_per_s), s.sample_bytes));
  line("delivered",
       fmt::format("{:.0f} samples/s = {}", in.delivered_samples_per_s, format_rate(in.delivered_bytes_per_s)));
  line("AU", fmt::format("{:.1f}% (min over ranks {:.1f}%; target {:.0f}%){}", 100 * in.accelerator_utilization,
                         100 * in.accelerator_utilization_min, 100 * d.au_target,
                         s.bytes_source ? "; bytes from: " + *s.bytes_source : ""));
  o += render_calibration_effect_line(s.calibration_effect, "calibration effect", 20, in.delivered_samples_per_s);
  if (in.main_ceiling_samples_per_s > 0)
    line("main process", fmt::format("busy {:.0f}% of the time (most busy rank); caps a rank at {:.0f} samples/s",
                                     100 * in.main_busy_fraction, in.main_ceiling_samples_per_s));
  if (in.pin_ceiling_samples_per_s > 0)
    line("pin memory", fmt::format("busy {:.0f}% of the time (most busy rank); caps a rank at {:.0f} samples/s",
                                   100 * in.pin_busy_fraction, in.pin_ceiling_samples_per_s));
  if (in.worker_feeder_ceiling_samples_per_s > 0)
    line("queue feeders",
         fmt::format("busy {:.0f}% of the time (mean over workers); cap the workers at {:.0f} samples/s",
                     100 * in.worker_feeder_busy_fraction, in.worker_feeder_ceiling_samples_per_s));
  for (const auto& g : in.gpu_links) {
    const bool known = g.bytes_per_s_per_direction > 0;
    const double need = in.demand_bytes_per_s_per_gpu;
    line("GPU link",
         fmt::format("{} (node {}): {}; demand {:.2f} GB/s per GPU{}{}", g.pci_address, g.numa_node, g.basis,
                     need / 1e9,
                     known ? fmt::format(" = {:.0f}% of the ceiling", 100 * need / g.bytes_per_s_per_direction) : "",
                     g.downtrained ? " [DOWNTRAINED link]" : ""));
  }
  if (in.h2d_copies > 0)
    line("copy to GPU", fmt::format("{} batches, {:.2f} GB/s per rank (cudaMemcpyAsync from page-locked memory, "
                                    "measured), {:.0f}% of the step (copy + GPU step){}",
                                    in.h2d_copies, in.h2d_bytes_per_s / 1e9, 100 * in.h2d_share_of_step,
                                    in.h2d_error.empty() ? "" : "; stopped: " + in.h2d_error));
  else if (!in.h2d_error.empty()) line("copy to GPU", "failed: " + in.h2d_error);
  line("verdict", in.verdict + (s.bytes_source ? " [" + *s.bytes_source + "]" : "") + ": " + in.verdict_text);
  // Only what the run measured; how many GPUs the storage feeds comes from a search, not from a
  // multiple of this run's rate.
  const bool fed = in.accelerator_utilization >= d.au_target && in.gpus_fed > 0;
  if (in.verdict == "failed") line("GPUs fed", "not judged: the run failed (see the verdict)");
  else if (fed)
    line("GPUs fed", fmt::format("{} x {} at AU >= {:.0f}% (measured by this run); for the most this storage feeds, "
                                 "run `ioprobe capacity` with the same options",
                                 d.gpus, d.accelerator_name, 100 * d.au_target));
  else
    line("GPUs fed", fmt::format("fewer than {} x {} at AU >= {:.0f}% (measured by this run); for how many, run "
                                 "`ioprobe capacity` with the same options",
                                 d.gpus, d.accelerator_name, 100 * d.au_target));
}

std::string warning_lines(const std::vector<std::string>& warnings) {
  if (warnings.empty()) return "";
  std::string o = "\nWarnings\n";
  for (const auto& w : warnings) o += "  - " + w + "\n";
  return o;
}

}  // namespace

std::string render_run_text(const RunDocument& doc) {
  std::string o;
  const Line line = [&](const std::string& k, const std::string& v) { o += fmt::format("  {:<20} {}\n", k, v); };
  const std::string& kind = doc.dataset.kind;
  o += fmt::format("ioprobe {} run{}{}\n", doc.header.ioprobe_version,
                   doc.sources_apart ? fmt::format(", merged from {} documents{}", doc.sources.size(),
                                                   sum_of_apart_runs(doc.sources.size()))
                                     : "",
                   doc.partial ? "  [INTERRUPTED: partial result]" : "");
  o += "\nTarget\n";
  target_lines(doc, line, o);
  o += "\nDataset\n";
  dataset_lines(doc, line);
  o += "\nLoader\n";
  loader_lines(doc, kind, line, o);
  o += "\nResults\n";
  results_lines(doc, kind, line, o);
  o += "\nGPU ingest\n";
  if (!doc.ingest.result) {
    line("not available", doc.ingest.unavailable_reason);
    return o + warning_lines(doc.warnings);
  }
  ingest_lines(doc.ingest, line, o);
  if (doc.cluster && doc.hosts)
    o += render_hosts_text(*doc.cluster, *doc.hosts, result_rates(doc.results.loader).elapsed_s);
  return o + warning_lines(doc.warnings);
}

std::string render_gen_line(const DatasetSection& dataset, uint64_t files, uint64_t bytes) {
  const std::string &preset = dataset.preset, &root = dataset.root;
  const uint64_t source = dataset.source_files.value_or(0);
  if (source > files)  // a larger dataset there: its first `files` files are the one asked for
    return fmt::format("{}: reused the first {} of the {} files in '{}', {}", preset, format_count(files),
                       format_count(source), root, format_bytes(bytes));
  const double s = dataset.generate_s.value_or(0);
  return fmt::format("{}: {} {} files, {} in '{}'{}", preset, dataset.action, format_count(files), format_bytes(bytes),
                     root,
                     s > 0 ? fmt::format(" in {} ({})", format_seconds(s), format_rate(static_cast<double>(bytes) / s))
                           : "");
}

}  // namespace ioprobe

namespace ioprobe {

std::string render_gen_hosts_text(const DatasetSection& dataset) {
  std::string o;
  if (!dataset.generation) return o;
  for (const auto& h : dataset.generation->hosts) {
    const double hs = h.generate_s;
    const uint64_t hb = h.bytes;
    o += fmt::format("  host {}: {} files, {} in {}{}\n", h.hostname, format_count(h.files), format_bytes(hb),
                     format_seconds(hs), hs > 0 ? fmt::format(" ({})", format_rate(hb / hs)) : "");
  }
  return o;
}

}  // namespace ioprobe
