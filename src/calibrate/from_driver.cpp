#include "calibrate/calibration.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

// calibration_from_driver (calibration.hpp): the driver's rows (python/ioprobe_calibrate.py) made
// into the document's figures.

namespace ioprobe {

namespace {

using json = nlohmann::json;

// Mean, min and max of `key` (a number, or a spread object's "mean") over the rows `pick` accepts.
template <class Pick>
CalFigure over_rows(const json& rows, const char* key, Pick pick, const std::string& where, bool required = true) {
  CalFigure f;
  int n = 0;
  for (const json& r : rows) {
    if (!pick(r)) continue;
    if (!r.contains(key)) {
      if (required) throw Error(fmt::format("{}: a row lacks '{}'", where, key), kExitFailure);
      continue;
    }
    const json& v = r.at(key);
    const double x = v.is_object() ? v.at("mean").get<double>() : v.get<double>();
    const double lo = v.is_object() ? v.at("min").get<double>() : x, hi = v.is_object() ? v.at("max").get<double>() : x;
    f.min = n ? std::min(f.min, lo) : lo;
    f.max = n ? std::max(f.max, hi) : hi;
    f.value += x;
    ++n;
  }
  if (n) f.value /= n;
  f.value = std::clamp(f.value, f.min, f.max);
  return f;
}

// The smallest of the rows' `key` (a spread object's "mean", or a number) among those `pick`
// accepts and that have it; 0 when none has.
template <class Pick>
double smallest_mean(const json& rows, const char* key, Pick pick) {
  double out = 0;
  bool any = false;
  for (const json& r : rows) {
    if (!pick(r) || !r.contains(key)) continue;
    const json& v = r.at(key);
    const double x = v.is_object() ? v.at("mean").get<double>() : v.get<double>();
    out = any ? std::min(out, x) : x;
    any = true;
  }
  return out;
}

// A level's passes of different lengths: their workers' whole-life CPU (fork to exit) is
// one-time x workers + per-sample x samples, as a real epoch's; the shortest and the longest pass
// give both. The windowed figures' min/max are kept, widened to hold the fit; the split of the
// per-sample CPU into loop, put and other keeps the windows' proportions. Without two lengths (an
// older driver), or when the difference is not positive (a noisy host), the windowed means stand.
// The per-sample figure is not taken below `floor_us` (the level before's: crowding does not make a
// sample cheaper, so a lower difference is the host's noise); the one-time figure is then the
// short pass's rest at that floor, so the short pass's whole-life CPU is still reproduced.
template <class Pick>
void fit_whole_lives(const json& rows, Pick at_level, double floor_us, CalLoadPoint& p) {
  const json* a = nullptr;
  const json* b = nullptr;
  for (const json& r : rows) {
    if (!at_level(r) || !r.contains("worker_life_cpu_s") || !r.contains("pass_samples")) continue;
    const double n = r.at("pass_samples").get<double>();
    if (!a || n < a->at("pass_samples").get<double>()) a = &r;
    if (!b || n > b->at("pass_samples").get<double>()) b = &r;
  }
  if (!a || !b) return;
  const double na = a->at("pass_samples").get<double>(), nb = b->at("pass_samples").get<double>();
  const double ca = a->at("worker_life_cpu_s").get<double>(), cb = b->at("worker_life_cpu_s").get<double>();
  if (!(nb > na) || !(cb > ca)) return;
  const double fitted_us = (cb - ca) / (nb - na) * 1e6;
  const double per_us = std::max(fitted_us, floor_us);
  p.basis = fitted_us < floor_us ? "floor" : "fit";
  // The one-time CPU: what each pass's whole life leaves after its samples. With the fitted
  // per-sample figure both passes leave the same; held at the floor, they differ by the noise of
  // the host (a stall, CPU steal), which only ever adds CPU, so the smaller is taken (a hiccup in
  // one pass made the one-time figure 0.15 s where the others were 0.04-0.05 s: docs/benchmarks/calibration.md,
  // "A faster host: the worker's GIL and the crowded one-time fit").
  const double rest_s = std::min(ca - na * per_us / 1e6, cb - nb * per_us / 1e6);
  const double once_s = std::max(0.0, rest_s / std::max(1, p.num_workers));
  const double window = p.loop_per_sample_us + p.put_per_sample_us + p.other_per_sample_us;
  if (window > 0) {
    p.loop_per_sample_us *= per_us / window;
    p.put_per_sample_us *= per_us / window;
    p.other_per_sample_us *= per_us / window;
  } else {
    p.loop_per_sample_us = per_us;
  }
  p.worker_cpu_per_sample_us = {per_us, std::min(p.worker_cpu_per_sample_us.min, per_us),
                                std::max(p.worker_cpu_per_sample_us.max, per_us)};
  p.worker_startup_cpu_s = {once_s, std::min(p.worker_startup_cpu_s.min, once_s),
                            std::max(p.worker_startup_cpu_s.max, once_s)};
}

// A thread pipeline's result (python/ioprobe_threads.py): its rows and its derived figures; the
// DataLoader's figures it has no part in stay 0.
void thread_pipeline_from_driver(const json& out, Calibration& c) {
  const json& t = out.at("threads");
  const auto fig = [](const json& f) {
    return CalFigure{f.at("value").get<double>(), f.at("min").get<double>(), f.at("max").get<double>()};
  };
  c.thread_cpu_per_sample_us = fig(t.at("cpu_per_sample_us"));
  c.worker_cpu_per_sample_us = c.thread_cpu_per_sample_us;
  c.thread_gil_measured = t.at("gil_measured").get<bool>();
  c.thread_gil_share = fig(t.at("gil_share"));
  c.thread_gil_method = t.at("gil_method").get<std::string>();
  c.thread_cpu_bound = t.at("cpu_bound").get<bool>();
  c.pin_method = "not measured: " + out.at("pin_method").get<std::string>();
}

}  // namespace

Calibration calibration_from_driver(const json& out, const std::string& where) {
  Calibration c;
  try {
    if (out.value("dataset_kind", std::string()) == "thread-pipeline") {
      c.python = out.at("python").get<std::string>();
      c.python_version = out.at("python_version").get<std::string>();
      c.torch_version = out.at("torch_version").get<std::string>();
      c.cuda_available = out.at("cuda_available").get<bool>();
      c.collate = out.at("collate").get<std::string>();
      c.dataset_kind = "thread-pipeline";
      c.files = out.at("files").get<uint64_t>();
      c.data_bytes = out.at("data_bytes").get<uint64_t>();
      c.batch_size = out.at("batch_size").get<uint32_t>();
      c.rows = out.at("rows");
      if (c.rows.empty())
        throw Error(fmt::format("{}: no pass of the thread pipeline was measured", where), kExitFailure);
      const uint64_t held = c.rows.at(0).at("pass_samples").get<uint64_t>();
      if (held != c.files) c.dataset_samples = held;
      thread_pipeline_from_driver(out, c);
      return c;
    }
    c.python = out.at("python").get<std::string>();
    c.python_version = out.at("python_version").get<std::string>();
    c.torch_version = out.at("torch_version").get<std::string>();
    c.cuda_available = out.at("cuda_available").get<bool>();
    c.collate = out.at("collate").get<std::string>();
    c.dataset_kind = out.at("dataset_kind").get<std::string>();
    c.files = out.at("files").get<uint64_t>();
    c.data_bytes = out.at("data_bytes").get<uint64_t>();
    // Samples the files held, where not one per file (shards, tables): kept in the document.
    const uint64_t held = out.at("rows").at(0).at("dataset_samples").get<uint64_t>();
    if (held != c.files) c.dataset_samples = held;
    c.batch_size = out.at("batch_size").get<uint32_t>();
    c.rows = out.at("rows");
    const json& rows = c.rows;
    auto with_workers = [](const json& r) { return r.at("num_workers").get<int>() > 0; };
    auto crowded = [](const json& r) { return r.value("oversubscribed", false); };
    auto plain = [&](const json& r) { return with_workers(r) && !r.at("pin_memory").get<bool>() && !crowded(r); };
    auto pinned = [&](const json& r) { return with_workers(r) && r.at("pin_memory").get<bool>() && !crowded(r); };
    auto inproc = [](const json& r) { return r.at("num_workers").get<int>() == 0 && !r.at("pin_memory").get<bool>(); };
    bool any = false;
    for (const json& r : rows) any = any || plain(r);
    if (!any) throw Error(fmt::format("{}: no run with num_workers > 0 was measured", where), kExitFailure);
    c.worker_cpu_per_sample_us = over_rows(rows, "worker_cpu_per_sample_us", plain, where);
    bool split = true;
    for (const json& r : rows)
      split = split && (!plain(r) ||
                        (r.contains("worker_loop_cpu_per_sample_us") && r.contains("worker_put_cpu_per_sample_us")));
    c.split_measured = split;
    if (split) {
      c.worker_loop_cpu_per_sample_us = over_rows(rows, "worker_loop_cpu_per_sample_us", plain, where);
      // The feeder thread's own clock, where every run read it: the put is that thread's, the
      // rest the worker's other threads; else the put is all but the loop (older drivers).
      bool other = true;
      for (const json& r : rows)
        other = other && (!plain(r) || (r.contains("worker_feeder_cpu_per_sample_us") &&
                                        r.contains("worker_other_cpu_per_sample_us")));
      c.other_measured = other;
      c.worker_put_cpu_per_sample_us = over_rows(rows,
                                                 other ? "worker_feeder_cpu_per_sample_us"
                                                       : "worker_put_cpu_per_sample_us",
                                                 plain, where);
      if (other) c.worker_other_cpu_per_sample_us = over_rows(rows, "worker_other_cpu_per_sample_us", plain, where);
    }
    c.inprocess_cpu_per_sample_us = over_rows(rows, "inprocess_cpu_per_sample_us", inproc, where, false);
    c.main_cpu_per_batch_us = over_rows(rows, "main_cpu_per_batch_us", plain, where);
    c.bytes_per_batch = over_rows(rows, "bytes_per_batch", plain, where);
    if (out.contains("no_tensor_bytes"))  // from drivers that name them
      for (const json& p : out.at("no_tensor_bytes"))
        c.no_tensor_bytes.push_back({p.at("field").get<std::string>(), p.at("holds").get<std::string>()});
    bool tensors = true;
    for (const json& r : rows) tensors = tensors && (!plain(r) || r.contains("tensors_per_batch"));
    if (tensors) c.tensors_per_batch = over_rows(rows, "tensors_per_batch", plain, where);
    c.worker_startup_s = over_rows(rows, "worker_startup_s", plain, where);
    bool startup = true;
    for (const json& r : rows) startup = startup && (!plain(r) || r.contains("worker_startup_cpu_s"));
    c.startup_measured = startup;
    if (startup) {
      // The one-time CPU of a worker: the smallest of the passes' figures, not their mean. A stall
      // of the host in a pass's first batches lands in its one-time CPU (the rest after its steady
      // samples) and only ever adds to it, as fit_whole_lives takes the smaller rest for the same
      // reason; at as many workers as CPUs every µs of it is loading time.
      c.worker_startup_cpu_s = over_rows(rows, "worker_startup_cpu_s", plain, where);
      c.worker_startup_cpu_s.value = smallest_mean(rows, "worker_startup_cpu_s", plain);
      c.main_startup_cpu_s = over_rows(rows, "main_startup_cpu_s", plain, where);
    }
    double p10 = 0, p90 = 0;
    int n = 0;
    for (const json& r : rows)
      if (plain(r)) {
        p10 += r.at("main_thread_cpu_per_batch_us").at("p10").get<double>();
        p90 += r.at("main_thread_cpu_per_batch_us").at("p90").get<double>();
        ++n;
      }
    c.main_cpu_per_batch_p10_us = p10 / n;
    c.main_cpu_per_batch_p90_us = p90 / n;
    // The passes on fewer CPUs than workers, by level (num_workers / cpus above 1): the mean of each
    // level's passes, with their min and max.
    std::vector<std::pair<double, std::pair<int, int>>> levels;  // workers per CPU, (num_workers, cpus)
    for (const json& r : rows) {
      if (!crowded(r)) continue;
      const int w = r.at("num_workers").get<int>(), k = std::max(1, r.at("cpus").get<int>());
      const double x = static_cast<double>(w) / k;
      if (x <= 1) continue;  // the base figures' level
      bool seen = false;
      for (const auto& l : levels) seen = seen || l.first == x;
      if (!seen) levels.push_back({x, {w, k}});
    }
    std::sort(levels.begin(), levels.end());
    for (const auto& [x, wk] : levels) {
      auto at_level = [&, x = x](const json& r) {
        return crowded(r) &&
               static_cast<double>(r.at("num_workers").get<int>()) / std::max(1, r.at("cpus").get<int>()) == x;
      };
      CalLoadPoint p;
      p.workers_per_cpu = x;
      p.num_workers = wk.first;
      p.cpus = wk.second;
      p.worker_cpu_per_sample_us = over_rows(rows, "worker_cpu_per_sample_us", at_level, where);
      p.loop_per_sample_us = over_rows(rows, "worker_loop_cpu_per_sample_us", at_level, where).value;
      p.put_per_sample_us = over_rows(rows, "worker_feeder_cpu_per_sample_us", at_level, where).value;
      p.other_per_sample_us = over_rows(rows, "worker_other_cpu_per_sample_us", at_level, where).value;
      p.worker_startup_cpu_s = over_rows(rows, "worker_startup_cpu_s", at_level, where);
      fit_whole_lives(rows, at_level,
                      c.oversubscription.empty() ? c.worker_cpu_per_sample_us.value
                                                 : c.oversubscription.back().worker_cpu_per_sample_us.value,
                      p);
      c.oversubscription.push_back(p);
    }
    c.oversubscription_measured = !c.oversubscription.empty();
    // The feeder's GIL share (python/ioprobe_gil.py), from drivers that measure it.
    if (const json* g = out.contains("feeder_gil") ? &out.at("feeder_gil") : nullptr; g && g->is_object()) {
      c.feeder_gil_measured = true;
      c.feeder_gil_share = {g->at("value").get<double>(), g->at("min").get<double>(), g->at("max").get<double>()};
      c.feeder_gil_method = out.at("feeder_gil_method").get<std::string>();
    } else {
      c.feeder_gil_method = "not measured: " + out.value("feeder_gil_method", std::string("the driver predates it"));
    }
    c.pin_method = out.at("pin_method").get<std::string>();
    bool pins = false;
    for (const json& r : rows) pins = pins || (pinned(r) && r.contains("pin_cpu_per_batch_us"));
    c.pin_measured = pins;
    if (pins) c.pin_cpu_per_batch_us = over_rows(rows, "pin_cpu_per_batch_us", pinned, where);
    else c.pin_method = "not measured: " + c.pin_method;
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: its output lacks a field or has the wrong type ({})", where, e.what()), kExitFailure);
  }
  return c;
}

}  // namespace ioprobe
