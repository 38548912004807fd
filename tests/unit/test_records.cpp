// Datasets whose samples are records inside larger files: shard dealing (IterableDataset),
// the token sampler's offsets, the record index on disk, and the positional reader.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "core/error.hpp"
#include "dataset/generator.hpp"
#include "dataset/record_layout.hpp"
#include "engine/range_reader.hpp"
#include "loader/sampler.hpp"
#include "loader/shard_plan.hpp"

using namespace ioprobe;

namespace {
std::string temp_dir() {
  char tmpl[] = "/tmp/ioprobe-records-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}
}  // namespace

TEST_CASE("shards are dealt rank-major then worker: every shard once per epoch across ranks x workers", "[shards]") {
  for (uint64_t n : {1ULL, 7ULL, 64ULL, 1000ULL})
    for (uint32_t world : {1u, 2u, 3u})
      for (uint32_t workers : {1u, 4u, 5u}) {
        std::map<uint64_t, int> seen;
        for (uint32_t r = 0; r < world; ++r)
          for (uint32_t w = 0; w < workers; ++w)
            for (uint64_t s : shards_for_worker(n, true, 11, 2, r, world, w, workers)) ++seen[s];
        REQUIRE(seen.size() == n);
        for (const auto& [s, count] : seen) REQUIRE(count == 1);
      }
  // The convention itself: position p of the epoch's order goes to rank p % world, then worker
  // (p / world) % workers (webdataset split_by_node, then split_by_worker).
  const auto order = sample_order(20, true, 5, 1);
  const auto mine = shards_for_worker(20, true, 5, 1, /*rank=*/1, /*world=*/2, /*worker=*/2, /*workers=*/3);
  REQUIRE(mine.size() == 3);  // positions 5, 11, 17
  CHECK(mine[0] == order[5]);
  CHECK(mine[1] == order[11]);
  CHECK(mine[2] == order[17]);
  // Unshuffled: the same dealing over 0..n-1.
  CHECK(shards_for_worker(10, false, 5, 0, 0, 2, 1, 2) == std::vector<uint64_t>{2, 6});
}

TEST_CASE("shard order is shuffled per epoch and reproducible per seed", "[shards]") {
  auto a0 = shards_for_worker(256, true, 42, 0, 0, 1, 0, 1);
  auto a1 = shards_for_worker(256, true, 42, 1, 0, 1, 0, 1);
  auto b0 = shards_for_worker(256, true, 42, 0, 0, 1, 0, 1);
  auto c0 = shards_for_worker(256, true, 43, 0, 0, 1, 0, 1);
  CHECK(a0 == b0);
  CHECK(a0 != a1);
  CHECK(a0 != c0);
  std::vector<uint64_t> sorted = a0;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t i = 0; i < sorted.size(); ++i) REQUIRE(sorted[i] == i);
  // Each worker's share changes between epochs too.
  CHECK(shards_for_worker(256, true, 42, 0, 1, 2, 3, 4) != shards_for_worker(256, true, 42, 1, 1, 2, 3, 4));
}

TEST_CASE("iterable batches: whole batches per worker, round-robin, exhausted workers skipped", "[shards]") {
  // Worker 0 has 10 records, worker 1 has 3, worker 2 has 0; batch 4.
  auto order = iterable_batch_order({10, 3, 0}, 4, false);
  REQUIRE(order.size() == 4);
  CHECK(order[0].worker == 0);
  CHECK(order[0].begin == 0);
  CHECK(order[0].end == 4);
  CHECK(order[1].worker == 1);
  CHECK(order[1].end == 3);  // worker 1's only, partial, batch
  CHECK(order[2].worker == 0);
  CHECK(order[2].begin == 4);
  CHECK(order[3].worker == 0);
  CHECK(order[3].begin == 8);
  CHECK(order[3].end == 10);
  auto dropped = iterable_batch_order({10, 3, 0}, 4, true);
  REQUIRE(dropped.size() == 2);  // each worker drops its own last partial batch
  CHECK(dropped[0].worker == 0);
  CHECK(dropped[1].worker == 0);
  CHECK(dropped[1].end == 8);
  // Every record of every worker lands in exactly one batch without drop_last.
  std::vector<uint64_t> counts{1251, 1251, 2502, 7};
  uint64_t covered = 0;
  std::vector<uint64_t> next(counts.size(), 0);
  for (const auto& b : iterable_batch_order(counts, 400, false)) {
    REQUIRE(b.begin == next[b.worker]);  // a worker's batches come in stream order
    next[b.worker] = b.end;
    covered += b.end - b.begin;
  }
  CHECK(covered == 1251 + 1251 + 2502 + 7);
}

