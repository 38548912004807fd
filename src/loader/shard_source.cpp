#include "loader/shard_source.hpp"

#include "loader/shard_plan.hpp"

namespace ioprobe {

ShardSource::ShardSource(const SourceEnv& env) : env_(env), readers_(env_), streams_(env.cfg->num_workers) {}

EpochPlan ShardSource::plan_epoch(uint32_t epoch) {
  const LoaderConfig& cfg = *env_.cfg;
  EpochPlan plan;
  std::vector<uint64_t> records(cfg.num_workers);
  for (uint32_t w = 0; w < cfg.num_workers; ++w) {
    std::vector<uint64_t> mine = shards_for_worker(index_space(), cfg.shuffle, cfg.seed, epoch, env_.rank, env_.world,
                                                   w, cfg.num_workers);
    records[w] = mine.size() * env_.layout->records_per_file();
    plan.files.insert(plan.files.end(), mine.begin(), mine.end());
    streams_[w].reset(std::move(mine));  // no batch of this rank is in flight between epochs
  }
  for (const WorkerBatch& b : iterable_batch_order(records, cfg.batch_size, cfg.drop_last))
    plan.tasks.push_back({0, b.begin, b.end, static_cast<int>(b.worker)});
  return plan;
}

void ShardSource::init_worker(uint32_t w) { readers_.init_worker(w); }

Batch ShardSource::fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) {
  return readers_.fetch(w, t, ws, [&](RangeReader& reader, const RecordFetchEnv& env) {
    return streams_[w].fetch(reader, env, ws, t.begin, t.end, cancel);
  });
}

}  // namespace ioprobe
