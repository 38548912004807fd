// A synthetic dataset's size before it is planned (dataset/footprint.hpp): the sizes drawn one at
// a time equal the generator's, the exact and estimated totals, the early space refusal (before
// planning, before an old dataset is removed), and gen's one-line summary.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <string>

#include "core/error.hpp"
#include "dataset/footprint.hpp"
#include "dataset/generator.hpp"
#include "dataset/manifest.hpp"
#include "dataset/spec.hpp"
#include "report/run_text.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

namespace {

DatasetSpec lognormal_spec(uint64_t files) {
  DatasetSpec s;
  s.preset = "test";
  s.files = files;
  s.dirs = 4;
  s.dist = SizeDist::kLognormal;
  s.size_mean = 110000;
  s.size_stdev = 60000;
  s.size_min = 1024;
  s.size_max = 4 << 20;
  s.seed = 42;
  return s;
}

uint64_t rounded(uint64_t b) { return (b + 4095) / 4096 * 4096; }

bool exists(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("SizeStream draws the generator's sizes one at a time", "[dataset][footprint]") {
  DatasetSpec s = lognormal_spec(5000);
  const std::vector<uint64_t> all = draw_file_sizes(s);
  SizeStream stream(s);
  for (uint64_t v : all) REQUIRE(stream.next() == v);
  s.dist = SizeDist::kNormal;
  const std::vector<uint64_t> normal = draw_file_sizes(s);
  SizeStream ns(s);
  for (uint64_t v : normal) REQUIRE(ns.next() == v);
  CHECK_FALSE(ns.constant());
  s.dist = SizeDist::kFixed;
  CHECK(SizeStream(s).constant());
  DatasetSpec t;
  t.kind = DatasetKind::kToken;
  t.files = 2;
  t.records_per_file = 3;
  t.seq_len = 2048;
  t.token_bytes = 4;
  CHECK(draw_record_sizes(t) == std::vector<uint64_t>(6, 8192));
  CHECK(SizeStream(t).constant());
}

TEST_CASE("the sizes drawn are those earlier versions generated (a reused dataset keeps its sizes)",
          "[dataset][footprint]") {
  // `ioprobe gen --files 8 --dirs 1 --file-size 114660 --file-size-stdev 57330 --file-size-min 1KiB
  // --file-size-max 2MiB --file-size-dist D --seed 0` of main before SizeStream, ls -l of its files.
  DatasetSpec s = lognormal_spec(8);
  s.size_mean = 114660;
  s.size_stdev = 57330;
  s.size_max = 2 << 20;
  s.seed = 0;
  CHECK(draw_file_sizes(s) == std::vector<uint64_t>{253147, 38403, 167278, 68630, 129100, 72520, 92772, 49195});
  s.dist = SizeDist::kNormal;
  CHECK(draw_file_sizes(s) == std::vector<uint64_t>{224321, 1024, 174038, 65911, 142597, 72603, 102492, 25504});
}

TEST_CASE("exact_footprint: every file's size rounded to 4 KiB, in constant memory; estimate from the first sizes",
          "[dataset][footprint]") {
  const DatasetSpec s = lognormal_spec(200000);
  const std::vector<uint64_t> sizes = draw_file_sizes(s);
  uint64_t bytes = 0, disk = 0;
  for (uint64_t v : sizes) bytes += v, disk += rounded(v);
  const DatasetFootprint f = exact_footprint(s);
  CHECK(f.exact);
  CHECK_FALSE(f.stopped);
  CHECK(f.files == 200000);
  CHECK(f.bytes == bytes);
  CHECK(f.disk_bytes == disk);
  const DatasetFootprint e = estimate_footprint(s, 65536);
  CHECK_FALSE(e.exact);
  CHECK(e.sampled == 65536);
  CHECK(std::abs(static_cast<double>(e.disk_bytes) / static_cast<double>(disk) - 1) < 0.02);
  // A dataset no larger than the sample is measured, not estimated.
  CHECK(estimate_footprint(lognormal_spec(1000), 65536).exact);
  // Equal sizes: exact at once, whatever the count.
  DatasetSpec fixed = lognormal_spec(1000000000000ULL);
  fixed.dist = SizeDist::kFixed;
  fixed.size_mean = 5000;
  const DatasetFootprint ff = estimate_footprint(fixed);
  CHECK(ff.exact);
  CHECK(ff.bytes == 5000ULL * 1000000000000ULL);
  CHECK(ff.disk_bytes == 8192ULL * 1000000000000ULL);
  // Records in files: a shard is its records back to back.
  DatasetSpec sh = lognormal_spec(10);
  sh.kind = DatasetKind::kSharded;
  sh.records_per_file = 100;
  const std::vector<uint64_t> rec = draw_record_sizes(sh);
  uint64_t shard_disk = 0, shard_bytes = 0;
  for (int f = 0; f < 10; ++f) {
    uint64_t b = 0;
    for (int r = 0; r < 100; ++r) b += rec[f * 100 + r];
    shard_bytes += b, shard_disk += rounded(b);
  }
  CHECK(exact_footprint(sh).bytes == shard_bytes);
  CHECK(exact_footprint(sh).disk_bytes == shard_disk);
  // The stop callback ends the drawing.
  int polls = 0;
  const DatasetFootprint cut = exact_footprint(lognormal_spec(10000000), [&] { return ++polls == 3; });
  CHECK(cut.stopped);
  CHECK(polls == 3);
}

TEST_CASE("ensure_dataset: a dataset larger than the filesystem is refused before it is planned",
          "[dataset][footprint]") {
  TempDir t("footprint");
  GenerateOptions g;
  g.progress = false;
  // 10^11 files of ~110 kB: planning them would need terabytes of memory; the estimate refuses.
  try {
    ensure_dataset(t.path + "/ds", lognormal_spec(100000000000ULL), g);
    FAIL("no refusal");
  } catch (const UsageError&) {
    FAIL("a usage error, not the space refusal");
  } catch (const Error& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK_THAT(m, Catch::Contains("not enough space") && Catch::Contains("100,000,000,000 files of about") &&
                      Catch::Contains("estimated from the first 65,536 sizes drawn") &&
                      Catch::Contains("nothing was written"));
  }
  CHECK_FALSE(exists(t.path + "/ds"));  // the directory it made is gone again

  // A complete dataset there stays complete and whole when its replacement does not fit: the
  // space is checked before its files are removed.
  GenerateOptions keep = g;
  DatasetOutcome small = ensure_dataset(t.path + "/ds", lognormal_spec(20), g);
  small.lock.reset();
  keep.regenerate = true;
  DatasetSpec huge = lognormal_spec(20);
  huge.dist = SizeDist::kFixed;
  huge.files = 1000000000000ULL;
  CHECK_THROWS_AS(ensure_dataset(t.path + "/ds", huge, keep), Error);
  const std::optional<Manifest> m = read_manifest(t.path + "/ds");
  REQUIRE(m);
  CHECK(m->complete);
  for (size_t i = 0; i < small.index.size(); ++i) CHECK(exists(t.path + "/ds/" + small.index.path(i)));
  DatasetOutcome again = ensure_dataset(t.path + "/ds", lognormal_spec(20), g);
  CHECK(again.action == "reused");
}

TEST_CASE("gen's summary line: one sentence, also for the first files of a larger dataset", "[dataset][report]") {
  TempDir t("genline");
  GenerateOptions g;
  g.progress = false;
  DatasetOutcome big = ensure_dataset(t.path + "/ds", lognormal_spec(40), g);
  big.lock.reset();
  DatasetOutcome sub = ensure_dataset(t.path + "/ds", lognormal_spec(10), g);
  CHECK(sub.action == "reused: the first 10 of its 40 files");
  CHECK(sub.source_files == 40);
  const DatasetSection ds{.preset = "imagenet-like",
                          .root = "/data/x",
                          .action = sub.action,
                          .generate_s = 0.0,
                          .source_files = sub.source_files};
  const std::string line = render_gen_line(ds, 10, 1048576);
  CHECK(line == "imagenet-like: reused the first 10 of the 40 files in '/data/x', 1.00 MiB (1,048,576 B)");
  const DatasetSection gen{.preset = "imagenet-like", .root = "/d", .action = "generated", .generate_s = 2.0};
  CHECK_THAT(render_gen_line(gen, 2000, 2000000),
             Catch::StartsWith("imagenet-like: generated 2,000 files, ") && Catch::Contains(" in '/d' in 2.00 s ("));
}
