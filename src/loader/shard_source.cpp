#include "loader/shard_source.hpp"

#include <algorithm>

#include "loader/shard_plan.hpp"

namespace ioprobe {

ShardSource::ShardSource(const SourceEnv& env) : env_(env), readers_(env_), streams_(env.cfg->num_workers) {
  if (env.cfg->shuffle_buffer > 0) wds_.resize(env.cfg->num_workers);
}

EpochPlan ShardSource::plan_epoch(uint32_t epoch) {
  const LoaderConfig& cfg = *env_.cfg;
  EpochPlan plan;
  std::vector<uint64_t> records(cfg.num_workers);
  for (uint32_t w = 0; w < cfg.num_workers; ++w) {
    std::vector<uint64_t> mine = wds_.empty() ? shards_for_worker(index_space(), cfg.shuffle, cfg.seed, epoch,
                                                                  env_.rank, env_.world, w, cfg.num_workers)
                                              : wds_shards_for_worker(index_space(), cfg.wds_shard_shuffle, cfg.seed,
                                                                      env_.rank, env_.world, w, cfg.num_workers);
    records[w] = mine.size() * env_.layout->records_per_file();
    if (!wds_.empty()) {
      WdsWorker& s = wds_[w];
      s.shards = mine;
      s.delivery = wds_shuffle(records[w], cfg.shuffle_buffer, cfg.shuffle_initial, cfg.seed);
      s.read_pos = 0;
      s.read_ok.assign(records[w], 0);
    }
    plan.files.insert(plan.files.end(), mine.begin(), mine.end());
    streams_[w].reset(std::move(mine));  // no batch of this rank is in flight between epochs
  }
  for (const WorkerBatch& b : iterable_batch_order(records, cfg.batch_size, cfg.drop_last))
    plan.tasks.push_back({0, b.begin, b.end, static_cast<int>(b.worker)});
  return plan;
}

void ShardSource::init_worker(uint32_t w) { readers_.init_worker(w); }

Batch ShardSource::fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) {
  if (!wds_.empty()) return fetch_wds(w, t, ws, cancel);
  return readers_.fetch(w, t, ws, [&](RangeReader& reader, const RecordFetchEnv& env) {
    return streams_[w].fetch(reader, env, ws, t.begin, t.end, cancel);
  });
}

Batch ShardSource::fetch_wds(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) {
  WdsWorker& s = wds_[w];
  const uint64_t K = env_.layout->records_per_file();
  const auto record_at = [&](uint64_t pos) { return s.shards[pos / K] * K + pos % K; };
  // The stream is read up to what the buffer had pulled when the batch's last sample was yielded.
  const uint64_t need = t.end > t.begin ? std::max(s.read_pos, s.delivery.pulled[t.end - 1]) : s.read_pos;
  Batch read = readers_.fetch(w, BatchTask{t.seq, s.read_pos, need, t.worker}, ws,
                              [&](RangeReader& reader, const RecordFetchEnv& env) {
                                return streams_[w].fetch(reader, env, ws, s.read_pos, need, cancel);
                              });
  // Mark the positions read: the stream yields its successful records in stream order.
  size_t j = 0;
  const uint64_t stop = read.cancelled ? s.read_pos + read.samples + read.errors : need;
  for (uint64_t pos = s.read_pos; pos < stop && j < read.sample_ids.size(); ++pos)
    if (read.sample_ids[j] == record_at(pos)) {
      s.read_ok[pos] = 1;
      ++j;
    }
  s.read_pos = std::min(stop, need);
  Batch r;
  r.bytes = read.bytes;
  r.cancelled = read.cancelled;
  r.sample_ids.reserve(t.end - t.begin);
  for (uint64_t i = t.begin; i < t.end && !r.cancelled; ++i) {
    const uint64_t pos = s.delivery.order[i];
    if (pos < s.read_pos && s.read_ok[pos]) {
      r.sample_ids.push_back(record_at(pos));
      ++r.samples;
    } else {
      ++r.errors;  // its shard failed to open or read (counted in ws.errors as it was read)
    }
  }
  return r;
}

}  // namespace ioprobe
