#include "calibrate/calibration.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

namespace {

using json = nlohmann::json;

// Bounds of the figures the loader burns (a document beyond them was edited or damaged): a minute
// of CPU per sample (--cpu-per-sample's bound) and an hour of start-up CPU per worker.
constexpr double kMaxCpuPerSampleUs = 60e6;
constexpr double kMaxStartupCpuS = 3600;

json figure_json(const CalFigure& f) { return {{"value", f.value}, {"min", f.min}, {"max", f.max}}; }

const json& field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object()) {  // a section of another type (a string where an object belongs): say so, not "missing"
    std::string v = j.dump();
    if (v.size() > 60) v = v.substr(0, 57) + "...";
    throw UsageError(fmt::format("{} is {}, not an object with a field '{}'; the document was edited or damaged, "
                                 "rerun `ioprobe calibrate`",
                                 where, v, key));
  }
  if (!j.contains(key))
    throw UsageError(fmt::format("{}: missing field '{}'; not a calibration document written by `ioprobe calibrate` "
                                 "(rerun it to make one)",
                                 where, key));
  return j.at(key);
}

double number(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw UsageError(
        fmt::format("{}: '{}' is {}, not a finite number >= 0; rerun `ioprobe calibrate`", where, key, v.dump()));
  return v.get<double>();
}

// A count: a whole number from 0 to `hi` (a cast of anything else is undefined or silently wrong).
double whole(const json& j, const char* key, const std::string& where, double hi) {
  const double v = number(j, key, where);
  if (v != std::floor(v) || v > hi)
    throw UsageError(fmt::format("{}: '{}' is {}, not a whole number from 0 to {:g}; the document was edited or "
                                 "damaged, rerun `ioprobe calibrate`",
                                 where, key, field(j, key, where).dump(), hi));
  return v;
}

bool flag(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_boolean())
    throw UsageError(fmt::format("{}: '{}' is {}, not true or false; the document was edited or damaged, rerun "
                                 "`ioprobe calibrate`",
                                 where, key, v.dump()));
  return v.get<bool>();
}

std::string text(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_string()) throw UsageError(fmt::format("{}: '{}' is {}, not a string", where, key, v.dump()));
  return v.get<std::string>();
}

// `path`: where `j` sits in the document ("figures", "figures.worker_cpu_split"), for the messages.
CalFigure figure(const json& j, const char* key, const std::string& where, const char* path = "figures") {
  const std::string w = fmt::format("{}: {}.{}", where, path, key);
  const json& f = field(j, key, fmt::format("{}: {}", where, path));
  CalFigure out{number(f, "value", w), number(f, "min", w), number(f, "max", w)};
  // A mean lies within its spread; allow rounding in the last digits.
  const double slack = 1e-9 * std::max(1.0, out.max);
  if (out.min > out.value + slack || out.value > out.max + slack)
    throw UsageError(fmt::format("{}: min {} <= value {} <= max {} does not hold; the document was edited or damaged, "
                                 "rerun `ioprobe calibrate`",
                                 w, out.min, out.value, out.max));
  return out;
}

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
  // one pass made the one-time figure 0.15 s where the others were 0.04-0.05 s: BENCHMARKS.md,
  // "session 17").
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

}  // namespace

