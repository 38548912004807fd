#include "loader/sample_source.hpp"

#include "core/clock.hpp"
#include "loader/consumer.hpp"
#include "loader/file_source.hpp"
#include "loader/sampler.hpp"
#include "loader/shard_source.hpp"
#include "loader/token_source.hpp"

namespace ioprobe {

std::unique_ptr<SampleSource> make_sample_source(const SourceEnv& env) {
  const DatasetKind kind = env.layout ? env.layout->kind() : DatasetKind::kFiles;
  switch (kind) {
    case DatasetKind::kSharded:
      return std::make_unique<ShardSource>(env);
    case DatasetKind::kToken:
      return std::make_unique<TokenSource>(env);
    case DatasetKind::kFiles:
      break;
  }
  return std::make_unique<FileSource>(env);
}

EpochPlan MapStyleSource::plan_epoch(uint32_t epoch) {
  const LoaderConfig& cfg = *env_.cfg;
  std::vector<uint64_t> order = sample_order(index_space(), cfg.shuffle, cfg.seed, epoch);
  order_ = env_.world > 1 ? shard_for_rank(order, env_.rank, env_.world) : std::move(order);
  EpochPlan plan;
  plan.files = epoch_files(order_);
  for (const BatchRange& b : cut_batches(order_.size(), cfg.batch_size, cfg.drop_last))
    plan.tasks.push_back({0, b.begin, b.end});
  return plan;
}

void per_sample_cpu(const SourceEnv& env, uint32_t w, WorkerStats& ws, const std::atomic<bool>* cancel) {
  const double us = env.cfg->costs.worker.loop_us;
  if (us <= 0) return;
  const int64_t c0 = thread_cpu_ns();
  const std::atomic<bool>* stop = env.run_stop;
  // A worker process's loop holds its GIL throughout; a thread pipeline's, its measured share.
  const double share = env.cfg->costs.threads_share_gil ? env.cfg->costs.loop_gil_share : 1.0;
  burn_worker_cpu(
      env.gils ? env.gils->at(w) : nullptr, us,
      [stop, cancel] { return (stop && stop->load(std::memory_order_relaxed)) || (cancel && cancel->load()); }, share);
  ws.cpu_work_ns += thread_cpu_ns() - c0;
}

}  // namespace ioprobe
