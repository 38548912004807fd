// RunDocument <-> the "run" result document's JSON (report/run_document.hpp): one writer, one
// strict reader.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/json_text_value.hpp"
#include "core/text.hpp"
#include "engine/engine_kind.hpp"
#include "ingest/analysis.hpp"
#include "report/calibration_effect_report.hpp"
#include "report/run_document.hpp"

namespace ioprobe {

namespace {

RunCalibrationRef calibration_from_json(const nlohmann::json& j, const std::string& w) {
  RunCalibrationRef c;
  c.file = json_field<std::string>(j, "file", w);
  c.code = json_field<std::string>(j, "code", w);
  c.function = json_field<std::string>(j, "function", w);
  c.host = json_field<std::string>(j, "host", w);
  c.torch_version = json_field<std::string>(j, "torch_version", w);
  c.batch_size = json_field<int>(j, "batch_size", w);
  c.created = json_field<std::string>(j, "created", w);
  return c;
}

RunConsumerModel consumer_from_json(const nlohmann::json& j, const std::string& w) {
  RunConsumerModel m;
  m.main_cpu_per_batch_us = json_field<double>(j, "main_cpu_per_batch_us", w);
  m.own_read_cpu_per_file_us = json_field<double>(j, "own_read_cpu_per_file_us", w);
  m.worker_startup_cpu_us = json_field<double>(j, "worker_startup_cpu_us", w);
  m.worker_put_cpu_per_sample_us = json_field<double>(j, "worker_put_cpu_per_sample_us", w);
  if (j.contains("worker_put_gil_share")) {  // written with python_gil only, with its basis
    m.worker_put_gil_share = json_field<double>(j, "worker_put_gil_share", w);
    m.worker_put_gil_share_basis = json_field<std::string>(j, "worker_put_gil_share_basis", w);
  }
  m.worker_other_cpu_per_sample_us = json_field<double>(j, "worker_other_cpu_per_sample_us", w);
  m.tensors_per_batch = json_field<uint32_t>(j, "tensors_per_batch", w);
  m.main_startup_cpu_us = json_field<double>(j, "main_startup_cpu_us", w);
  m.decode = json_field<std::string>(j, "decode", w);
  m.pin_memory = json_field<bool>(j, "pin_memory", w);
  m.pin_bytes_per_batch = json_field<double>(j, "pin_bytes_per_batch", w);
  if (j.contains("calibration"))  // with --calibration only
    m.calibration = calibration_from_json(j.at("calibration"), json_path(w, "calibration"));
  return m;
}

nlohmann::json loader_json(const RunLoaderSection& l) {
  nlohmann::json j = {{"num_workers", l.num_workers},
                      {"batch_size", l.batch_size},
                      {"prefetch_factor", l.prefetch_factor},
                      {"shuffle", l.shuffle},
                      {"drop_last", l.drop_last},
                      {"epochs", l.epochs},
                      {"duration_s", l.duration_s},
                      {"cpu_per_sample_us", l.cpu_per_sample_us},
                      {"gpus", l.gpus},
                      {"gpus_per_process", l.gpus_per_process},
                      {"engine", to_string(l.engine)},
                      {"direct", l.direct},
                      {"step_time_s", l.step_time_s},
                      {"seed", l.seed},
                      {"max_outstanding_batches", l.max_outstanding_batches},
                      {"pattern", l.pattern}};
  if (l.read_size_bytes) j["read_size_bytes"] = *l.read_size_bytes;
  if (l.shuffle_buffer_samples) j["shuffle_buffer_samples"] = *l.shuffle_buffer_samples;
  if (l.shuffle_initial_samples) j["shuffle_initial_samples"] = *l.shuffle_initial_samples;
  consumer_model_json(l.consumer, j);
  return j;
}

RunLoaderSection loader_from_json(const nlohmann::json& j, const std::string& w) {
  RunLoaderSection l;
  l.num_workers = json_field<uint32_t>(j, "num_workers", w);
  l.batch_size = json_field<uint32_t>(j, "batch_size", w);
  l.prefetch_factor = json_field<uint32_t>(j, "prefetch_factor", w);
  l.shuffle = json_field<bool>(j, "shuffle", w);
  l.drop_last = json_field<bool>(j, "drop_last", w);
  l.epochs = json_field<uint32_t>(j, "epochs", w);
  l.duration_s = json_field<double>(j, "duration_s", w);
  l.cpu_per_sample_us = json_field<double>(j, "cpu_per_sample_us", w);
  l.gpus = json_field<uint64_t>(j, "gpus", w);
  l.gpus_per_process = json_field<uint32_t>(j, "gpus_per_process", w);
  l.engine = engine_kind_field(j, "engine", w);
  l.direct = json_field<bool>(j, "direct", w);
  l.step_time_s = json_field<double>(j, "step_time_s", w);
  l.seed = json_field<uint64_t>(j, "seed", w);
  l.max_outstanding_batches = json_field<uint64_t>(j, "max_outstanding_batches", w);
  l.pattern = json_field<std::string>(j, "pattern", w);
  if (j.contains("read_size_bytes")) l.read_size_bytes = json_field<uint64_t>(j, "read_size_bytes", w);  // sharded
  if (j.contains("shuffle_buffer_samples"))  // sharded, webdataset's order
    l.shuffle_buffer_samples = json_field<uint64_t>(j, "shuffle_buffer_samples", w);
  if (j.contains("shuffle_initial_samples"))
    l.shuffle_initial_samples = json_field<uint64_t>(j, "shuffle_initial_samples", w);
  l.consumer = consumer_from_json(j, w);
  return l;
}

GpuLinkCeiling link_from_json(const nlohmann::json& j, const std::string& w) {
  GpuLinkCeiling g;
  g.pci_address = json_field<std::string>(j, "pci_address", w);
  g.numa_node = json_field<int>(j, "numa_node", w);
  const nlohmann::json& cap = json_at(j, "bytes_per_s_per_direction", w);  // null: unknown
  g.bytes_per_s_per_direction = cap.is_null() ? 0 : json_as<double>(cap, json_path(w, "bytes_per_s_per_direction"));
  g.basis = json_field<std::string>(j, "basis", w);
  g.downtrained = json_field<bool>(j, "downtrained", w);
  return g;
}

// The host_to_device object of ingest_json back into `in`.
void h2d_from_json(const nlohmann::json& j, const std::string& w, IngestResult& in) {
  in.demand_bytes_per_s_per_gpu = json_field<double>(j, "demand_bytes_per_s_per_gpu", w);
  const nlohmann::json& gpus = json_array_at(j, "gpus", w);
  for (size_t i = 0; i < gpus.size(); ++i)
    in.gpu_links.push_back(link_from_json(gpus[i], json_path(json_path(w, "gpus"), i)));
  const nlohmann::json& limiting = json_at(j, "limiting", w);  // null: no link below the demand
  if (!limiting.is_null()) {
    const auto address = json_as<std::string>(limiting, json_path(w, "limiting"));
    const auto it = std::find_if(in.gpu_links.begin(), in.gpu_links.end(),
                                 [&](const GpuLinkCeiling& g) { return g.pci_address == address; });
    if (it == in.gpu_links.end())
      throw UsageError(fmt::format("{}: names '{}', which is not among its gpus; the document was edited or damaged",
                                   json_path(w, "limiting"), escape_bytes(address)));
    in.h2d_limiting = static_cast<int>(it - in.gpu_links.begin());
  }
  const nlohmann::json& copy = json_at(j, "copy", w);  // null: no copy ran
  if (!copy.is_null()) {
    const std::string cw = json_path(w, "copy");
    in.h2d_copies = json_field<uint64_t>(copy, "copies", cw);
    in.h2d_bytes = json_field<uint64_t>(copy, "bytes", cw);
    in.h2d_s = json_field<double>(copy, "seconds", cw);
    in.h2d_bytes_per_s = json_field<double>(copy, "bytes_per_s", cw);
    in.h2d_share_of_step = json_field<double>(copy, "share_of_step", cw);
    in.h2d_error = json_field<std::string>(copy, "error", cw);
  }
}

IngestResult ingest_result_from_json(const nlohmann::json& j, const std::string& w) {
  IngestResult in;
  in.demand = demand_from_json(j, w);
  in.required_samples_per_s = json_field<double>(j, "required_samples_per_s", w);
  in.required_bytes_per_s = json_field<double>(j, "required_bytes_per_s", w);
  in.delivered_samples_per_s = json_field<double>(j, "delivered_samples_per_s", w);
  in.delivered_bytes_per_s = json_field<double>(j, "delivered_bytes_per_s", w);
  in.accelerator_utilization = json_field<double>(j, "accelerator_utilization", w);
  in.accelerator_utilization_min = json_field<double>(j, "accelerator_utilization_min", w);
  in.consumer_wait_s = json_field<double>(j, "consumer_wait_s", w);
  in.consumer_lag_s = json_field<double>(j, "consumer_lag_s", w);
  in.worker_busy_fraction = json_field<double>(j, "worker_busy_fraction", w);
  in.gpus_fed = json_field<uint64_t>(j, "gpus_fed", w);
  in.main_busy_fraction = json_field<double>(j, "main_busy_fraction", w);
  in.main_ceiling_samples_per_s = json_field<double>(j, "main_ceiling_samples_per_s", w);
  in.pin_busy_fraction = json_field<double>(j, "pin_busy_fraction", w);
  in.pin_ceiling_samples_per_s = json_field<double>(j, "pin_ceiling_samples_per_s", w);
  in.worker_cpu_fraction = json_field<double>(j, "worker_cpu_fraction", w);
  const nlohmann::json& runq = json_at(j, "worker_runq_fraction", w);  // null: not measured
  in.worker_runq_fraction = runq.is_null() ? -1 : json_as<double>(runq, json_path(w, "worker_runq_fraction"));
  in.worker_feeder_busy_fraction = json_field<double>(j, "worker_feeder_busy_fraction", w);
  in.worker_feeder_ceiling_samples_per_s = json_field<double>(j, "worker_feeder_ceiling_samples_per_s", w);
  in.verdict = json_text_value(
      j, "verdict", w,
      [](const std::string& t) -> std::optional<std::string> {
        for (const char* v : kVerdicts)
          if (t == v) return t;
        return std::nullopt;
      },
      "a verdict (none, host-to-device link, CPU, main process, pin memory, workers, metadata, storage, failed)");
  in.verdict_text = json_field<std::string>(j, "verdict_text", w);
  h2d_from_json(json_at(j, "host_to_device", w), json_path(w, "host_to_device"), in);
  return in;
}

nlohmann::json ingest_section_json(const RunIngestSection& s) {
  nlohmann::json j = s.result ? ingest_json(*s.result, s.sample_bytes)
                              : nlohmann::json{{"available", false}, {"reason", s.unavailable_reason}};
  if (s.bytes_source) j["bytes_source"] = *s.bytes_source;
  if (s.calibration_effect) j["calibration_effect"] = calibration_effect_json(*s.calibration_effect);
  return j;
}

RunIngestSection ingest_section_from_json(const nlohmann::json& j, const std::string& w) {
  RunIngestSection s;
  if (json_field_or<bool>(j, "available", w, true)) {  // written only as false, by report --merge
    s.result = ingest_result_from_json(j, w);
    s.sample_bytes = json_field<double>(j, "sample_bytes", w);
  } else {
    s.unavailable_reason = json_field<std::string>(j, "reason", w);
  }
  if (j.contains("bytes_source")) s.bytes_source = json_field<std::string>(j, "bytes_source", w);  // measured only
  if (j.contains("calibration_effect"))  // written only with --calibration
    s.calibration_effect = calibration_effect_from_json(j["calibration_effect"], json_path(w, "calibration_effect"));
  return s;
}

nlohmann::json source_json(const RunSource& s) {
  return {{"file", s.file},
          {"hostname", s.hostname},
          {"samples", s.samples},
          {"bytes", s.bytes},
          {"samples_per_s", s.samples_per_s},
          {"bytes_per_s", s.bytes_per_s},
          {"elapsed_s", s.elapsed_s},
          {"file_latency_p99_us", s.file_latency_p99_us}};
}

RunSource source_from_json(const nlohmann::json& j, const std::string& w) {
  RunSource s;
  s.file = json_field<std::string>(j, "file", w);
  s.hostname = json_field<std::string>(j, "hostname", w);
  s.samples = json_field<uint64_t>(j, "samples", w);
  s.bytes = json_field<uint64_t>(j, "bytes", w);
  s.samples_per_s = json_field<double>(j, "samples_per_s", w);
  s.bytes_per_s = json_field<double>(j, "bytes_per_s", w);
  s.elapsed_s = json_field<double>(j, "elapsed_s", w);
  s.file_latency_p99_us = json_field<double>(j, "file_latency_p99_us", w);
  return s;
}

}  // namespace

Demand demand_from_json(const nlohmann::json& j, const std::string& w) {
  Demand d;
  d.accelerator = json_field<std::string>(j, "accelerator", w);
  d.accelerator_name = json_field<std::string>(j, "accelerator_name", w);
  d.model = json_field<std::string>(j, "model", w);
  d.gpus = json_field<uint32_t>(j, "gpus", w);
  d.rate_family = json_field<std::string>(j, "rate_family", w);
  d.samples_per_s_per_gpu = json_field<double>(j, "samples_per_s_per_gpu", w);
  d.source = json_field<std::string>(j, "source", w);
  d.au_target = json_field<double>(j, "au_target", w);
  return d;
}

RunConsumerModel consumer_model_from_json(const nlohmann::json& loader, const std::string& where) {
  return consumer_from_json(loader, where);
}

nlohmann::json header_json(const RunHeader& h, const char* kind) {
  return {{"schema", h.schema},   {"ioprobe_version", h.ioprobe_version}, {"kind", kind},
          {"command", h.command}, {"created_utc", h.created_utc},         {"host", host_section_json(h.host)}};
}

RunHeader header_from_json(const nlohmann::json& j, const char* kind, const std::string& where) {
  if (!j.is_object()) json_detail::throw_mistyped(j, where, "a JSON object");
  RunHeader h;
  h.schema = json_field<std::string>(j, "schema", where);
  if (h.schema != kResultSchema)
    throw UsageError(fmt::format("{}.schema: '{}' is not '{}'; render it with the ioprobe version that wrote it", where,
                                 escape_bytes(h.schema), kResultSchema));
  if (const auto k = json_field<std::string>(j, "kind", where); k != kind)
    throw UsageError(fmt::format("{}.kind: '{}' is not a {} document", where, escape_bytes(k), kind));
  h.ioprobe_version = json_field<std::string>(j, "ioprobe_version", where);
  h.command = json_field<std::vector<std::string>>(j, "command", where);
  h.created_utc = json_field<std::string>(j, "created_utc", where);
  h.host = host_section_from_json(json_at(j, "host", where), json_path(where, "host"));
  return h;
}

nlohmann::json run_document_json(const RunDocument& doc) {
  nlohmann::json j = {{"target", target_section_json(doc.target)},
                      {"targets", targets_section_json(doc.targets)},
                      {"dataset", dataset_section_json(doc.dataset)},
                      {"loader", loader_json(doc.loader)},
                      {"results", loader_results_json(doc.results.loader)},
                      {"ingest", ingest_section_json(doc.ingest)},
                      {"partial", doc.partial}};
  j.update(header_json(doc.header, "run"));
  if (doc.results.device_io) j["results"]["device_io"] = device_io_section_json(*doc.results.device_io);
  if (doc.results.epochs) j["results"]["epochs"] = run_epochs_json(*doc.results.epochs);
  j["warnings"] = doc.warnings;
  if (doc.cluster) j["cluster"] = run_cluster_json(*doc.cluster);
  if (doc.hosts) j["hosts"] = run_hosts_json(*doc.hosts);
  if (!doc.sources.empty()) {
    j["sources"] = nlohmann::json::array();
    for (const auto& s : doc.sources) j["sources"].push_back(source_json(s));
  }
  if (doc.sources_apart) j["sources_apart"] = true;
  return j;
}

RunDocument run_document_from_json(const nlohmann::json& j, const std::string& where) {
  RunDocument d;
  d.header = header_from_json(j, "run", where);
  d.target = target_section_from_json(json_at(j, "target", where), json_path(where, "target"), TargetKeys::kRun);
  d.targets = targets_section_from_json(json_at(j, "targets", where), json_path(where, "targets"));
  d.dataset = dataset_section_from_json(json_at(j, "dataset", where), json_path(where, "dataset"));
  d.loader = loader_from_json(json_at(j, "loader", where), json_path(where, "loader"));
  const nlohmann::json& r = json_at(j, "results", where);
  const std::string rw = json_path(where, "results");
  d.results.loader = run_results_from_json(r, rw);
  if (r.contains("device_io"))  // written when the devices were accounted (a run; absent from a merge of none)
    d.results.device_io = device_io_section_from_json(r["device_io"], json_path(rw, "device_io"));
  if (r.contains("epochs")) d.results.epochs = run_epochs_from_json(r["epochs"], json_path(rw, "epochs"));
  d.ingest = ingest_section_from_json(json_at(j, "ingest", where), json_path(where, "ingest"));
  d.partial = json_field<bool>(j, "partial", where);
  d.warnings = json_field<std::vector<std::string>>(j, "warnings", where);
  if (j.contains("cluster"))  // a multi-host run only, with its hosts
    d.cluster = run_cluster_from_json(j["cluster"], json_path(where, "cluster"));
  if (j.contains("hosts")) d.hosts = run_hosts_from_json(j["hosts"], json_path(where, "hosts"));
  if (j.contains("sources")) {  // a merged document only
    const nlohmann::json& s = json_array_at(j, "sources", where);
    for (size_t i = 0; i < s.size(); ++i)
      d.sources.push_back(source_from_json(s[i], json_path(json_path(where, "sources"), i)));
  }
  d.sources_apart = json_field_or<bool>(j, "sources_apart", where, false);  // absent: at the same time, or unknown
  return d;
}

void write_run_document(const std::string& path, const RunDocument& doc) {
  write_json_file(path, run_document_json(doc));
}

RunIngestSection run_ingest_section(const IngestResult& in, double sample_bytes) {
  RunIngestSection s;
  s.result = in;
  s.sample_bytes = sample_bytes;
  return s;
}

RunLoaderSection run_loader_section(const LoaderConfig& l, uint64_t max_outstanding, const std::string& pattern,
                                    bool sharded, const std::string& cal_path, const nlohmann::json& cal) {
  RunLoaderSection s;
  s.num_workers = l.num_workers;
  s.batch_size = l.batch_size;
  s.prefetch_factor = l.prefetch_factor;
  s.shuffle = l.shuffle;
  s.drop_last = l.drop_last;
  s.epochs = l.epochs;
  s.duration_s = l.duration_s;
  s.cpu_per_sample_us = l.costs.worker.loop_us;
  s.gpus = std::max(l.world_ranks, l.ranks);
  s.gpus_per_process = l.ranks;
  s.engine = l.engine;
  s.direct = l.direct;
  s.step_time_s = l.step_time_s;
  s.seed = l.seed;
  s.max_outstanding_batches = max_outstanding;
  s.pattern = pattern;
  if (sharded) s.read_size_bytes = l.read_size;
  if (sharded && l.shuffle_buffer > 0) {
    s.shuffle_buffer_samples = l.shuffle_buffer;
    s.shuffle_initial_samples = l.shuffle_initial;
  }
  s.consumer = consumer_model(l, cal_path, cal);
  return s;
}

RunHeader run_header(const std::vector<std::string>& argv, const HostInfo& host) {
  const nlohmann::json j = document_header("run", argv, host);
  RunHeader h;
  h.schema = j.at("schema").get<std::string>();
  h.ioprobe_version = j.at("ioprobe_version").get<std::string>();
  h.command = j.at("command").get<std::vector<std::string>>();
  h.created_utc = j.at("created_utc").get<std::string>();
  h.host = host_section(host);
  return h;
}

}  // namespace ioprobe