json calibration_to_json(const Calibration& c) {
  json pin = {{"measured", c.pin_measured}, {"method", c.pin_method}};
  if (c.pin_measured) pin["cpu_per_batch_us"] = figure_json(c.pin_cpu_per_batch_us);
  json startup = {{"measured", c.startup_measured}};
  if (c.startup_measured) {
    startup["worker_s"] = figure_json(c.worker_startup_cpu_s);
    startup["main_s"] = figure_json(c.main_startup_cpu_s);
  }
  json split = {{"measured", c.split_measured}};
  if (c.split_measured) {
    split["loop_per_sample_us"] = figure_json(c.worker_loop_cpu_per_sample_us);
    split["put_per_sample_us"] = figure_json(c.worker_put_cpu_per_sample_us);
    if (c.other_measured) split["other_per_sample_us"] = figure_json(c.worker_other_cpu_per_sample_us);
  }
  json own_read = {{"measured", c.own_read_measured}};
  if (c.own_read_measured) {
    own_read["io_uring_cpu_per_file_us"] = figure_json(c.own_read_io_uring_us);
    own_read["psync_cpu_per_file_us"] = figure_json(c.own_read_psync_us);
  }
  json over = {{"measured", c.oversubscription_measured}, {"points", json::array()}};
  for (const CalLoadPoint& p : c.oversubscription)
    over["points"].push_back({{"workers_per_cpu", p.workers_per_cpu},
                              {"num_workers", p.num_workers},
                              {"cpus", p.cpus},
                              {"worker_cpu_per_sample_us", figure_json(p.worker_cpu_per_sample_us)},
                              {"loop_per_sample_us", p.loop_per_sample_us},
                              {"put_per_sample_us", p.put_per_sample_us},
                              {"other_per_sample_us", p.other_per_sample_us},
                              {"worker_startup_cpu_s", figure_json(p.worker_startup_cpu_s)},
                              {"basis", p.basis}});
  return {{"schema", kCalibrationSchema},
          {"kind", "calibration"},
          {"schema_version", c.schema_version},
          {"ioprobe_version", c.ioprobe_version},
          {"created", c.created},
          {"command", c.command},
          {"code", {{"file", c.code_file}, {"function", c.function}, {"collate", c.collate}}},
          {"data", {{"dir", c.data_dir}, {"files", c.files}, {"bytes", c.data_bytes}}},
          {"host", {{"hostname", c.hostname}, {"kernel", c.kernel}, {"cpus_allowed", c.cpus_allowed}}},
          {"python",
           {{"executable", c.python},
            {"version", c.python_version},
            {"torch_version", c.torch_version},
            {"cuda_available", c.cuda_available}}},
          {"batch_size", c.batch_size},
          {"figures",
           {{"worker_cpu_per_sample_us", figure_json(c.worker_cpu_per_sample_us)},
            {"worker_cpu_split", split},
            {"inprocess_cpu_per_sample_us", figure_json(c.inprocess_cpu_per_sample_us)},
            {"main_cpu_per_batch_us", figure_json(c.main_cpu_per_batch_us)},
            {"main_cpu_per_batch_p10_us", c.main_cpu_per_batch_p10_us},
            {"main_cpu_per_batch_p90_us", c.main_cpu_per_batch_p90_us},
            {"main_cpu_per_sample_us", c.main_cpu_per_sample_us()},
            {"bytes_per_batch", figure_json(c.bytes_per_batch)},
            {"tensors_per_batch", figure_json(c.tensors_per_batch)},
            {"worker_startup_s", figure_json(c.worker_startup_s)},
            {"startup_cpu", startup},
            {"oversubscription", over},
            {"own_read", own_read},
            {"pin_memory", pin}}},
          {"rows", c.rows}};
}

