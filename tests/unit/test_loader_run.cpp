// run_loader itself, two GPU ranks in one process, on a tiny dataset of each kind generated in a
// temporary directory: every rank's workers, the in-order queue, the DDP step barrier and the
// consumer run as in a real run (so ThreadSanitizer, tools/sanitize tsan, sees the loader's
// threads). The accounting must be exact: samples = dataset samples x epochs, bytes likewise,
// and every sample delivered exactly once per epoch across the ranks (checked on the sample ids
// of the batches the consumer receives).
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "dataset/file_index.hpp"
#include "dataset/record_layout.hpp"
#include "loader/consumer.hpp"
#include "loader/loader_run.hpp"
#include "loader/shard_plan.hpp"
#include "loader/wds_order.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

namespace {

// What the consumers of all ranks received.
struct Deliveries {
  std::mutex mu;
  std::map<uint32_t, std::vector<uint64_t>> ids_by_epoch;  // sample ids, all ranks
  std::map<uint32_t, uint64_t> samples_by_rank;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint64_t>> ids_by_rank_epoch;  // (rank, epoch): in order
  std::map<std::pair<uint32_t, int>, uint64_t> first_batch_bytes;                    // (rank, worker), epoch 0
  uint64_t bad_batches = 0;    // ids not matching the sample count, or no delivery time
  uint64_t grown_batches = 0;  // ids whose vector grew while the batch was built (no reserve up front)
};

class RecordingConsumer final : public Consumer {
 public:
  RecordingConsumer(Deliveries& d, uint32_t rank) : d_(d), rank_(rank) {}
  void step(Batch& b, RankStats&, const std::function<bool()>&) override {
    std::lock_guard<std::mutex> g(d_.mu);
    if (b.sample_ids.size() != b.samples || b.delivered_ns < 0) ++d_.bad_batches;
    // Reserved once for the batch's samples: exactly their count (these runs have no failures);
    // grown one push_back at a time it would be the next power of two (4 for a batch of 3).
    if (b.sample_ids.capacity() != b.samples) ++d_.grown_batches;
    auto& ids = d_.ids_by_epoch[b.epoch];
    ids.insert(ids.end(), b.sample_ids.begin(), b.sample_ids.end());
    d_.samples_by_rank[rank_] += b.samples;
    auto& mine = d_.ids_by_rank_epoch[{rank_, b.epoch}];
    mine.insert(mine.end(), b.sample_ids.begin(), b.sample_ids.end());
    if (b.epoch == 0) d_.first_batch_bytes.try_emplace({rank_, b.worker}, b.bytes);
  }

 private:
  Deliveries& d_;
  uint32_t rank_;
};

LoaderConfig two_ranks(Deliveries& d) {
  LoaderConfig c;
  c.ranks = 2;
  c.num_workers = 2;
  c.batch_size = 3;
  c.prefetch_factor = 2;
  c.epochs = 2;
  c.seed = 3;
  c.engine = EngineKind::kPsync;
  c.direct = false;
  c.timeline_interval_s = 0.5;
  c.consumer_factory = [&d](uint32_t rank) { return std::make_unique<RecordingConsumer>(d, rank); };
  return c;
}

void write_file(const std::string& path, uint64_t bytes) { std::ofstream(path) << std::string(bytes, 'x'); }

// The run's accounting against a dataset of `n` samples and `total` bytes, read for c.epochs.
void check_exact(const LoaderResult& r, const LoaderProgress& progress, Deliveries& d, const LoaderConfig& c,
                 uint64_t n, uint64_t total) {
  CHECK(r.errors == 0);
  CHECK(r.error_samples.empty());
  CHECK(to_string(r.stop) == "completed");
  CHECK(r.epochs_completed == c.epochs);
  CHECK(r.samples == n * c.epochs);
  CHECK(r.bytes == total * c.epochs);
  CHECK(r.epoch_samples == std::vector<uint64_t>(c.epochs, n));
  CHECK(r.epoch_bytes == std::vector<uint64_t>(c.epochs, total));
  REQUIRE(r.epoch_ns.size() == c.epochs);  // each epoch's wall time, within the run's
  for (int64_t ns : r.epoch_ns) CHECK((ns > 0 && ns <= r.elapsed_ns));
  CHECK(progress.samples.load() == n * c.epochs);
  CHECK(progress.bytes.load() == total * c.epochs);
  REQUIRE(r.ranks.size() == 2);
  CHECK(d.bad_batches == 0);
  CHECK(d.grown_batches == 0);
  REQUIRE(d.samples_by_rank.size() == 2);
  for (const auto& [rank, samples] : d.samples_by_rank) CHECK(samples > 0);  // both ranks read a share
  REQUIRE(d.ids_by_epoch.size() == c.epochs);
  for (const auto& [epoch, ids] : d.ids_by_epoch) {
    std::vector<int> seen(n, 0);
    for (uint64_t id : ids) {
      REQUIRE(id < n);
      ++seen[id];
    }
    for (uint64_t s = 0; s < n; ++s) {
      INFO("epoch " << epoch << " sample " << s);
      REQUIRE(seen[s] == 1);
    }
  }
}

}  // namespace

