#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <random>
#include <string>

#include "core/error.hpp"
#include "loader/loader_result.hpp"

using namespace ioprobe;

namespace {

// A rank's part with `n` file reads of pseudo-random latency, one worker, one rank.
LoaderResult part(int rank, uint32_t seed, int n, int64_t elapsed_ns, uint32_t epochs,
                  LatencyHistogram* all = nullptr) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> lat(11.0, 1.2);  // ~60 us median, a long tail
  RankStats rk;
  rk.rank = rank;
  rk.timeline = Timeline(0.5);
  WorkerStats w;
  w.rank = rank;
  for (int i = 0; i < n; ++i) {
    const auto ns = static_cast<uint64_t>(lat(rng));
    w.file_latency.record(ns);
    w.open_latency.record(ns / 4);
    if (all) all->record(ns);
    ++w.files;
    w.bytes += 1000 + static_cast<uint64_t>(i);
    w.io_bytes += 4096;
    rk.batch_wait.record(ns / 2);
    rk.timeline.add(static_cast<int64_t>(i) * 10'000'000, 1, 1000 + static_cast<uint64_t>(i),
                    static_cast<int64_t>(ns / 2));
    ++rk.samples;
    rk.bytes += 1000 + static_cast<uint64_t>(i);
    rk.wait_ns += static_cast<int64_t>(ns / 2);
  }
  rk.first_batch_ns = 1000 * (rank + 1);
  return rank_result(rk, {w}, elapsed_ns, epochs);
}

}  // namespace

TEST_CASE("LoaderResult::merge: counts add, histograms add exactly, elapsed max, epochs min", "[loader_result]") {
  LatencyHistogram all;
  LoaderResult a = part(0, 1, 300, 2'000'000'000, 3, &all);
  LoaderResult b = part(1, 2, 500, 3'000'000'000, 2, &all);
  b.errors = 4;
  b.error_samples = {ErrorRecord{.err = ENOENT, .op = "open", .path = "x"}};
  b.partial = true;
  b.stop = loader_stop_interrupted(SIGINT);
  a.stop = {.kind = LoaderStopKind::kCompleted};
  a.cpu_user_s = 1.5;
  b.cpu_user_s = 2.0;
  LoaderResult m = a;
  m.merge(b);
  CHECK(m.samples == 800);
  CHECK(m.bytes == a.bytes + b.bytes);
  CHECK(m.io_bytes == 800 * 4096);
  CHECK(m.errors == 4);
  CHECK(m.elapsed_ns == 3'000'000'000);
  CHECK(m.epochs_completed == 2);
  CHECK(m.partial);
  CHECK(m.stop == loader_stop_interrupted(SIGINT));
  CHECK(to_string(m.stop) == "interrupted (SIGINT)");
  CHECK(m.cpu_user_s == Approx(3.5));
  CHECK(m.ranks.size() == 2);
  CHECK(m.workers.size() == 2);
  CHECK(m.workers[1].rank == 1);  // rank numbers kept as given
  CHECK(m.wait_ns == a.wait_ns + b.wait_ns);
  CHECK(m.first_batch_ns == 2000);
  REQUIRE(m.error_samples.size() == 1);
  CHECK(m.error_samples[0].same_failure(ErrorRecord{.err = ENOENT, .op = "open", .path = "x"}));
  // Histograms add exactly: the merged one is the histogram of all values.
  CHECK(m.file_latency.count() == all.count());
  CHECK(m.file_latency.buckets() == all.buckets());
  CHECK(m.file_latency.min() == all.min());
  CHECK(m.file_latency.max() == all.max());
  CHECK(m.file_latency.mean() == all.mean());
  for (double p : {0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) CHECK(m.file_latency.percentile(p) == all.percentile(p));
  CHECK(m.batch_wait.count() == 800);
  // Timelines add interval by interval.
  uint64_t tl_samples = 0;
  for (const auto& p : m.timeline.points()) tl_samples += p.samples;
  CHECK(tl_samples == 800);
  REQUIRE(m.timeline.points().size() == b.timeline.points().size());
  CHECK(m.timeline.points()[0].samples == a.timeline.points()[0].samples + b.timeline.points()[0].samples);
}

TEST_CASE("LoaderResult::merge: empty start, bounded error samples, notes once, interval mismatch", "[loader_result]") {
  LoaderResult a = part(0, 3, 10, 1'000'000'000, 1);
  LoaderResult m;
  m.merge(a);
  CHECK(m.samples == a.samples);
  CHECK(m.epochs_completed == 1);  // not min(0, 1): an empty result takes the other's values
  CHECK(m.timeline.interval_ns() == 500'000'000);

  for (int i = 0; i < 8; ++i) a.error_samples.push_back({.err = EIO, .op = "read", .path = "a" + std::to_string(i)});
  a.cache_notes = {"drop_caches: not root"};
  LoaderResult b = part(1, 4, 10, 1'000'000'000, 1);
  for (int i = 0; i < 8; ++i) b.error_samples.push_back({.err = EIO, .op = "read", .path = "b" + std::to_string(i)});
  b.error_samples[7].path = "a0";  // the same failure as a's first: counted there, not listed twice
  b.cache_notes = {"drop_caches: not root", "other"};
  a.merge(b);
  CHECK(a.error_samples.size() == kMaxErrorSamples);
  CHECK(a.error_samples.back().path == "b1");
  CHECK(a.error_samples.front().count == 2);
  CHECK(a.cache_notes == std::vector<std::string>{"drop_caches: not root", "other"});

  LoaderResult c = part(2, 5, 10, 1'000'000'000, 1);
  c.timeline = Timeline(1.0);
  c.timeline.add(0, 1, 1, 0);
  const uint64_t before = a.samples;
  CHECK_THROWS_AS(a.merge(c), UsageError);
  CHECK(a.samples == before);  // nothing half-merged
}

TEST_CASE("LoaderResult::merge: the failed-file count stays exact only while one part failed", "[loader_result]") {
  LoaderResult a, b, clean;
  a.ranks.resize(1);
  b.ranks.resize(1);
  clean.ranks.resize(1);
  a.errors = 30;
  a.error_files = 15;
  a.error_files_exact = true;
  b.errors = 8;
  b.error_files = 4;
  b.error_files_exact = true;
  LoaderResult m = clean;
  m.merge(a);
  CHECK(m.error_files == 15);
  CHECK(m.error_files_exact);
  m.merge(clean);
  CHECK(m.error_spread().files == 15);
  CHECK(m.error_spread().complete);
  // Both failed: a file may have failed in both, so the larger count is a lower bound.
  m.merge(b);
  CHECK(m.errors == 38);
  CHECK(m.error_files == 15);
  CHECK_FALSE(m.error_files_exact);
  CHECK(failed_reads_text(m.errors, m.error_spread()) == "38 failed reads of at least 15 files");
}

TEST_CASE("rank_result: totals computed from the rank and its workers", "[loader_result]") {
  RankStats rk;
  rk.samples = 7;
  rk.bytes = 70;
  WorkerStats w1, w2;
  w1.errors = 1;
  w1.io_bytes = 100;
  w1.file_latency.record(5);
  w2.io_bytes = 50;
  w2.file_latency.record(500);
  LoaderResult r = rank_result(rk, {w1, w2}, 42, 3);
  CHECK(r.samples == 7);
  CHECK(r.bytes == 70);
  CHECK(r.errors == 1);
  CHECK(r.io_bytes == 150);
  CHECK(r.file_latency.count() == 2);
  CHECK(r.elapsed_ns == 42);
  CHECK(r.epochs_completed == 3);
}