Calibration calibration_from_json(const json& j, const std::string& where) {
  if (!j.is_object() || j.value("kind", "") != "calibration")
    throw UsageError(fmt::format("{}: not a calibration document (kind is {}); make one with `ioprobe calibrate "
                                 "--dataset-factory FILE.py:FUNC --data DIR --json CAL.json` and give that file",
                                 where, j.is_object() && j.contains("kind") ? j.at("kind").dump() : "missing"));
  // The schema identifier, checked as `report` checks a result document's: present, a string, and
  // this build's ("ioprobe.calibration/1"); another version's names the version.
  if (!j.contains("schema") || !j.at("schema").is_string())
    throw UsageError(fmt::format("{}: field \"schema\" is {}, not \"{}\": not a calibration document ioprobe wrote "
                                 "(edited or cut?); make one with `ioprobe calibrate --dataset-factory FILE.py:FUNC "
                                 "--data DIR --json CAL.json` and give that file",
                                 where, j.contains("schema") ? j.at("schema").dump() : "missing", kCalibrationSchema));
  if (const std::string schema = j.at("schema").get<std::string>(); schema != kCalibrationSchema)
    throw UsageError(fmt::format(
        "{}: field \"schema\" is \"{}\", not \"{}\": {}", where, escape_bytes(schema), kCalibrationSchema,
        schema.rfind("ioprobe.calibration/", 0) == 0
            ? "a calibration document of another ioprobe version; rerun `ioprobe calibrate` with this version"
            : "not a calibration document this ioprobe reads; make one with `ioprobe calibrate`"));
  const json& ver = field(j, "schema_version", where);
  if (!ver.is_number_integer() || ver.get<int>() != kCalibrationSchemaVersion)
    throw UsageError(fmt::format("{}: schema_version {} is not the {} this ioprobe reads; rerun `ioprobe calibrate` "
                                 "with this version",
                                 where, ver.dump(), kCalibrationSchemaVersion));
  Calibration c;
  c.ioprobe_version = text(j, "ioprobe_version", where);
  c.created = text(j, "created", where);
  const json& cmd = field(j, "command", where);
  if (cmd.is_array())
    for (const json& a : cmd)
      if (a.is_string()) c.command.push_back(a.get<std::string>());
  const json& code = field(j, "code", where);
  c.code_file = text(code, "file", where + ": code");
  c.function = text(code, "function", where + ": code");
  c.collate = text(code, "collate", where + ": code");
  const json& data = field(j, "data", where);
  c.data_dir = text(data, "dir", where + ": data");
  c.files = static_cast<uint64_t>(whole(data, "files", where + ": data", 1e15));
  c.data_bytes = static_cast<uint64_t>(whole(data, "bytes", where + ": data", 1e18));
  const json& host = field(j, "host", where);
  c.hostname = text(host, "hostname", where + ": host");
  c.kernel = text(host, "kernel", where + ": host");
  c.cpus_allowed = static_cast<int>(whole(host, "cpus_allowed", where + ": host", 1e6));
  const json& py = field(j, "python", where);
  c.python = text(py, "executable", where + ": python");
  c.python_version = text(py, "version", where + ": python");
  c.torch_version = text(py, "torch_version", where + ": python");
  c.cuda_available = flag(py, "cuda_available", where + ": python");
  const double bs = number(j, "batch_size", where);
  // The loader counts a batch's samples in 32 bits; a batch beyond a million samples is an edited
  // or damaged document, not a DataLoader's.
  if (bs < 1 || bs != std::floor(bs) || bs > 1e6)
    throw UsageError(
        fmt::format("{}: batch_size {} is not a whole number from 1 to 1,000,000; rerun `ioprobe calibrate`", where,
                    bs));
  c.batch_size = static_cast<uint32_t>(bs);
  const json& f = field(j, "figures", where);
  c.worker_cpu_per_sample_us = figure(f, "worker_cpu_per_sample_us", where);
  if (f.contains("worker_cpu_split")) {  // absent from documents written before it was measured
    const std::string w = where + ": figures.worker_cpu_split";
    const json& sp = f.at("worker_cpu_split");
    c.split_measured = flag(sp, "measured", w);
    if (c.split_measured) {
      c.worker_loop_cpu_per_sample_us = figure(sp, "loop_per_sample_us", where, "figures.worker_cpu_split");
      c.worker_put_cpu_per_sample_us = figure(sp, "put_per_sample_us", where, "figures.worker_cpu_split");
      c.other_measured = sp.contains("other_per_sample_us");  // absent before the feeder's own clock was read
      if (c.other_measured)
        c.worker_other_cpu_per_sample_us = figure(sp, "other_per_sample_us", where, "figures.worker_cpu_split");
      const double total = c.worker_cpu_per_sample_us.value;
      const double sum = c.worker_loop_cpu_per_sample_us.value + c.worker_put_cpu_per_sample_us.value +
                         c.worker_other_cpu_per_sample_us.value;
      if (std::abs(sum - total) > 0.01 * std::max(1.0, total))
        throw UsageError(fmt::format("{}: loop {} + put {} + other {} µs per sample is not the worker's total {}; the "
                                     "document was edited or damaged, rerun `ioprobe calibrate`",
                                     w, c.worker_loop_cpu_per_sample_us.value, c.worker_put_cpu_per_sample_us.value,
                                     c.worker_other_cpu_per_sample_us.value, total));
    }
  }
  if (c.worker_cpu_per_sample_us.max > kMaxCpuPerSampleUs)
    throw UsageError(
        fmt::format("{}: figures.worker_cpu_per_sample_us {:g} µs is beyond any DataLoader's (at most {:g} "
                    "µs, a minute, per sample); the document was edited or damaged, rerun `ioprobe "
                    "calibrate`",
                    where, c.worker_cpu_per_sample_us.max, kMaxCpuPerSampleUs));
  c.inprocess_cpu_per_sample_us = figure(f, "inprocess_cpu_per_sample_us", where);
  c.main_cpu_per_batch_us = figure(f, "main_cpu_per_batch_us", where);
  c.main_cpu_per_batch_p10_us = number(f, "main_cpu_per_batch_p10_us", where + ": figures");
  c.main_cpu_per_batch_p90_us = number(f, "main_cpu_per_batch_p90_us", where + ": figures");
  c.bytes_per_batch = figure(f, "bytes_per_batch", where);
  if (f.contains("tensors_per_batch")) {  // absent from documents written before it was counted
    c.tensors_per_batch = figure(f, "tensors_per_batch", where);
    // Each tensor is one round trip the model runs per batch: a count beyond any real batch (a
    // million) is an edited or damaged document, and would overflow the loader's 32-bit count.
    if (c.tensors_per_batch.max > 1e6)
      throw UsageError(fmt::format("{}: figures.tensors_per_batch {:.0f} is more than 1,000,000 tensors per batch; the "
                                   "document was edited or damaged, rerun `ioprobe calibrate`",
                                   where, c.tensors_per_batch.max));
  }
  c.worker_startup_s = figure(f, "worker_startup_s", where);
  if (f.contains("startup_cpu")) {  // absent from documents written before it was measured
    const json& st = f.at("startup_cpu");
    c.startup_measured = flag(st, "measured", where + ": figures.startup_cpu");
    if (c.startup_measured) {
      c.worker_startup_cpu_s = figure(st, "worker_s", where, "figures.startup_cpu");
      c.main_startup_cpu_s = figure(st, "main_s", where, "figures.startup_cpu");
      if (c.worker_startup_cpu_s.max > kMaxStartupCpuS || c.main_startup_cpu_s.max > kMaxStartupCpuS)
        throw UsageError(fmt::format("{}: figures.startup_cpu: {:g} s of start-up CPU is beyond any DataLoader's (at "
                                     "most {:g} s); the document was edited or damaged, rerun `ioprobe calibrate`",
                                     where, std::max(c.worker_startup_cpu_s.max, c.main_startup_cpu_s.max),
                                     kMaxStartupCpuS));
    }
  }
  if (f.contains("own_read")) {  // absent from documents written before it was measured
    const std::string w = where + ": figures.own_read";
    c.own_read_measured = flag(f.at("own_read"), "measured", w);
    if (c.own_read_measured) {
      c.own_read_io_uring_us = figure(f.at("own_read"), "io_uring_cpu_per_file_us", where, "figures.own_read");
      c.own_read_psync_us = figure(f.at("own_read"), "psync_cpu_per_file_us", where, "figures.own_read");
      if (std::max(c.own_read_io_uring_us.max, c.own_read_psync_us.max) > kMaxCpuPerSampleUs)
        throw UsageError(fmt::format("{}: {:g} µs per file is beyond any read; the document was edited or damaged, "
                                     "rerun `ioprobe calibrate`",
                                     w, std::max(c.own_read_io_uring_us.max, c.own_read_psync_us.max)));
    }
  }
  if (f.contains("oversubscription")) {  // absent from documents written before it was measured
    const std::string w = where + ": figures.oversubscription";
    const json& ov = f.at("oversubscription");
    if (!ov.is_object())
      throw UsageError(fmt::format("{} is {}, not an object {{\"measured\": ..., \"points\": [...]}}; the document "
                                   "was edited or damaged, rerun `ioprobe calibrate`",
                                   w, ov.dump()));
    c.oversubscription_measured = flag(ov, "measured", w);
    const json& pts = field(ov, "points", w);
    if (!pts.is_array()) throw UsageError(fmt::format("{}: 'points' is {}, not a list", w, pts.dump()));
    if (c.oversubscription_measured && pts.empty())
      throw UsageError(fmt::format("{}: measured, but no points; the document was edited or damaged, rerun `ioprobe "
                                   "calibrate`",
                                   w));
    if (!c.oversubscription_measured && !pts.empty())
      throw UsageError(fmt::format("{}: 'measured' is false, yet it holds {} point(s); the document was edited or "
                                   "damaged: rerun `ioprobe calibrate` (or set 'measured' back to true)",
                                   w, pts.size()));
    for (size_t i = 0; i < pts.size(); ++i) {
      const std::string path = fmt::format("figures.oversubscription.points[{}]", i);
      const std::string pw = fmt::format("{}: {}", where, path);
      const json& pt = pts[i];
      CalLoadPoint p;
      p.workers_per_cpu = number(pt, "workers_per_cpu", pw);
      p.num_workers = static_cast<int>(whole(pt, "num_workers", pw, 1e6));
      p.cpus = static_cast<int>(whole(pt, "cpus", pw, 1e6));
      p.worker_cpu_per_sample_us = figure(pt, "worker_cpu_per_sample_us", where, path.c_str());
      p.loop_per_sample_us = number(pt, "loop_per_sample_us", pw);
      p.put_per_sample_us = number(pt, "put_per_sample_us", pw);
      p.other_per_sample_us = number(pt, "other_per_sample_us", pw);
      p.worker_startup_cpu_s = figure(pt, "worker_startup_cpu_s", where, path.c_str());
      if (pt.contains("basis")) {
        p.basis = text(pt, "basis", pw);
        if (p.basis != "fit" && p.basis != "floor" && p.basis != "windows")
          throw UsageError(fmt::format("{}: 'basis' is '{}', not fit, floor or windows; the document was edited or "
                                       "damaged, rerun `ioprobe calibrate`",
                                       pw, escape_bytes(p.basis)));
      }
      // Beyond a minute of CPU per sample or an hour per worker start is no DataLoader's, and
      // the loader would burn it (a run that never ends).
      if (p.worker_cpu_per_sample_us.max > kMaxCpuPerSampleUs || p.worker_startup_cpu_s.max > kMaxStartupCpuS)
        throw UsageError(fmt::format("{}: {:g} µs CPU per sample or {:g} s start-up CPU is beyond any DataLoader's (at "
                                     "most {:g} µs and {:g} s); the document was edited or damaged, rerun `ioprobe "
                                     "calibrate`",
                                     pw, p.worker_cpu_per_sample_us.max, p.worker_startup_cpu_s.max, kMaxCpuPerSampleUs,
                                     kMaxStartupCpuS));
      if (p.cpus < 1 || p.num_workers < 1)
        throw UsageError(fmt::format("{}: num_workers {} on {} CPUs: both must be 1 or more; the document was edited "
                                     "or damaged, rerun `ioprobe calibrate`",
                                     pw, p.num_workers, p.cpus));
      // The level is num_workers / cpus (the driver writes all three): an edit of one alone
      // would move the level the figures are interpolated at.
      const double level = static_cast<double>(p.num_workers) / p.cpus;
      if (!(std::abs(p.workers_per_cpu - level) <= 1e-6 * level))
        throw UsageError(fmt::format("{}: workers_per_cpu {} is not num_workers {} / cpus {} = {:g}; the document was "
                                     "edited or damaged, rerun `ioprobe calibrate`",
                                     pw, p.workers_per_cpu, p.num_workers, p.cpus, level));
      const double prev = c.oversubscription.empty() ? 1.0 : c.oversubscription.back().workers_per_cpu;
      // Above one worker process per CPU (the base figures' level) and increasing: the model
      // interpolates between them; a count beyond a million is no DataLoader's.
      if (!(p.workers_per_cpu > prev) || p.workers_per_cpu > 1e6)
        throw UsageError(fmt::format("{}: workers_per_cpu {} (num_workers {} on {} CPUs) is not above {} (the points "
                                     "rise from 1 worker process per CPU); the document was edited or damaged, rerun "
                                     "`ioprobe calibrate`",
                                     pw, p.workers_per_cpu, p.num_workers, p.cpus, prev));
      const double sum = p.loop_per_sample_us + p.put_per_sample_us + p.other_per_sample_us;
      if (std::abs(sum - p.worker_cpu_per_sample_us.value) > 0.01 * std::max(1.0, p.worker_cpu_per_sample_us.value))
        throw UsageError(fmt::format("{}: loop {} + put {} + other {} µs per sample is not the worker's total {}; the "
                                     "document was edited or damaged, rerun `ioprobe calibrate`",
                                     pw, p.loop_per_sample_us, p.put_per_sample_us, p.other_per_sample_us,
                                     p.worker_cpu_per_sample_us.value));
      c.oversubscription.push_back(p);
    }
  }
  const json& pin = field(f, "pin_memory", where + ": figures");
  c.pin_measured = flag(pin, "measured", where + ": figures.pin_memory");
  c.pin_method = text(pin, "method", where + ": figures.pin_memory");
  if (c.pin_measured) c.pin_cpu_per_batch_us = figure(pin, "cpu_per_batch_us", where, "figures.pin_memory");
  if (j.contains("rows")) c.rows = j.at("rows");
  return c;
}