TEST_CASE("run_loader, 2 ranks, files: every file once per epoch, exact samples and bytes", "[loader][run_loader]") {
  TempDir dir("lrfiles");
  FileIndex index(dir.path);
  const uint64_t n = 23;
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const std::string name = fmt::format("f{:02}", i);
    write_file(dir.path + "/" + name, 100 + 7 * i);
    index.add(name, static_cast<int64_t>(100 + 7 * i));
    total += 100 + 7 * i;
  }
  Deliveries d;
  const LoaderConfig c = two_ranks(d);
  LoaderProgress progress;
  const LoaderResult r = run_loader(index, c, &progress);
  check_exact(r, progress, d, c, n, total);
}

TEST_CASE("run_loader: failures are counted exactly, reads and distinct files, beyond the records kept",
          "[loader][run_loader]") {
  // 40 listed files, 25 of them missing (more than the 10 distinct failures a result keeps), read
  // for 2 epochs by 2 ranks: 50 failed reads of exactly 25 files.
  TempDir dir("lrmissing");
  FileIndex index(dir.path);
  for (uint64_t i = 0; i < 40; ++i) {
    const std::string name = fmt::format("f{:02}", i);
    if (i % 8 < 3) write_file(dir.path + "/" + name, 100);
    index.add(name, 100);
  }
  Deliveries d;
  const LoaderConfig c = two_ranks(d);
  const LoaderResult r = run_loader(index, c, nullptr);
  CHECK(r.samples == 15 * 2);
  CHECK(r.errors == 25 * 2);
  CHECK(r.error_samples.size() == 10);
  CHECK(r.error_files == 25);
  CHECK(r.error_files_exact);
  const ErrorSpread s = r.error_spread();
  CHECK(s.files == 25);
  CHECK(s.complete);
  CHECK(failed_reads_text(r.errors, s) == "50 failed reads of 25 files");
}

TEST_CASE("run_loader, 2 ranks, sharded: every record once per epoch, shard bytes exact", "[loader][run_loader]") {
  TempDir dir("lrshards");
  FileIndex index(dir.path);
  const uint64_t shards = 7, per_shard = 5;
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  for (uint64_t f = 0; f < shards; ++f) {
    uint64_t bytes = 0;
    for (uint64_t r = 0; r < per_shard; ++r) {
      sizes.push_back(500 + (f * 37 + r * 611) % 2500);  // records straddle the 4 KiB reads
      bytes += sizes.back();
    }
    const std::string name = fmt::format("shard-{:02}.tar", f);
    write_file(dir.path + "/" + name, bytes);
    index.add(name, static_cast<int64_t>(bytes));
    total += bytes;
  }
  const RecordLayout layout(DatasetKind::kSharded, shards, per_shard, sizes);
  Deliveries d;
  LoaderConfig c = two_ranks(d);
  c.read_size = 4096;
  LoaderProgress progress;
  const LoaderResult r = run_loader(index, c, &progress, nullptr, &layout);
  check_exact(r, progress, d, c, shards * per_shard, total);
}

