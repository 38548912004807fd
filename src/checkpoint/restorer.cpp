#include "checkpoint/restorer.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "checkpoint/shard_decoder.hpp"
#include "checkpoint/shard_reader.hpp"
#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "core/threads.hpp"

namespace ioprobe::checkpoint {

namespace {

void restore_one(const std::string& path, uint64_t block, int decode_threads, bool cold, RestoreMode mode,
                 RankRestoreResult& res) {
  res.path = path;
  if (cold) {
    res.error = ShardReader::make_cold(path);  // untimed
    if (!res.error.empty()) return;
  }
  const int64_t t0 = now_ns();
  ShardReader rd(path, block, cold);
  res.direct = rd.direct();
  if (rd.failed()) {
    res.corrupt = rd.corrupt();
    res.error = rd.failure();
    return;
  }
  const std::vector<IndexEntry>& index = rd.index();
  res.chunks_total = index.size();
  std::unique_ptr<ShardDecoder> dec = mode == RestoreMode::kVerifyStored ? make_verify_decoder(rd.trailer())
                                                                         : make_shard_decoder(rd, decode_threads);
  res.decode_threads = dec->threads();
  for (size_t ci = 0; ci < index.size(); ++ci) {
    if (interrupted()) {
      res.interrupted = true;
      break;
    }
    const IndexEntry& e = index[ci];
    ChunkOutcome o;
    if (std::string why = rd.begin_chunk(e); why.empty()) o = dec->decode_chunk(rd, e);
    else o.error.detail = std::move(why);
    if (o.interrupted) {
      res.interrupted = true;
      break;
    }
    if (!o.error.empty()) {
      res.corrupt = true;
      // error_line: "<path>: chunk 3 of 8 (stored bytes ..., logical bytes ...): why" for data that
      // does not check; a failed read keeps its errno and operation ahead of the path.
      res.error = std::move(o.error);
      res.error.path = path;
      const std::string chunk = fmt::format("chunk {} of {} (stored bytes {}..{}, logical bytes {}..{})", ci,
                                            index.size(), e.stored_offset, e.stored_offset + e.stored_len,
                                            e.logical_offset, e.logical_offset + e.logical_len);
      res.error.detail = res.error.detail.empty() ? chunk : chunk + ": " + res.error.detail;
      break;
    }
    ++res.chunks_verified;
    res.logical_bytes += e.logical_len;
  }
  res.stored_bytes = rd.stored_bytes();
  res.read_ns = rd.read_ns();
  res.decompress_ns = dec->decode_ns();
  res.decode_wait_ns = dec->wait_ns();
  res.total_ns = now_ns() - t0;
}

}  // namespace

RestoreResult restore_checkpoint(const std::vector<std::string>& paths, uint64_t read_block_bytes, int decode_threads,
                                 bool cold, RestoreMode mode) {
  RestoreResult res;
  res.ranks.resize(paths.size());
  int64_t t0 = now_ns();
  run_threads(paths.size(), [&](size_t i) {  // std::bad_alloc and the like are rethrown here
    restore_one(paths[i], std::max<uint64_t>(read_block_bytes, 4096), decode_threads, cold, mode, res.ranks[i]);
  });
  res.wall_ns = now_ns() - t0;
  res.ok = true;
  for (const auto& r : res.ranks) {
    if (r.interrupted) res.interrupted = true;
    if (!r.error.empty() || r.interrupted || r.chunks_verified != r.chunks_total) res.ok = false;
  }
  return res;
}

}  // namespace ioprobe::checkpoint