namespace {
constexpr int64_t kMaxCalibrationBytes = int64_t{64} << 20;  // 64 MiB
}  // namespace

Calibration load_calibration(const std::string& path) {
  // A device, FIFO or socket would be read without end (/dev/zero) or wait for a writer; a
  // calibration document is a regular file of tens of KB, so one beyond 64 MiB is not one. A path
  // stat cannot see is left to the open below, which names the errno.
  if (struct stat st{}; stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw UsageError(
          fmt::format("{}: is a directory; give the file `ioprobe calibrate --json` wrote", escape_bytes(path)));
    if (!S_ISREG(st.st_mode))
      throw UsageError(fmt::format("{}: not a regular file (a device, FIFO or socket); give the file `ioprobe "
                                   "calibrate --json` wrote",
                                   escape_bytes(path)));
    if (st.st_size > kMaxCalibrationBytes)
      throw UsageError(fmt::format("{}: {} B is far larger than a calibration document (at most {} B); give the "
                                   "file `ioprobe calibrate --json` wrote",
                                   escape_bytes(path), st.st_size, kMaxCalibrationBytes));
  }
  std::ifstream in(path);
  if (!in)
    throw UsageError(fmt::format("{}: cannot read it ({}); give the file `ioprobe calibrate --json` wrote",
                                 escape_bytes(path), errno_text(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON ({}); give the file `ioprobe calibrate --json` wrote",
                                 escape_bytes(path), e.what()));
  }
  try {
    return calibration_from_json(j, escape_bytes(path));
  } catch (const json::exception& e) {
    throw UsageError(
        fmt::format("{}: a field has the wrong type ({}); rerun `ioprobe calibrate`", escape_bytes(path), e.what()));
  }
}

Calibration calibration_from_driver(const json& out, const std::string& where) {
  Calibration c;
  try {
    c.python = out.at("python").get<std::string>();
    c.python_version = out.at("python_version").get<std::string>();
    c.torch_version = out.at("torch_version").get<std::string>();
    c.cuda_available = out.at("cuda_available").get<bool>();
    c.collate = out.at("collate").get<std::string>();
    c.files = out.at("files").get<uint64_t>();
    c.data_bytes = out.at("data_bytes").get<uint64_t>();
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
    bool tensors = true;
    for (const json& r : rows) tensors = tensors && (!plain(r) || r.contains("tensors_per_batch"));
    if (tensors) c.tensors_per_batch = over_rows(rows, "tensors_per_batch", plain, where);
    c.worker_startup_s = over_rows(rows, "worker_startup_s", plain, where);
    bool startup = true;
    for (const json& r : rows) startup = startup && (!plain(r) || r.contains("worker_startup_cpu_s"));
    c.startup_measured = startup;
    if (startup) {
      c.worker_startup_cpu_s = over_rows(rows, "worker_startup_cpu_s", plain, where);
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
