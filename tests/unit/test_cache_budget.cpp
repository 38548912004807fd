#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/page_cache.hpp"
#include "ingest/analysis.hpp"
#include "topology/host.hpp"

using namespace ioprobe;

namespace {
const std::string kCgroups = std::string(IOPROBE_FIXTURES) + "/cgroup";
}  // namespace

TEST_CASE("cgroup v2: the smallest memory.max on the path up to the root", "[cache]") {
  // app.scope says "max"; its parent user.slice holds 512 MiB, which bounds it.
  CgroupMemoryLimit l = read_cgroup_memory_limit(kCgroups + "/v2");
  CHECK(l.bytes == 536870912ULL);
  CHECK(l.source == "cgroup v2 memory.max of /user.slice");
}

TEST_CASE("cgroup v1: the memory controller's memory.limit_in_bytes is read", "[cache]") {
  // cpu,cpuacct and name=systemd lines are skipped; the parents' 2^63-4096 means no limit.
  CgroupMemoryLimit l = read_cgroup_memory_limit(kCgroups + "/v1");
  CHECK(l.bytes == 268435456ULL);
  CHECK(l.source == "cgroup v1 memory.limit_in_bytes of /docker/abc");
}

TEST_CASE("cgroup v1 in a cgroup namespace: the mount's top directory holds the limit", "[cache]") {
  CgroupMemoryLimit l = read_cgroup_memory_limit(kCgroups + "/v1-ns");
  CHECK(l.bytes == 1073741824ULL);
}

TEST_CASE("no cgroup limit, and no cgroup files at all", "[cache]") {
  CHECK(read_cgroup_memory_limit(kCgroups + "/none").bytes == 0);
  CHECK(read_cgroup_memory_limit(kCgroups + "/does-not-exist").bytes == 0);
}

TEST_CASE("the cache budget is RAM or the cgroup limit, whichever is smaller", "[cache]") {
  HostInfo h;
  h.memory_bytes = 16ULL << 30;
  std::string src;
  CHECK(cache_budget_bytes(h, &src) == (16ULL << 30));
  CHECK(src == "RAM");
  h.cgroup_memory_limit_bytes = 512ULL << 20;
  h.cgroup_memory_limit_source = "cgroup v1 memory.limit_in_bytes of /x";
  CHECK(cache_budget_bytes(h, &src) == (512ULL << 20));
  CHECK(src == h.cgroup_memory_limit_source);
  h.cgroup_memory_limit_bytes = 64ULL << 30;  // a limit above RAM does not bind
  CHECK(cache_budget_bytes(h, &src) == (16ULL << 30));
}

TEST_CASE("epochs are labelled by measured residency", "[cache]") {
  CHECK(std::string(residency_source(1.0)) == "page cache");
  CHECK(std::string(residency_source(kPageCacheResidency)) == "page cache");
  CHECK(std::string(residency_source(0.94)) == "mixed");
  CHECK(std::string(residency_source(0.43)) == "mixed");
  CHECK(std::string(residency_source(kDeviceResidency)) == "device");
  CHECK(std::string(residency_source(0.0)) == "device");
}

TEST_CASE("the verdict says 'from the page cache' only when residency says so", "[cache]") {
  CHECK(cache_source_note({1.0, 0.99, 0.97}) == " [measured from the page cache, not the device]");
  // The field report: 0% / 43% / 45% was called "measured from the page cache".
  const std::string mixed = cache_source_note({0.0, 0.43, 0.45});
  CHECK(mixed.find("page cache, not the device") == std::string::npos);
  CHECK(mixed.find("mixed: 0-45%") != std::string::npos);
  const std::string device = cache_source_note({0.0, 0.01});
  CHECK(device.find("read from the device") != std::string::npos);
  CHECK(cache_source_note({}).find("not measured") != std::string::npos);
}

TEST_CASE("a warm run's verdict carries the residency note", "[cache]") {
  LoaderResult r;
  r.elapsed_ns = 2000000000;
  r.samples = 100;
  r.bytes = 100 << 20;
  r.epoch_resident_fraction = {0.0, 0.43, 0.45};
  RankStats rk;
  rk.elapsed_ns = r.elapsed_ns;
  rk.compute_ns = rk.nominal_compute_ns = 1000000000;
  r.ranks.push_back(rk);
  r.workers.emplace_back();
  Demand d;
  d.samples_per_s_per_gpu = 1000;
  AnalysisInputs in;
  in.buffered_warm = true;
  IngestResult ing = analyze_ingest(r, d, in);
  CHECK(ing.verdict_text.find("measured from the page cache") == std::string::npos);
  CHECK(ing.verdict_text.find("mixed") != std::string::npos);
}

TEST_CASE("a run that read no sample and had no error says why, not 'see the errors above'", "[cache]") {
  LoaderResult r;
  r.elapsed_ns = 2000000000;
  r.stop = {.kind = LoaderStopKind::kDuration};
  RankStats rk;
  rk.elapsed_ns = r.elapsed_ns;
  r.ranks.push_back(rk);
  r.workers.emplace_back();
  Demand d;
  d.samples_per_s_per_gpu = 1000;
  IngestResult ing = analyze_ingest(r, d, AnalysisInputs{});
  CHECK(ing.verdict == "failed");
  CHECK(ing.verdict_text.find("errors above") == std::string::npos);
  CHECK(ing.verdict_text.find("duration reached") != std::string::npos);
  r.errors = 3;
  CHECK(analyze_ingest(r, d, AnalysisInputs{}).verdict_text.find("3 reads failed") != std::string::npos);
}
