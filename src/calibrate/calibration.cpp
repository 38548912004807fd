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
  json gil = {{"measured", c.feeder_gil_measured}, {"method", c.feeder_gil_method}};
  if (c.feeder_gil_measured) gil["share"] = figure_json(c.feeder_gil_share);
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
  json no_tensor = json::array();
  for (const auto& p : c.no_tensor_bytes) no_tensor.push_back({{"field", p.field}, {"holds", p.holds}});
  json threads = {{"gil_measured", c.thread_gil_measured},
                  {"gil_method", c.thread_gil_method},
                  {"cpu_per_sample_us", figure_json(c.thread_cpu_per_sample_us)},
                  {"gil_share", figure_json(c.thread_gil_share)},
                  {"cpu_bound", c.thread_cpu_bound}};
  json data = {{"dir", c.data_dir}, {"files", c.files}, {"bytes", c.data_bytes}};
  if (c.dataset_samples > 0) data["samples"] = c.dataset_samples;
  json doc = {{"schema", kCalibrationSchema},
              {"kind", "calibration"},
              {"schema_version", c.schema_version},
              {"ioprobe_version", c.ioprobe_version},
              {"created", c.created},
              {"command", c.command},
              {"code",
               {{"file", c.code_file}, {"function", c.function}, {"collate", c.collate}, {"dataset", c.dataset_kind}}},
              {"data", data},
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
                {"no_tensor_bytes", no_tensor},
                {"tensors_per_batch", figure_json(c.tensors_per_batch)},
                {"worker_startup_s", figure_json(c.worker_startup_s)},
                {"startup_cpu", startup},
                {"oversubscription", over},
                {"own_read", own_read},
                {"feeder_gil", gil},
                {"pin_memory", pin}}},
              {"rows", c.rows}};
  if (c.thread_pipeline()) doc["figures"]["threads"] = threads;
  return doc;
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
  if (code.contains("dataset")) {
    c.dataset_kind = text(code, "dataset", where + ": code");
    if (c.dataset_kind != "map-style" && c.dataset_kind != "iterable" && c.dataset_kind != "thread-pipeline")
      throw UsageError(fmt::format("{}: code.dataset '{}' is not 'map-style', 'iterable' or 'thread-pipeline'; write "
                                   "it again with ioprobe calibrate",
                                   where, escape_bytes(c.dataset_kind)));
  }
  const json& data = field(j, "data", where);
  c.data_dir = text(data, "dir", where + ": data");
  c.files = static_cast<uint64_t>(whole(data, "files", where + ": data", 1e15));
  c.data_bytes = static_cast<uint64_t>(whole(data, "bytes", where + ": data", 1e18));
  if (data.contains("samples"))
    c.dataset_samples = static_cast<uint64_t>(whole(data, "samples", where + ": data", 1e15));
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
  if (f.contains("no_tensor_bytes")) {  // absent from documents written before the parts were named
    const json& parts = f.at("no_tensor_bytes");
    if (!parts.is_array())
      throw UsageError(fmt::format("{}: figures.no_tensor_bytes is not a list; the document was edited or damaged, "
                                   "rerun `ioprobe calibrate`",
                                   where));
    for (const json& p : parts)
      c.no_tensor_bytes.push_back({text(p, "field", where + ": figures.no_tensor_bytes"),
                                   text(p, "holds", where + ": figures.no_tensor_bytes")});
  }
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
  if (f.contains("feeder_gil")) {  // absent from documents written before it was measured
    const std::string w = where + ": figures.feeder_gil";
    const json& g = f.at("feeder_gil");
    c.feeder_gil_measured = flag(g, "measured", w);
    c.feeder_gil_method = text(g, "method", w);
    if (c.feeder_gil_measured) {
      c.feeder_gil_share = figure(g, "share", where, "figures.feeder_gil");
      if (c.feeder_gil_share.max > 1)
        throw UsageError(fmt::format("{}: a share of {:g} is above 1 (the whole put); the document was edited or "
                                     "damaged, rerun `ioprobe calibrate`",
                                     w, c.feeder_gil_share.max));
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
  if (c.thread_pipeline()) {  // a thread pipeline's figures (calibration.hpp), required with its kind
    const std::string w = where + ": figures.threads";
    const json& t = field(f, "threads", where + ": figures");
    c.thread_cpu_per_sample_us = figure(t, "cpu_per_sample_us", where, "figures.threads");
    c.thread_gil_measured = flag(t, "gil_measured", w);
    c.thread_gil_method = text(t, "gil_method", w);
    c.thread_gil_share = figure(t, "gil_share", where, "figures.threads");
    c.thread_cpu_bound = flag(t, "cpu_bound", w);
    if (c.thread_cpu_per_sample_us.max > kMaxCpuPerSampleUs || c.thread_gil_share.max > 1)
      throw UsageError(
          fmt::format("{}: {:g} µs CPU per sample or a GIL share of {:g} is beyond any pipeline's (at most "
                      "{:g} µs and 1); the document was edited or damaged, rerun `ioprobe calibrate`",
                      w, c.thread_cpu_per_sample_us.max, c.thread_gil_share.max, kMaxCpuPerSampleUs));
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

std::optional<Calibration> calibration_from_driver_result(const std::string& text, const std::string& where) {
  nlohmann::json out;
  try {
    out = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return calibration_from_driver(out, where);
}

}  // namespace ioprobe
