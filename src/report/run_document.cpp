#include "report/run_document.hpp"

namespace ioprobe {

nlohmann::json latency_us_json(const LatencyHistogram& h) {
  auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1e3; };
  return {{"count", h.count()},
          {"mean", h.mean() / 1e3},
          {"p50", us(h.percentile(50))},
          {"p90", us(h.percentile(90))},
          {"p99", us(h.percentile(99))},
          {"p999", us(h.percentile(99.9))},
          {"max", us(h.max())}};
}

nlohmann::json loader_results_json(const LoaderResult& r) {
  const double elapsed = static_cast<double>(r.elapsed_ns) / 1e9;
  nlohmann::json workers = nlohmann::json::array();
  for (const auto& w : r.workers)
    workers.push_back({{"rank", w.rank},
                       {"worker", w.worker},
                       {"files", w.files},
                       {"bytes", w.bytes},
                       {"io_bytes", w.io_bytes},
                       {"errors", w.errors},
                       {"busy_s", static_cast<double>(w.busy_ns) / 1e9},
                       {"cpu_work_s", static_cast<double>(w.cpu_work_ns) / 1e9},
                       {"cpu_list", w.cpu_list},
                       {"numa", w.numa}});
  // Timeline: ranks merged interval by interval.
  Timeline merged(r.ranks.empty() ? 1.0 : r.ranks.front().timeline.interval_s());
  LatencyHistogram batch_wait;
  double wait_s = 0, first_batch_s = 0;
  for (const auto& rk : r.ranks) {
    merged.merge(rk.timeline);
    batch_wait.merge(rk.batch_wait);
    wait_s += static_cast<double>(rk.wait_ns) / 1e9;
    first_batch_s = std::max(first_batch_s, static_cast<double>(rk.first_batch_ns) / 1e9);
  }
  nlohmann::json timeline = nlohmann::json::array();
  for (const auto& p : merged.points())
    timeline.push_back({{"t_s", p.t_s}, {"samples", p.samples}, {"bytes", p.bytes}, {"wait_s", p.wait_s}});
  const double cpu_s = r.cpu_user_s + r.cpu_sys_s;
  return {{"samples", r.samples},
          {"bytes", r.bytes},
          {"io_bytes", r.io_bytes},
          {"errors", r.errors},
          {"elapsed_s", elapsed},
          {"samples_per_s", elapsed > 0 ? static_cast<double>(r.samples) / elapsed : 0.0},
          {"bytes_per_s", elapsed > 0 ? static_cast<double>(r.bytes) / elapsed : 0.0},
          {"files_per_s", elapsed > 0 ? static_cast<double>(r.samples + r.errors) / elapsed : 0.0},
          {"epochs_completed", r.epochs_completed},
          {"stop_reason", r.stop_reason},
          {"first_batch_s", first_batch_s},
          {"file_latency_us", latency_us_json(r.file_latency)},
          {"open_close_latency_us", latency_us_json(r.open_latency)},
          {"batch_wait_us", latency_us_json(batch_wait)},
          {"consumer_wait_s", wait_s},
          {"cpu",
           {{"user_s", r.cpu_user_s},
            {"sys_s", r.cpu_sys_s},
            {"per_sample_us", r.samples ? cpu_s * 1e6 / static_cast<double>(r.samples) : 0.0}}},
          {"timeline_interval_s", merged.interval_s()},
          {"timeline", timeline},
          {"workers", workers},
          {"error_samples", r.error_samples}};
}

nlohmann::json ingest_json(const IngestResult& in, double sample_bytes) {
  const Demand& d = in.demand;
  return {{"accelerator", d.accelerator},
          {"accelerator_name", d.accelerator_name},
          {"model", d.model},
          {"gpus", d.gpus},
          {"rate_family", d.rate_family},
          {"samples_per_s_per_gpu", d.samples_per_s_per_gpu},
          {"source", d.source},
          {"required_samples_per_s", in.required_samples_per_s},
          {"required_bytes_per_s", in.required_bytes_per_s},
          {"sample_bytes", sample_bytes},
          {"delivered_samples_per_s", in.delivered_samples_per_s},
          {"delivered_bytes_per_s", in.delivered_bytes_per_s},
          {"accelerator_utilization", in.accelerator_utilization},
          {"accelerator_utilization_min", in.accelerator_utilization_min},
          {"au_target", d.au_target},
          {"consumer_wait_s", in.consumer_wait_s},
          {"consumer_lag_s", in.consumer_lag_s},
          {"worker_busy_fraction", in.worker_busy_fraction},
          {"capacity_samples_per_s", in.capacity_samples_per_s},
          {"capacity_basis", in.capacity_basis},
          {"capacity_measured", in.capacity_measured},
          {"gpus_fed", in.gpus_fed},
          {"gpus_fed_estimate", in.gpus_fed_estimate},
          {"verdict", in.verdict},
          {"verdict_text", in.verdict_text}};
}

}  // namespace ioprobe
