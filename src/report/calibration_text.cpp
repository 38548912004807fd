#include "report/calibration_text.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"

namespace ioprobe {

namespace {

std::string fig(const nlohmann::json& f, const char* unit, int digits = 1) {
  return fmt::format("{:.{}f} {} (min {:.{}f}, max {:.{}f})", f.value("value", 0.0), digits, unit, f.value("min", 0.0),
                     digits, f.value("max", 0.0), digits);
}

// A thread pipeline's passes and the figures derived from them (python/ioprobe_threads.py).
std::string thread_pipeline_text(const nlohmann::json& doc) {
  std::string o = "\nPasses (threads of one process; rates from the factory's call to the last batch)\n";
  auto line = [&](const std::string& k, const std::string& v) { o += fmt::format("  {:<26} {}\n", k, v); };
  for (const auto& r : doc.value("rows", nlohmann::json::array()))
    line(fmt::format("num_threads={}", r.value("num_threads", 0)),
         fmt::format("{:.0f} samples/s, {:.1f} µs CPU per sample, {:.2f} CPUs busy{}", r.value("samples_per_s", 0.0),
                     r.value("cpu_per_sample_us", 0.0), r.value("parallelism", 0.0),
                     r.value("oversubscribed", false) ? fmt::format(" (on {} CPUs)", r.value("cpus", 0)) : ""));
  const auto& t = doc.at("figures").at("threads");
  o += "\nFigures (what `run --calibration` burns)\n";
  line("CPU per sample", fig(t.at("cpu_per_sample_us"), "µs") + " (the process, every thread)");
  const auto& g = t.at("gil_share");
  line("of it under the GIL",
       fmt::format("{:.0f}% (min {:.0f}%, max {:.0f}%): {}", 100 * g.value("value", 1.0), 100 * g.value("min", 1.0),
                   100 * g.value("max", 1.0), t.value("gil_method", std::string())));
  const double cpu = t.at("cpu_per_sample_us").value("value", 0.0), share = g.value("value", 1.0);
  if (cpu > 0 && share > 0)
    line("GIL ceiling", fmt::format("{:.0f} samples/s, however many threads", 1e6 / (cpu * share)));
  return o;
}

}  // namespace

std::string render_calibration_text(const nlohmann::json& doc) {
  std::string o;
  auto line = [&](const std::string& k, const std::string& v) { o += fmt::format("  {:<26} {}\n", k, v); };
  const auto& code = doc.at("code");
  const auto& py = doc.at("python");
  const auto& data = doc.at("data");
  const auto& f = doc.at("figures");
  const uint32_t batch = doc.value("batch_size", 0U);
  o += "Calibration of the user's DataLoader\n";
  // An IterableDataset is named: its samples come in its own order, not a shuffled sampler's.
  const bool stream = code.value("dataset", "map-style") == "iterable";
  const bool threads = code.value("dataset", "") == "thread-pipeline";
  line("code", fmt::format("{}:{} ({}{})", code.value("file", ""), code.value("function", ""),
                           stream    ? "IterableDataset, "
                           : threads ? "thread pipeline, "
                                     : "",
                           code.value("collate", "")));
  // Files that held several samples each (shards, tables) say how many.
  const uint64_t held = data.value("samples", 0ULL);
  line("data",
       fmt::format("{} files{}, {} of {} (read into the page cache first)", format_count(data.value("files", 0ULL)),
                   held ? fmt::format(" holding {} samples", format_count(held)) : "",
                   format_bytes(data.value("bytes", 0ULL)), escape_bytes(data.value("dir", ""))));
  line("host", fmt::format("{} ({} CPUs allowed, kernel {})", doc.at("host").value("hostname", ""),
                           doc.at("host").value("cpus_allowed", 0), doc.at("host").value("kernel", "")));
  line("python",
       fmt::format("{} {}, torch {}{}", py.value("executable", ""), py.value("version", ""),
                   py.value("torch_version", ""), py.value("cuda_available", false) ? ", CUDA" : ", no CUDA"));
  line("batch size", fmt::format("{}", batch));
  if (code.value("dataset", "") == "thread-pipeline") return o + thread_pipeline_text(doc);
  o += "\nFigures (mean over num_workers 1 and 2; min/max over those runs)\n";
  line("worker CPU per sample", fig(f.at("worker_cpu_per_sample_us"), "µs"));
  if (f.contains("worker_cpu_split") && f.at("worker_cpu_split").value("measured", false)) {
    const auto& sp = f.at("worker_cpu_split");
    line("  of it, worker loop", fig(sp.at("loop_per_sample_us"), "µs") + " (__getitem__ + collate)");
    line("  of it, queue feeder", fig(sp.at("put_per_sample_us"), "µs") + " (pickling the batch, overlapped)");
    if (sp.contains("other_per_sample_us"))
      line("  of it, other threads", fig(sp.at("other_per_sample_us"), "µs") +
                                         " (multiprocessing's resource sharer: a round trip per tensor with the "
                                         "main process)");
  }
  if (f.contains("feeder_gil")) {
    const auto& g = f.at("feeder_gil");
    line("  feeder under the GIL",
         g.value("measured", false)
             ? fmt::format("{:.0f}% (min {:.0f}%, max {:.0f}%) of the feeder's CPU ({})",
                           100 * g.at("share").value("value", 1.0), 100 * g.at("share").value("min", 1.0),
                           100 * g.at("share").value("max", 1.0), g.value("method", std::string()))
             : g.value("method", std::string()) + "; the model holds the GIL for all of it");
  }
  if (f.contains("own_read") && f.at("own_read").value("measured", false)) {
    const auto& rd = f.at("own_read");
    line("  ioprobe's own read",
         fmt::format("io_uring {}; psync {} (CPU per file from the page cache; `run`'s "
                     "workers read each file themselves and burn the loop cost less this)",
                     fig(rd.at("io_uring_cpu_per_file_us"), "µs"), fig(rd.at("psync_cpu_per_file_us"), "µs")));
  }
  if (f.contains("tensors_per_batch")) line("tensors per batch", fig(f.at("tensors_per_batch"), "tensor(s)", 0));
  line("main process per batch",
       fig(f.at("main_cpu_per_batch_us"), "µs CPU") + fmt::format("; per batch p10 {:.1f}, p90 {:.1f} µs (main thread)",
                                                                  f.value("main_cpu_per_batch_p10_us", 0.0),
                                                                  f.value("main_cpu_per_batch_p90_us", 0.0)));
  line("main process per sample", fmt::format("{:.2f} µs", f.value("main_cpu_per_sample_us", 0.0)));
  line("num_workers=0 per sample", fig(f.at("inprocess_cpu_per_sample_us"), "µs CPU"));
  line("bytes per batch", fig(f.at("bytes_per_batch"), "B", 0) + " (its tensors)");
  if (f.contains("no_tensor_bytes") && !f.at("no_tensor_bytes").empty()) {
    std::string parts;
    for (const auto& p : f.at("no_tensor_bytes"))
      parts += fmt::format("{}{} ({})", parts.empty() ? "" : ", ", escape_bytes(p.value("field", "")),
                           escape_bytes(p.value("holds", "")));
    line("  no tensor bytes in", parts + ": pickled through the worker's pipe, not counted above");
  }
  line("worker start-up", fig(f.at("worker_startup_s"), "s", 3));
  if (f.contains("startup_cpu") && f.at("startup_cpu").value("measured", false)) {
    line("worker start-up CPU", fig(f.at("startup_cpu").at("worker_s"), "s", 3));
    line("main start-up CPU", fig(f.at("startup_cpu").at("main_s"), "s", 3));
  }
  const auto& pin = f.at("pin_memory");
  if (pin.value("measured", false))
    line("pin_memory per batch", fig(pin.at("cpu_per_batch_us"), "µs CPU") + "; " + pin.value("method", ""));
  else line("pin_memory", pin.value("method", ""));
  if (f.contains("oversubscription") && f.at("oversubscription").value("measured", false)) {
    const auto& pts = f.at("oversubscription").at("points");
    o += "\nWith more worker processes than CPUs (passes bound to fewer CPUs; each value fitted from two pass "
         "lengths' whole-life CPU unless said otherwise, min/max over the fit and each pass's window; the figures "
         "above stand for up to 1 "
         "per CPU)\n";
    for (const auto& p : pts)
      line(fmt::format("{:.3g} per CPU", p.value("workers_per_cpu", 0.0)),
           fmt::format("num_workers={} on {} CPUs: worker CPU per sample {} (loop {:.1f} µs); start-up CPU per "
                       "worker {}",
                       p.value("num_workers", 0), p.value("cpus", 0), fig(p.at("worker_cpu_per_sample_us"), "µs"),
                       p.value("loop_per_sample_us", 0.0), fig(p.at("worker_startup_cpu_s"), "s", 3)) +
               (p.value("basis", "") == "floor"     ? "; the fit was below the level before's, held at it"
                : p.value("basis", "") == "windows" ? "; the passes' windowed means (the longer pass did not burn more)"
                                                    : ""));
  }
  const double main_us = f.at("main_cpu_per_batch_us").value("value", 0.0);
  const double worker_us = f.at("worker_cpu_per_sample_us").value("value", 0.0);
  o += "\nWhat it implies per rank (one main process)\n";
  if (main_us > 0)
    line("main-process ceiling", fmt::format("{:.0f} samples/s, however many workers", batch * 1e6 / main_us));
  double loop_us = worker_us;
  if (f.contains("worker_cpu_split") && f.at("worker_cpu_split").value("measured", false)) {
    const auto& sp = f.at("worker_cpu_split");
    loop_us = std::max(sp.at("loop_per_sample_us").value("value", 0.0), sp.at("put_per_sample_us").value("value", 0.0));
  }
  if (worker_us > 0 && loop_us < worker_us)
    line("per worker", fmt::format("{:.0f} samples/s with two CPUs (loop and feeder overlapped), {:.0f} on one",
                                   1e6 / loop_us, 1e6 / worker_us));
  else if (worker_us > 0) line("per worker", fmt::format("{:.0f} samples/s (one CPU each)", 1e6 / worker_us));
  if (pin.value("measured", false) && pin.at("cpu_per_batch_us").value("value", 0.0) > 0)
    line("pin-thread ceiling",
         fmt::format("{:.0f} samples/s", batch * 1e6 / pin.at("cpu_per_batch_us").value("value", 0.0)));
  return o;
}

}  // namespace ioprobe
