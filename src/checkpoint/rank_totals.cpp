#include "checkpoint/rank_totals.hpp"

#include <algorithm>

namespace ioprobe::checkpoint {

namespace {
void merge_min(bool& have, double& v, bool other_have, double other) {
  if (!other_have) return;
  v = have ? std::min(v, other) : other;
  have = true;
}
}  // namespace

double rate_bytes_per_s(uint64_t bytes, int64_t ns) {
  return ns > 0 ? static_cast<double>(bytes) * 1e9 / static_cast<double>(ns) : 0.0;
}

void SaveTotals::add_rank(const RankSaveResult& r, uint64_t disk, bool has_state) {
  SaveTotals one;
  one.ranks = 1;
  one.logical_bytes = r.logical_bytes;
  one.stored_bytes = r.stored_bytes;
  one.written_bytes = r.written_bytes;
  one.bytes_on_disk = disk;
  one.duration_max_ns = r.total_ns;
  one.have_min_rate = has_state;
  one.min_rank_bytes_per_s = rate_bytes_per_s(r.logical_bytes, r.total_ns);
  one.all_direct = r.direct;
  one.stage_ns = r.stage_ns;
  one.compress_ns = r.compress_ns;
  one.write_wait_ns = r.write_wait_ns;
  one.fsync_ns = r.fsync_ns;
  if (r.compress_active_ns > 0) {
    // Measured: time inside zstd summed over this rank's workers / the pool's wall time.
    one.pool_ranks = 1;
    one.workers_busy_sum = static_cast<double>(r.compress_busy_ns) / static_cast<double>(r.compress_active_ns);
    one.workers_used_min = r.compress_workers_used;
    one.checksum_cpu_max_ns = r.checksum_cpu_ns;
  }
  merge(one);
}

void SaveTotals::merge(const SaveTotals& o) {
  ranks += o.ranks;
  logical_bytes += o.logical_bytes;
  stored_bytes += o.stored_bytes;
  written_bytes += o.written_bytes;
  bytes_on_disk += o.bytes_on_disk;
  duration_max_ns = std::max(duration_max_ns, o.duration_max_ns);
  merge_min(have_min_rate, min_rank_bytes_per_s, o.have_min_rate, o.min_rank_bytes_per_s);
  all_direct = all_direct && o.all_direct;
  stage_ns = std::max(stage_ns, o.stage_ns);
  compress_ns = std::max(compress_ns, o.compress_ns);
  write_wait_ns = std::max(write_wait_ns, o.write_wait_ns);
  fsync_ns = std::max(fsync_ns, o.fsync_ns);
  pool_ranks += o.pool_ranks;
  workers_busy_sum += o.workers_busy_sum;
  if (o.workers_used_min >= 0)
    workers_used_min = workers_used_min < 0 ? o.workers_used_min : std::min(workers_used_min, o.workers_used_min);
  checksum_cpu_max_ns = std::max(checksum_cpu_max_ns, o.checksum_cpu_max_ns);
}

double SaveTotals::ratio() const {
  return bytes_on_disk ? static_cast<double>(logical_bytes) / static_cast<double>(bytes_on_disk) : 0.0;
}

void RestoreTotals::add_rank(const RankRestoreResult& r, bool has_state) {
  RestoreTotals one;
  one.ranks = 1;
  one.logical_bytes = r.logical_bytes;
  one.duration_max_ns = r.total_ns;
  one.have_min_rate = has_state;
  one.min_rank_bytes_per_s = rate_bytes_per_s(r.logical_bytes, r.total_ns);
  one.all_direct = r.direct;
  one.decode_threads_max = r.decode_threads;
  one.first_error = r.error;
  merge(one);
}

void RestoreTotals::merge(const RestoreTotals& o) {
  ranks += o.ranks;
  logical_bytes += o.logical_bytes;
  duration_max_ns = std::max(duration_max_ns, o.duration_max_ns);
  merge_min(have_min_rate, min_rank_bytes_per_s, o.have_min_rate, o.min_rank_bytes_per_s);
  all_direct = all_direct && o.all_direct;
  decode_threads_max = std::max(decode_threads_max, o.decode_threads_max);
  if (first_error.empty()) first_error = o.first_error;
}

}  // namespace ioprobe::checkpoint