TEST_CASE("run_loader, 2 ranks, sharded with a shuffle buffer: webdataset's order, the first batch waits for the fill",
          "[loader][run_loader][wds]") {
  TempDir dir("lrwds");
  FileIndex index(dir.path);
  const uint64_t shards = 7, per_shard = 5;
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  for (uint64_t f = 0; f < shards; ++f) {
    uint64_t bytes = 0;
    for (uint64_t r = 0; r < per_shard; ++r) {
      sizes.push_back(500 + (f * 37 + r * 611) % 2500);
      bytes += sizes.back();
    }
    const std::string name = fmt::format("shard-{:02}.tar", f);
    write_file(dir.path + "/" + name, bytes);
    index.add(name, static_cast<int64_t>(bytes));
    total += bytes;
  }
  const RecordLayout layout(DatasetKind::kSharded, shards, per_shard, sizes);
  Deliveries d;
  LoaderConfig c = two_ranks(d);
  c.read_size = 4096;
  c.shuffle_buffer = 9;
  c.shuffle_initial = 8;
  c.wds_shard_shuffle = 100;
  LoaderProgress progress;
  const LoaderResult r = run_loader(index, c, &progress, nullptr, &layout);
  check_exact(r, progress, d, c, shards * per_shard, total);
  for (uint32_t rank = 0; rank < 2; ++rank) {
    // Each worker's samples through its buffer, cut into batches, taken round-robin over the workers.
    std::vector<std::vector<uint64_t>> delivered(c.num_workers);
    std::vector<uint64_t> counts;
    for (uint32_t w = 0; w < c.num_workers; ++w) {
      const auto mine = wds_shards_for_worker(shards, 100, c.seed, rank, 2, w, c.num_workers);
      const WdsShuffle sh = wds_shuffle(mine.size() * per_shard, c.shuffle_buffer, c.shuffle_initial, c.seed);
      for (uint64_t pos : sh.order) delivered[w].push_back(mine[pos / per_shard] * per_shard + pos % per_shard);
      counts.push_back(delivered[w].size());
      // The worker's first batch read at least the records its buffer pulled before yielding.
      uint64_t fill_bytes = 0;
      for (uint64_t pos = 0; pos < sh.pulled[c.batch_size - 1]; ++pos)
        fill_bytes += sizes[mine[pos / per_shard] * per_shard + pos % per_shard];
      INFO("rank " << rank << " worker " << w);
      REQUIRE(d.first_batch_bytes.count({rank, static_cast<int>(w)}) == 1);
      CHECK(d.first_batch_bytes[{rank, static_cast<int>(w)}] >= fill_bytes);
    }
    std::vector<uint64_t> expected;
    for (const WorkerBatch& b : iterable_batch_order(counts, c.batch_size, c.drop_last))
      expected.insert(expected.end(), delivered[b.worker].begin() + static_cast<int64_t>(b.begin),
                      delivered[b.worker].begin() + static_cast<int64_t>(b.end));
    for (uint32_t epoch = 0; epoch < c.epochs; ++epoch) {
      INFO("rank " << rank << " epoch " << epoch);
      CHECK(d.ids_by_rank_epoch[{rank, epoch}] == expected);  // a fixed seed repeats the order each epoch
    }
  }
}

TEST_CASE("run_loader, 2 ranks, token: every window once per epoch, exact bytes", "[loader][run_loader]") {
  TempDir dir("lrtoken");
  FileIndex index(dir.path);
  const uint64_t files = 6, windows = 8, window = 512;
  for (uint64_t f = 0; f < files; ++f) {
    const std::string name = fmt::format("tokens-{}.bin", f);
    write_file(dir.path + "/" + name, windows * window);
    index.add(name, static_cast<int64_t>(windows * window));
  }
  const RecordLayout layout(DatasetKind::kToken, files, windows, window);
  Deliveries d;
  const LoaderConfig c = two_ranks(d);
  LoaderProgress progress;
  const LoaderResult r = run_loader(index, c, &progress, nullptr, &layout);
  check_exact(r, progress, d, c, files * windows, files * windows * window);
}

