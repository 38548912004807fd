#include "loader/token_source.hpp"

namespace ioprobe {

TokenSource::TokenSource(const SourceEnv& env) : MapStyleSource(env), readers_(env_), tokens_(env.cfg->num_workers) {}

std::vector<uint64_t> TokenSource::epoch_files(const std::vector<uint64_t>&) const {
  std::vector<uint64_t> files(env_.layout->files());
  for (uint64_t f = 0; f < files.size(); ++f) files[f] = f;
  return files;
}

void TokenSource::init_worker(uint32_t w) { readers_.init_worker(w); }

Batch TokenSource::fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) {
  return readers_.fetch(w, t, ws, [&](RangeReader& reader, const RecordFetchEnv& env) {
    return tokens_[w].fetch(reader, env, ws, order_, t.begin, t.end, cancel);
  });
}

}  // namespace ioprobe
