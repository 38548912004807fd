#include "loader/loader_result.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe {

namespace {
void add_by_index(std::vector<uint64_t>& into, const std::vector<uint64_t>& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] += from[i];
}
}  // namespace

ErrorSpread LoaderResult::error_spread() const {
  ErrorSpread s = ioprobe::error_spread(error_samples, errors);
  if (error_files_exact && errors > 0) return {error_files, true};
  s.files = std::max(s.files, error_files);
  return s;
}

void LoaderResult::merge(const LoaderResult& o) {
  if (ranks.empty() && workers.empty()) {
    *this = o;
    return;
  }
  if (timeline.interval_ns() != o.timeline.interval_ns() && !timeline.points().empty() && !o.timeline.points().empty())
    throw UsageError(fmt::format("cannot merge loader results with timeline intervals of {} s and {} s",
                                 timeline.interval_s(), o.timeline.interval_s()));
  timeline.merge(o.timeline);
  workers.insert(workers.end(), o.workers.begin(), o.workers.end());
  ranks.insert(ranks.end(), o.ranks.begin(), o.ranks.end());
  elapsed_ns = std::max(elapsed_ns, o.elapsed_ns);
  epochs_completed = std::min(epochs_completed, o.epochs_completed);
  partial = partial || o.partial;
  stopped_on_errors = stopped_on_errors || o.stopped_on_errors;
  if ((stop.kind == LoaderStopKind::kNone || stop.completed()) && o.stop.kind != LoaderStopKind::kNone) stop = o.stop;
  samples += o.samples;
  bytes += o.bytes;
  if (o.errors > 0 && errors > 0) {
    error_files = std::max(error_files, o.error_files);
    error_files_exact = false;
  } else if (o.errors > 0) {
    error_files = o.error_files;
    error_files_exact = o.error_files_exact;
  }
  errors += o.errors;
  io_bytes += o.io_bytes;
  for (const auto& e : o.error_samples) add_error(error_samples, e, kMaxErrorSamples);
  file_latency.merge(o.file_latency);
  open_latency.merge(o.open_latency);
  batch_wait.merge(o.batch_wait);
  wait_ns += o.wait_ns;
  first_batch_ns = std::max(first_batch_ns, o.first_batch_ns);
  cpu_user_s += o.cpu_user_s;
  cpu_sys_s += o.cpu_sys_s;
  cache_prep_cpu_s += o.cache_prep_cpu_s;
  if (epoch_resident_fraction.empty()) epoch_resident_fraction = o.epoch_resident_fraction;
  if (residency_method.empty()) residency_method = o.residency_method;
  add_by_index(epoch_samples, o.epoch_samples);
  add_by_index(epoch_bytes, o.epoch_bytes);
  if (epoch_ns.size() < o.epoch_ns.size()) epoch_ns.resize(o.epoch_ns.size(), 0);
  for (size_t i = 0; i < o.epoch_ns.size(); ++i) epoch_ns[i] = std::max(epoch_ns[i], o.epoch_ns[i]);
  for (const auto& n : o.cache_notes)
    if (std::find(cache_notes.begin(), cache_notes.end(), n) == cache_notes.end()) cache_notes.push_back(n);
}

LoaderResult rank_result(RankStats rank, std::vector<WorkerStats> workers, int64_t elapsed_ns,
                         uint32_t epochs_completed) {
  LoaderResult r;
  r.elapsed_ns = elapsed_ns;
  r.epochs_completed = epochs_completed;
  r.samples = rank.samples;
  r.bytes = rank.bytes;
  r.batch_wait = rank.batch_wait;
  r.timeline = rank.timeline;
  r.wait_ns = rank.wait_ns;
  r.first_batch_ns = rank.first_batch_ns;
  r.epoch_samples = rank.epoch_samples;
  r.epoch_bytes = rank.epoch_bytes;
  r.epoch_ns = rank.epoch_ns;
  for (const auto& w : workers) {
    r.errors += w.errors;
    r.io_bytes += w.io_bytes;
    r.file_latency.merge(w.file_latency);
    r.open_latency.merge(w.open_latency);
  }
  r.ranks.push_back(std::move(rank));
  r.workers = std::move(workers);
  return r;
}

}  // namespace ioprobe