TEST_CASE("token samples: offsets in range, on sample boundaries, aligned span as stated", "[token]") {
  const uint64_t seq = 2048, tb = 4, per_file = 1000, files = 3;
  RecordLayout L(DatasetKind::kToken, files, per_file, seq * tb);
  CHECK(L.total_records() == 3000);
  CHECK(L.file_bytes(2) == per_file * seq * tb);
  for (uint64_t s : sample_order(L.total_records(), true, 7, 0)) {
    RecordPlace p = L.locate_fixed(s);
    REQUIRE(p.file < files);
    REQUIRE(p.offset + p.length <= L.file_bytes(p.file));
    REQUIRE(p.offset % (seq * tb) == 0);
    REQUIRE(p.offset % 4096 == 0);  // 2,048 x 4 B = 8 KiB samples are 4 KiB-aligned: no bounce read
    REQUIRE(p.length == seq * tb);
  }
}

TEST_CASE("sharded generation writes the record index; the reader sees the same boundaries", "[shards][dataset]") {
  std::string root = temp_dir();
  DatasetSpec s;
  s.kind = DatasetKind::kSharded;
  s.files = 5;
  s.records_per_file = 37;
  s.dist = SizeDist::kLognormal;
  s.size_mean = 3000;
  s.size_stdev = 1500;
  s.size_min = 100;
  s.size_max = 20000;
  s.seed = 3;
  GenerateOptions g;
  g.progress = false;
  auto a = ensure_dataset(root + "/ds", s, g);
  a.lock.reset();  // its shared lock would make this process's next call wait for itself
  REQUIRE(a.action == "generated");
  REQUIRE(a.index.size() == 5);
  REQUIRE(a.layout.kind() == DatasetKind::kSharded);
  REQUIRE(a.layout.fixed_size() == 0);
  const auto sizes = draw_record_sizes(s);
  uint64_t total = 0;
  for (uint64_t f = 0; f < 5; ++f) {
    struct stat st {};
    REQUIRE(stat((root + "/ds/" + a.index.path(f)).c_str(), &st) == 0);
    CHECK(static_cast<uint64_t>(st.st_size) == a.layout.file_bytes(f));
    for (uint64_t r = 0; r < 37; ++r) REQUIRE(a.layout.record_size(f, r) == sizes[f * 37 + r]);
    total += static_cast<uint64_t>(st.st_size);
  }
  CHECK(total == a.bytes);
  struct stat st {};
  CHECK(stat((root + "/ds/" + kRecordListName).c_str(), &st) == 0);
  CHECK(st.st_size == 5 * 37 * 4);
  auto b = ensure_dataset(root + "/ds", s, g);  // reused: the index is read back and checked
  b.lock.reset();
  CHECK(b.action == "reused");
  for (uint64_t f = 0; f < 5; ++f)
    for (uint64_t r = 0; r < 37; ++r) REQUIRE(b.layout.record_size(f, r) == a.layout.record_size(f, r));
  // A tampered index is refused, not trusted.
  { std::ofstream(root + "/ds/" + kRecordListName, std::ios::binary | std::ios::in) << "XXXX"; }
  CHECK_THROWS_AS(ensure_dataset(root + "/ds", s, g), UsageError);
  std::system(("rm -rf " + root).c_str());
}

TEST_CASE("range reader: exact bytes, short at end of file, O_DIRECT bounce for unaligned requests", "[engine]") {
  std::string root = temp_dir();
  const std::string path = root + "/f.bin";
  std::string data(3 * 4096 + 100, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  std::ofstream(path, std::ios::binary) << data;
  for (const char* engine : {"psync", "io_uring"})
    for (bool direct : {false, true}) {
      std::unique_ptr<RangeReader> r;
      try {
        r = make_range_reader(engine_kind_from_string(engine).value(), direct);
      } catch (const Error& e) {
        WARN(std::string("skipped ") + engine + ": " + e.what());
        continue;
      }
      int64_t ns = 0;
      int fd = r->open(AT_FDCWD, path.c_str(), &ns);
      if (fd == -EINVAL && direct) {
        WARN("O_DIRECT refused by the filesystem of /tmp; skipped");
        continue;
      }
      REQUIRE(fd >= 0);
      RangeReadResult a = r->read(fd, 4096, 4096);
      CHECK(a.err == 0);
      CHECK(a.bytes == 4096);
      RangeReadResult b = r->read(fd, 1000, 2000);  // unaligned: a bounce read under O_DIRECT
      CHECK(b.err == 0);
      CHECK(b.bytes == 2000);
      CHECK(b.io_bytes == (direct ? 4096 : 2000));
      RangeReadResult c = r->read(fd, 3 * 4096, 1 << 20);  // past the end: short
      CHECK(c.err == 0);
      CHECK(c.bytes == 100);
      CHECK(r->close(fd, &ns) == 0);
    }
  std::system(("rm -rf " + root).c_str());
}
