// What the record kinds (sharded: shard_source.hpp, token: token_source.hpp) share: one
// RangeReader per worker, set up in the worker's thread, and the RecordFetchEnv their fetches
// (record_fetch.hpp) read with. The kinds differ only in what they read with them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/range_reader.hpp"
#include "loader/batch.hpp"
#include "loader/loader_result.hpp"
#include "loader/record_fetch.hpp"
#include "loader/sample_source.hpp"

namespace ioprobe {

/// One RangeReader per worker (cfg.engine, cfg.direct) and the record fetch environment built
/// from the source's SourceEnv. Held by a source; not copyable, since it points at the source's env.
class WorkerRangeReaders {
 public:
  /// `env`: the owning source's own SourceEnv, which outlives this object.
  explicit WorkerRangeReaders(const SourceEnv& env);
  WorkerRangeReaders(const WorkerRangeReaders&) = delete;
  WorkerRangeReaders& operator=(const WorkerRangeReaders&) = delete;

  /// SampleSource::init_worker: worker `w`'s reader, in that worker's thread. Throws Error when
  /// the engine cannot be set up; the worker then has no reader.
  void init_worker(uint32_t w);

  /// Builds batch `t` on worker `w`: calls `read(RangeReader&, const RecordFetchEnv&)` with the
  /// worker's reader and a fetch environment whose per_sample runs the emulated CPU work into
  /// `ws`, and returns its Batch. When the worker has no reader (init_worker threw; the rank
  /// rethrows the reason) every sample of `t` is an error and nothing is read. Never throws
  /// unless `read` does.
  template <class Read>
  Batch fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, Read&& read) const {
    RangeReader* reader = readers_[w].get();
    if (!reader) {
      Batch r;
      r.errors = t.end - t.begin;
      return r;
    }
    RecordFetchEnv env = fetch_env_;
    env.per_sample = [src = env_, w, &ws] { per_sample_cpu(*src, w, ws); };
    return read(*reader, static_cast<const RecordFetchEnv&>(env));
  }

 private:
  const SourceEnv* env_;
  RecordFetchEnv fetch_env_;
  std::vector<std::unique_ptr<RangeReader>> readers_;  // one per worker
};

}  // namespace ioprobe
