#include "loader/token_source.hpp"

namespace ioprobe {

TokenSource::TokenSource(const SourceEnv& env)
    : MapStyleSource(env), readers_(env.cfg->num_workers), tokens_(env.cfg->num_workers) {
  fetch_env_.dirfd = env.dirfd;
  fetch_env_.index = env.index;
  fetch_env_.layout = env.layout;
  fetch_env_.read_size = env.cfg->read_size;
  fetch_env_.on_error = env.on_error;
}

std::vector<uint64_t> TokenSource::epoch_files(const std::vector<uint64_t>&) const {
  std::vector<uint64_t> files(env_.layout->files());
  for (uint64_t f = 0; f < files.size(); ++f) files[f] = f;
  return files;
}

void TokenSource::init_worker(uint32_t w) { readers_[w] = make_range_reader(env_.cfg->engine, env_.cfg->direct); }

Batch TokenSource::fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) {
  RangeReader* reader = readers_[w].get();
  if (!reader) {  // the engine could not be set up; the rank rethrows the reason
    Batch r;
    r.errors = t.end - t.begin;
    return r;
  }
  RecordFetchEnv env = fetch_env_;
  env.per_sample = [this, &ws] { per_sample_cpu(env_, ws); };
  return tokens_[w].fetch(*reader, env, ws, order_, t.begin, t.end, cancel);
}

}  // namespace ioprobe