TEST_CASE("run_loader: the time spent preparing each epoch (cache eviction, epoch_mark) is not in elapsed",
          "[loader][run_loader]") {
  // A cold buffered run evicts every file before each epoch and device accounting reads its
  // counters (epoch_mark): that is not loading, and a run whose elapsed included it reported
  // samples/s below what the same epochs delivered. Here each epoch's preparation takes 1.5 s
  // (epoch_mark sleeps) while the epochs themselves read 12 tiny files.
  TempDir dir("lrprep");
  FileIndex index(dir.path);
  for (int i = 0; i < 12; ++i) {
    write_file(dir.path + fmt::format("/f{:02}", i), 100);
    index.add(fmt::format("f{:02}", i), 100);
  }
  Deliveries d;
  LoaderConfig c = two_ranks(d);
  c.ranks = 1;  // with 2, the other rank's first step waits for rank 0's epoch_mark inside its epoch
  c.evict_before_epoch = true;
  int marks = 0;
  c.epoch_mark = [&marks] {
    if (marks++ < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the 2 epochs, not the end
  };
  LoaderProgress progress;
  const LoaderResult r = run_loader(index, c, &progress);
  CHECK(r.samples == 24);
  CHECK(marks == 3);
  int64_t epochs_ns = 0;
  for (int64_t ns : r.epoch_ns) epochs_ns += ns;
  CHECK(r.elapsed_ns >= epochs_ns);
  CHECK(r.elapsed_ns < 2'000'000'000);  // 3 s of preparation left out; with it, elapsed >= 3 s
}

TEST_CASE("run_loader: the CPU spent preparing each epoch is not in the run's CPU but reported apart",
          "[loader][run_loader]") {
  // The preparation before each epoch (eviction, the residency sample, epoch_mark) is left out of
  // elapsed; its CPU must be left out of the run's CPU too, or CPU per sample counts work that
  // is not loading. Here the preparation burns 300 ms of CPU (epoch_mark, once per epoch) while
  // the epochs read 12 tiny files.
  TempDir dir("lrprepcpu");
  FileIndex index(dir.path);
  for (int i = 0; i < 12; ++i) {
    write_file(dir.path + fmt::format("/f{:02}", i), 100);
    index.add(fmt::format("f{:02}", i), 100);
  }
  Deliveries d;
  LoaderConfig c = two_ranks(d);
  c.ranks = 1;
  c.measure_residency = true;
  int marks = 0;
  c.epoch_mark = [&marks] {
    if (marks++ < 2) spend_cpu_us(150000, {});  // the 2 epochs, not the end
  };
  LoaderProgress progress;
  const LoaderResult r = run_loader(index, c, &progress);
  CHECK(r.samples == 24);
  CHECK(marks == 3);
  INFO("run CPU " << r.cpu_user_s + r.cpu_sys_s << " s, preparation " << r.cache_prep_cpu_s << " s");
  CHECK(r.cache_prep_cpu_s >= 0.25);           // the 300 ms burned, rusage's rounding aside
  CHECK(r.cpu_user_s + r.cpu_sys_s < 0.15);    // with the preparation it would be >= 0.3 s
  CHECK(r.residency_method.empty() == false);  // the residency sample ran in that preparation
}

TEST_CASE("run_loader: when drop_caches succeeds no rank evicts its files one by one", "[loader][run_loader]") {
  // The per-file eviction after a successful drop_caches would reopen every file, so the epoch
  // would start with warm inodes where a real loader after drop_caches starts cold. Here the drop
  // "succeeds" into a plain file (nothing is dropped), so files read in epoch 0 stay resident
  // before epoch 1 only if no rank evicted them; a refused drop (a path that cannot be opened)
  // evicts them, where this filesystem honours the eviction at all.
  TempDir dir("lrdrop");
  FileIndex index(dir.path);
  for (int i = 0; i < 12; ++i) {
    write_file(dir.path + fmt::format("/f{:02}", i), 64 << 10);
    index.add(fmt::format("f{:02}", i), 64 << 10);
  }
  Deliveries d;
  LoaderConfig c = two_ranks(d);  // 2 ranks, 2 epochs, buffered psync reads
  c.evict_before_epoch = true;
  c.drop_caches = true;
  c.measure_residency = true;
  c.drop_caches_file = dir.path + "/fake-drop_caches";
  write_file(c.drop_caches_file, 0);
  LoaderProgress progress;
  const LoaderResult kept = run_loader(index, c, &progress);
  REQUIRE(kept.samples == 24);
  CHECK(kept.cache_notes.empty());  // the drop "succeeded"
  REQUIRE(kept.epoch_resident_fraction.size() == 2);
  CHECK(kept.epoch_resident_fraction[1] == Approx(1.0));  // epoch 0's reads left in the cache: none evicted

  // Refused: every rank evicts its files, and the refusal is noted.
  Deliveries d2;
  LoaderConfig r = two_ranks(d2);
  r.evict_before_epoch = true;
  r.drop_caches = true;
  r.measure_residency = true;
  r.drop_caches_file = dir.path + "/no-such-dir/drop_caches";
  LoaderProgress p2;
  const LoaderResult evicted = run_loader(index, r, &p2);
  REQUIRE(evicted.samples == 24);
  CHECK(evicted.cache_notes.size() == 1);
  REQUIRE(evicted.epoch_resident_fraction.size() == 2);
  if (evicted.epoch_resident_fraction[0] > 0.5)
    WARN("this filesystem (" << dir.path << ") keeps evicted pages (tmpfs?): the eviction is not observable here");
  else CHECK(evicted.epoch_resident_fraction[1] < 0.5);
}
