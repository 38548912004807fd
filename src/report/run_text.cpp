#include "report/run_text.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/cluster_json.hpp"
#include "report/device_io_report.hpp"
#include "report/error_text.hpp"
#include "report/text_common.hpp"

#include "core/units.hpp"
#include "engine/engine_choice.hpp"
#include "engine/page_cache.hpp"
#include "loader/config.hpp"

namespace ioprobe {

namespace {

std::string lat_line(const nlohmann::json& l) {
  auto f = [](double us) { return format_ns(us * 1e3); };
  return fmt::format("p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  (mean {})", f(l.at("p50")), f(l.at("p90")),
                     f(l.at("p99")), f(l.at("p999")), f(l.at("max")), f(l.at("mean")));
}

}  // namespace

std::string render_run_text(const nlohmann::json& doc) {
  std::string o;
  auto line = [&](const std::string& k, const std::string& v) { o += fmt::format("  {:<20} {}\n", k, v); };
  const auto& t = doc.at("target");
  const auto& ds = doc.at("dataset");
  const auto& ld = doc.at("loader");
  const auto& r = doc.at("results");
  const auto& in = doc.at("ingest");
  const auto& host = doc.at("host");
  bool partial = doc.value("partial", false);

  o += fmt::format("ioprobe {} run{}\n", doc.value("ioprobe_version", "?"),
                   partial ? "  [INTERRUPTED: partial result]" : "");
  o += "\nTarget\n";
  std::string dev = t.value("device", "");
  line("path", t.value("path", ""));
  line("filesystem", fmt::format("{}{}{}", t.value("fs_type", "?"),
                                 t.value("mount_fstype", "").empty() ? "" : " (" + t.value("mount_fstype", "") + ")",
                                 t.value("memory_backed", false) ? ": RAM, not a device measurement" : ""));
  line("device", dev.empty() ? fmt::format("none ({})", t.value("mount_source", "?"))
                             : fmt::format("{}{}", dev,
                                           t.value("rotational", -1) == 1   ? " (rotational)"
                                           : t.value("rotational", -1) == 0 ? " (solid state)"
                                                                            : ""));
  o += render_targets(doc, "filesystems", 20);
  line("cache", fmt::format("{}: {}", t.value("cache", "?"), t.value("cache_detail", "")));
  if (t.contains("cache_budget")) {
    const auto& b = t["cache_budget"];
    line("cache budget",
         fmt::format("{} ({}); the dataset ({}) {}", format_bytes(b.value("bytes", 0ULL)), b.value("source", ""),
                     format_bytes(b.value("dataset_bytes", 0ULL)),
                     b.value("fits", false) ? "fits" : "does not fit: later epochs partly from the device"));
  }
  if (t.contains("epoch_resident_fraction") && !t["epoch_resident_fraction"].empty()) {
    std::string res;
    const auto& fr = t["epoch_resident_fraction"];
    const size_t n = fr.size();
    for (size_t i = 0; i < n; ++i) {
      if (n > kMaxEpochRows && i == kMaxEpochRows - 1 && i + 1 < n) {  // many epochs: the first and the last
        res += fmt::format(", ... {} more (results.epochs in the JSON)", n - 1 - i);
        i = n - 1;
      }
      const double f = fr[i].get<double>();
      const std::string src = residency_source(f);
      res += fmt::format("{}epoch {}: {:.0f}% ({})", res.empty() ? "" : ", ", i + 1, 100 * f,
                         src == "mixed" ? "mixed: partly page cache, partly device" : "from the " + src);
    }
    line("resident before", res + " [" + t.value("residency_method", "") + "]");
  }
  line("engine", fmt::format("{} ({})", t.value("engine", "?"), t.value("engine_reason", "")));
  if (t.contains("numa"))
    line("NUMA", fmt::format("{}{}", t.value("numa", ""),
                             t.value("numa_reason", "").empty() ? "" : " (" + t.value("numa_reason", "") + ")"));
  line("host", fmt::format("{} CPUs allowed ({}) of {} online, {} RAM, kernel {}", host.value("cpus_allowed", 0),
                           host.value("cpu_list", ""), host.value("cpus_online", 0),
                           format_bytes(host.value("memory_bytes", 0ULL)), host.value("kernel", "")));

  o += "\nDataset\n";
  uint64_t files = ds.value("files", 0ULL), full = ds.value("full_files", 0ULL);
  // A file list naming paths that are not there: the files that hold the data, then what was listed.
  const uint64_t listed = files, missing = std::min(ds.value("files_missing", uint64_t{0}), files);
  files -= missing;
  line("preset",
       ds.value("preset", "none") + (ds.value("description", "").empty() ? "" : ": " + ds.value("description", "")));
  const std::string kind = ds.value("kind", "files");
  line("files", fmt::format("{} {}, {}{}", format_count(files),
                            kind == "sharded" ? (files == 1 ? "shard" : "shards")
                            : kind == "token" ? (files == 1 ? "token file" : "token files")
                                              : (files == 1 ? "file" : "files"),
                            format_bytes(ds.value("bytes", 0ULL)) +
                                (ds.contains("bytes_basis") ? " (" + ds.value("bytes_basis", "") + ")" : ""),
                            full      ? fmt::format(" ({:.2f}% of the real dataset's {} files)", 100.0 * files / full,
                                                    format_count(full))
                            : missing ? fmt::format(" (of {} listed paths: {} could not be found or read, each read of "
                                                    "one a read error)",
                                                    format_count(listed), format_count(missing))
                                      : ""));
  if (kind == "sharded")
    line("records", fmt::format("{} records in {} shards of {} records ({} mean record, {})",
                                format_count(ds.value("records", 0ULL)), format_count(files),
                                format_count(ds.value("records_per_file", 0ULL)),
                                format_bytes(ds.value("size_mean_bytes", 0ULL)), ds.value("size_dist", "")));
  if (kind == "token")
    line("records",
         fmt::format("{} samples of {} tokens x {} B in {} token file(s), {} samples each",
                     format_count(ds.value("records", 0ULL)), ds.value("seq_len", 0ULL), ds.value("token_bytes", 0ULL),
                     format_count(files), format_count(ds.value("records_per_file", 0ULL))));
  line("location",
       fmt::format("{} ({}{})", ds.value("root", ""), ds.value("action", ""),
                   ds.value("generate_s", 0.0) > 0 ? fmt::format(" in {}", format_seconds(ds.value("generate_s", 0.0)))
                                                   : ""));
  if (ds.contains("generation") && ds["generation"].is_object())  // written by several hosts, each its share
    for (const auto& h : ds["generation"].value("hosts", nlohmann::json::array())) {
      const double hs = h.value("generate_s", 0.0);
      const uint64_t hb = h.value("bytes", uint64_t{0});
      line("generated on " + h.value("hostname", std::string("?")),
           fmt::format("{} files, {} in {}{}", format_count(h.value("files", uint64_t{0})), format_bytes(hb),
                       format_seconds(hs), hs > 0 ? fmt::format(" ({})", format_rate(hb / hs)) : ""));
    }
  if (ds.value("enumerate_s", 0.0) > 0) line("enumeration", format_seconds(ds.value("enumerate_s", 0.0)));

  o += "\nLoader\n";
  line("DataLoader",
       fmt::format("num_workers={} batch_size={} prefetch_factor={} shuffle={} drop_last={} epochs={}",
                   ld.value("num_workers", 0), ld.value("batch_size", 0), ld.value("prefetch_factor", 0),
                   ld.value("shuffle", false) ? "True" : "False", ld.value("drop_last", false) ? "True" : "False",
                   // With --duration and no --epochs the epoch count is only a cap.
                   ld.value("duration_s", 0.0) > 0 && ld.value("epochs", 0u) >= kMaxEpochs
                       ? fmt::format("until --duration {}", format_seconds(ld.value("duration_s", 0.0)))
                       : std::to_string(ld.value("epochs", 0))));
  if (ld.contains("pattern") && kind != "files") line("pattern", ld.value("pattern", ""));
  // The loop cost less the worker's own read of the file is what the worker burns.
  const double loop_us = ld.value("cpu_per_sample_us", 0.0), own_read_us = ld.value("own_read_cpu_per_file_us", 0.0);
  line("ranks", fmt::format("{} GPU rank(s) x {} workers; {:.1f} µs CPU work per sample{}; step {} per full batch "
                            "(a partial batch its share)",
                            ld.value("gpus", 1), ld.value("num_workers", 0), loop_us,
                            own_read_us > 0 ? fmt::format(" ({:.1f} µs burned beside the read of the file)",
                                                          std::max(0.0, loop_us - own_read_us))
                                            : "",
                            format_ns(ld.value("step_time_s", 0.0) * 1e9)));
  if (ld.value("worker_put_cpu_per_sample_us", 0.0) > 0)
    line("worker CPU", fmt::format("{:.0f} µs/sample (loop{}) + {:.0f} µs/sample (queue feeder thread, overlapped{}){}",
                                   ld.value("cpu_per_sample_us", 0.0),
                                   ld.value("own_read_cpu_per_file_us", 0.0) > 0
                                       ? fmt::format(", of it {:.0f} µs the worker's own read of the file, not burned",
                                                     ld.value("own_read_cpu_per_file_us", 0.0))
                                       : "",
                                   ld.value("worker_put_cpu_per_sample_us", 0.0),
                                   ld.contains("worker_put_gil_share")
                                       ? fmt::format("; {:.0f}% of it holds the worker's GIL{}",
                                                     100 * ld.value("worker_put_gil_share", 1.0),
                                                     ld.value("worker_put_gil_share_basis", "measured") == "measured"
                                                         ? ""
                                                         : ", " + ld.value("worker_put_gil_share_basis", std::string()))
                                       : "",
                                   ld.value("worker_other_cpu_per_sample_us", 0.0) > 0
                                       ? fmt::format(" + {:.0f} µs/sample (resource sharer thread, in {} round "
                                                     "trip{} per batch with the main process)",
                                                     ld.value("worker_other_cpu_per_sample_us", 0.0),
                                                     std::max(1U, ld.value("tensors_per_batch", 0U)),
                                                     ld.value("tensors_per_batch", 0U) > 1 ? "s" : "")
                                       : ""));
  if (ld.value("main_cpu_per_batch_us", 0.0) > 0 || ld.value("pin_memory", false))
    line("main process",
         fmt::format("{:.1f} µs CPU per full batch beside the GPU step{}", ld.value("main_cpu_per_batch_us", 0.0),
                     ld.value("pin_memory", false) ? "; pin_memory: a pin thread per rank" : ""));
  o += render_calibration_line(doc, "calibration", 20);

  o += "\nResults\n";
  double elapsed = r.value("elapsed_s", 0.0);
  line("delivered", fmt::format("{} samples, {} in {} ({}, {} epoch(s) completed)",
                                format_count(r.value("samples", 0ULL)), format_bytes(r.value("bytes", 0ULL)),
                                format_seconds(elapsed), r.value("stop_reason", ""), r.value("epochs_completed", 0)));
  // Files per second only where a sample is a file; records and token windows are reads.
  line("throughput",
       fmt::format("{:.0f} samples/s, {}{}", r.value("samples_per_s", 0.0), format_rate(r.value("bytes_per_s", 0.0)),
                   kind == "files" ? fmt::format(", {:.0f} files/s", r.value("files_per_s", 0.0)) : ""));
  if (r.contains("decode")) {
    const auto& d = r["decode"];
    line("JPEG decode", fmt::format("{:.1f} µs CPU per sample on the worker threads (libjpeg-turbo, measured; {} "
                                    "decoded, {:.1f} µs per megapixel{})",
                                    d.value("cpu_us_per_sample", 0.0), format_count(d.value("samples", 0ULL)),
                                    d.value("us_per_megapixel", 0.0),
                                    d.value("errors", 0ULL) ? fmt::format(", {} did not decode: see ERRORS",
                                                                          format_count(d.value("errors", 0ULL)))
                                                            : ""));
  }
  if (kind == "files") {
    line("file latency", lat_line(r.at("file_latency_us")));
    line("open+close part", lat_line(r.at("open_close_latency_us")));
  } else {
    line("read latency", lat_line(r.at("file_latency_us")));
    line("open+close", lat_line(r.at("open_close_latency_us")) + " per file");
    if (r.value("io_bytes", 0ULL) != r.value("bytes", 0ULL))
      line("transferred", fmt::format("{} (O_DIRECT alignment and reads of dropped batches included)",
                                      format_bytes(r.value("io_bytes", 0ULL))));
  }
  line("first batch", format_seconds(r.value("first_batch_s", 0.0)));
  line("consumer waited", fmt::format("{} for data over all ranks", format_seconds(r.value("consumer_wait_s", 0.0))));
  if (r.contains("workers") && !r["workers"].empty()) {
    std::map<std::string, int> sets;
    for (const auto& w : r["workers"]) ++sets[w.value("cpu_list", "?")];
    std::string txt;
    for (const auto& [cpus, n] : sets)
      txt += fmt::format("{}{} worker(s) on CPUs {}", txt.empty() ? "" : "; ", n, cpus);
    line("worker CPU sets", txt);
  }
  const auto& cpu = r.at("cpu");
  const double prep_s = cpu.value("cache_prep_s", 0.0);
  line("CPU (ioprobe)", fmt::format("user {:.2f} s, sys {:.2f} s, {:.1f} µs per sample{}", cpu.value("user_s", 0.0),
                                    cpu.value("sys_s", 0.0), cpu.value("per_sample_us", 0.0),
                                    prep_s >= 0.005 ? fmt::format("; not counted: {:.2f} s preparing the cache "
                                                                  "before the epochs (eviction, residency sample)",
                                                                  prep_s)
                                                    : std::string()));
  o += render_device_io_text(r, 20);
  if (r.value("errors", 0ULL) > 0) {
    // Reads and files apart: one file failing every epoch is many failed reads of one file.
    std::vector<ErrorRecord> errors;
    if (r.contains("error_details"))
      for (const auto& e : r["error_details"]) errors.push_back(error_record_from_json(e, "results.error_details"));
    ErrorSpread spread = error_spread(errors, r.value("errors", 0ULL));
    if (r.contains("error_files"))
      spread = {r.value("error_files", 0ULL), r.value("error_files_complete", spread.complete)};
    line("ERRORS", failed_reads_text(r.value("errors", 0ULL), spread) + "; first ones:");
    if (r.contains("error_details")) {  // identical failures once, with their count; hints from the errno
      o += error_list_text(errors, "    ");
    } else {  // a document written before error_details: its lines as they are
      for (const auto& e : r.at("error_samples")) o += "    " + e.get<std::string>() + "\n";
    }
  }

  if (doc.contains("sources") && doc["sources"].is_array()) {
    o += fmt::format("\nSources (merged: counts summed, elapsed the longest, latency from the added buckets)\n");
    for (const auto& src : doc["sources"])
      line(src.value("file", "?"),
           fmt::format("{}: {} samples in {}, {:.0f} samples/s, {}, file p99 {}", src.value("hostname", "?"),
                       format_count(src.value("samples", 0ULL)), format_seconds(src.value("elapsed_s", 0.0)),
                       src.value("samples_per_s", 0.0), format_rate(src.value("bytes_per_s", 0.0)),
                       format_ns(src.value("file_latency_p99_us", 0.0) * 1e3)));
  }

  o += "\nGPU ingest\n";
  if (!in.value("available", true)) {
    line("not available", in.value("reason", ""));
    o += render_warnings(doc);
    return o;
  }
  // No model named (the user's own rate, no --model): no "training resnet50" the run did not use.
  const std::string model = in.value("model", "");
  line("demand",
       fmt::format("{} x {}{}: {:.0f} samples/s per GPU ({} rate: {})", in.value("gpus", 1),
                   in.value("accelerator_name", ""), model.empty() ? "" : " training " + model,
                   in.value("samples_per_s_per_gpu", 0.0), in.value("rate_family", ""), in.value("source", "")));
  line("required", fmt::format("{:.0f} samples/s = {} at {:.0f} B/sample", in.value("required_samples_per_s", 0.0),
                               format_rate(in.value("required_bytes_per_s", 0.0)), in.value("sample_bytes", 0.0)));
  line("delivered", fmt::format("{:.0f} samples/s = {}", in.value("delivered_samples_per_s", 0.0),
                                format_rate(in.value("delivered_bytes_per_s", 0.0))));
  line("AU",
       fmt::format("{:.1f}% (min over ranks {:.1f}%; target {:.0f}%){}", 100 * in.value("accelerator_utilization", 0.0),
                   100 * in.value("accelerator_utilization_min", 0.0), 100 * in.value("au_target", 0.0),
                   in.contains("bytes_source") ? "; bytes from: " + in.value("bytes_source", "unknown") : ""));
  if (in.value("main_ceiling_samples_per_s", 0.0) > 0)
    line("main process",
         fmt::format("busy {:.0f}% of the time (most busy rank); caps a rank at {:.0f} samples/s",
                     100 * in.value("main_busy_fraction", 0.0), in.value("main_ceiling_samples_per_s", 0.0)));
  if (in.value("pin_ceiling_samples_per_s", 0.0) > 0)
    line("pin memory",
         fmt::format("busy {:.0f}% of the time (most busy rank); caps a rank at {:.0f} samples/s",
                     100 * in.value("pin_busy_fraction", 0.0), in.value("pin_ceiling_samples_per_s", 0.0)));
  if (in.value("worker_feeder_ceiling_samples_per_s", 0.0) > 0)
    line("queue feeders",
         fmt::format("busy {:.0f}% of the time (mean over workers); cap the workers at {:.0f} samples/s",
                     100 * in.value("worker_feeder_busy_fraction", 0.0),
                     in.value("worker_feeder_ceiling_samples_per_s", 0.0)));
  if (in.contains("host_to_device"))
    for (const auto& g : in["host_to_device"].value("gpus", nlohmann::json::array())) {
      const bool known = g.value("bytes_per_s_per_direction", nlohmann::json(nullptr)).is_number();
      const double cap = known ? g["bytes_per_s_per_direction"].get<double>() : 0;
      const double need = in["host_to_device"].value("demand_bytes_per_s_per_gpu", 0.0);
      line("GPU link", fmt::format("{} (node {}): {}; demand {:.2f} GB/s per GPU{}{}", g.value("pci_address", ""),
                                   g.value("numa_node", -1), g.value("basis", ""), need / 1e9,
                                   known ? fmt::format(" = {:.0f}% of the ceiling", 100 * need / cap) : "",
                                   g.value("downtrained", false) ? " [DOWNTRAINED link]" : ""));
    }
  if (in.contains("host_to_device") && in["host_to_device"].value("copy", nlohmann::json(nullptr)).is_object()) {
    const auto& c = in["host_to_device"]["copy"];
    if (c.value("copies", 0ULL) > 0)
      line("copy to GPU",
           fmt::format("{} batches, {:.2f} GB/s per rank (cudaMemcpyAsync from page-locked memory, "
                       "measured), {:.0f}% of the step (copy + GPU step){}",
                       c.value("copies", 0ULL), c.value("bytes_per_s", 0.0) / 1e9, 100 * c.value("share_of_step", 0.0),
                       c.value("error", "").empty() ? "" : "; stopped: " + c.value("error", "")));
    else line("copy to GPU", "failed: " + c.value("error", ""));
  }
  line("verdict", in.value("verdict", "") +
                      (in.contains("bytes_source") ? " [" + in.value("bytes_source", "") + "]" : "") + ": " +
                      in.value("verdict_text", ""));
  // Only what the run measured; how many GPUs the storage feeds comes from a search, not from a
  // multiple of this run's rate (older documents' estimates are not shown).
  const bool fed = in.value("accelerator_utilization", 0.0) >= in.value("au_target", 0.0) &&
                   in.value("gpus_fed", 0ULL) > 0;
  if (in.value("verdict", "") == "failed") line("GPUs fed", "not judged: the run failed (see the verdict)");
  else if (fed)
    line("GPUs fed",
         fmt::format("{} x {} at AU >= {:.0f}% (measured by this run); for the most this storage feeds, "
                     "run `ioprobe capacity` with the same options",
                     in.value("gpus", 0ULL), in.value("accelerator_name", ""), 100 * in.value("au_target", 0.0)));
  else
    line("GPUs fed",
         fmt::format("fewer than {} x {} at AU >= {:.0f}% (measured by this run); for how many, run "
                     "`ioprobe capacity` with the same options",
                     in.value("gpus", 0ULL), in.value("accelerator_name", ""), 100 * in.value("au_target", 0.0)));
  o += render_hosts_text(doc);
  o += render_warnings(doc);
  return o;
}

std::string render_gen_line(const nlohmann::json& dataset, uint64_t files, uint64_t bytes) {
  const nlohmann::json& ds = dataset;
  const std::string preset = ds.value("preset", ""), root = ds.value("root", "");
  const uint64_t source = ds.value("source_files", uint64_t{0});
  if (source > files)  // a larger dataset there: its first `files` files are the one asked for
    return fmt::format("{}: reused the first {} of the {} files in '{}', {}", preset, format_count(files),
                       format_count(source), root, format_bytes(bytes));
  const double s = ds.value("generate_s", 0.0);
  return fmt::format("{}: {} {} files, {} in '{}'{}", preset, ds.value("action", ""), format_count(files),
                     format_bytes(bytes), root,
                     s > 0 ? fmt::format(" in {} ({})", format_seconds(s), format_rate(static_cast<double>(bytes) / s))
                           : "");
}

}  // namespace ioprobe
