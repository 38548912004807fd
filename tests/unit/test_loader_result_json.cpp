#include <catch2/catch.hpp>

#include <random>

#include "core/error.hpp"
#include "loader/loader_result_json.hpp"
#include "report/run_document.hpp"

using namespace ioprobe;

namespace {

LoaderResult host_part(int first_rank, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> lat(11.5, 1.0);
  LoaderResult res;
  for (int r = first_rank; r < first_rank + 2; ++r) {
    RankStats rk;
    rk.rank = r;
    rk.timeline = Timeline(0.25);
    rk.batches = 40;
    rk.compute_ns = 123456789 + r;
    rk.nominal_compute_ns = 120000000 + r;
    rk.elapsed_ns = 2'000'000'000 + r;
    rk.max_outstanding = 6;
    std::vector<WorkerStats> ws(2);
    for (int w = 0; w < 2; ++w) {
      ws[w].rank = r;
      ws[w].worker = w;
      ws[w].busy_ns = 1'000'000 * (w + 1);
      ws[w].cpu_work_ns = 777 + w;
      ws[w].cpu_list = "0-1";
      ws[w].numa = "not bound: one node";
    }
    for (int i = 0; i < 400; ++i) {
      const auto ns = static_cast<uint64_t>(lat(rng));
      WorkerStats& w = ws[static_cast<size_t>(i % 2)];
      w.file_latency.record(ns);
      w.open_latency.record(ns / 3);
      ++w.files;
      w.bytes += 4096;
      w.io_bytes += 8192;
      rk.batch_wait.record(ns / 7);
      rk.timeline.add(static_cast<int64_t>(i) * 5'000'000, 1, 4096, static_cast<int64_t>(ns / 7));
      ++rk.samples;
      rk.bytes += 4096;
      rk.wait_ns += static_cast<int64_t>(ns / 7);
    }
    rk.first_batch_ns = 5000 + r;
    res.merge(rank_result(rk, ws, 2'100'000'000 + first_rank, 1));
  }
  res.cpu_user_s = 0.123456789012345;
  res.cpu_sys_s = 0.1 + first_rank;
  res.stop = {.kind = LoaderStopKind::kCompleted};
  res.error_samples = {ErrorRecord{.err = ENOENT, .op = "open", .path = "a/b", .count = 3},
                       ErrorRecord{.op = "decode (libjpeg-turbo)", .path = "c\xff", .detail = "not a JPEG file"}};
  res.epoch_resident_fraction = {0.0, 0.25};
  res.residency_method = "mincore";
  res.cache_notes = {"drop_caches: not root"};
  return res;
}

}  // namespace

TEST_CASE("loader_result JSON: from_json(to_json(r)) equals r, and merges the same", "[loader_result][json]") {
  LoaderResult a = host_part(0, 11), b = host_part(2, 12);
  // Through text, as it travels between hosts.
  LoaderResult ra = loader_result_from_json(nlohmann::json::parse(loader_result_to_json(a).dump()));
  LoaderResult rb = loader_result_from_json(nlohmann::json::parse(loader_result_to_json(b).dump()));
  CHECK(loader_result_to_json(ra) == loader_result_to_json(a));  // every field, histograms and timelines included
  CHECK(ra.workers.size() == 4);
  CHECK(ra.ranks[1].rank == 1);
  CHECK(ra.cpu_user_s == a.cpu_user_s);
  const nlohmann::json via_adl = a;  // nlohmann's hooks give the same
  CHECK(loader_result_to_json(via_adl.get<LoaderResult>()) == loader_result_to_json(a));
  LoaderResult m = a, rm = ra;
  m.merge(b);
  rm.merge(rb);
  CHECK(rm.samples == m.samples);
  CHECK(rm.samples == 1600);
  CHECK(rm.elapsed_ns == m.elapsed_ns);
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    CHECK(rm.file_latency.percentile(p) == m.file_latency.percentile(p));
    CHECK(rm.batch_wait.percentile(p) == m.batch_wait.percentile(p));
  }
  REQUIRE(rm.timeline.points().size() == m.timeline.points().size());
  for (size_t i = 0; i < m.timeline.points().size(); ++i) {
    CHECK(rm.timeline.points()[i].samples == m.timeline.points()[i].samples);
    CHECK(rm.timeline.points()[i].wait_s == m.timeline.points()[i].wait_s);
  }
  // The document section built from either is the same, and reads back as the same value.
  CHECK(loader_results_json(rm) == loader_results_json(m));
  const LoaderResult back = run_results_from_json(nlohmann::json::parse(loader_results_json(m).dump()), "results");
  CHECK(loader_results_json(back) == loader_results_json(m));
}

TEST_CASE("loader_result JSON: a bad document is refused naming the key", "[loader_result][json]") {
  nlohmann::json j = loader_result_to_json(host_part(0, 1));
  nlohmann::json no_samples = j;
  no_samples.erase("samples");
  CHECK_THROWS_WITH(loader_result_from_json(no_samples), Catch::Contains("missing key 'samples'"));
  nlohmann::json no_busy = j;
  no_busy["workers"][1].erase("busy_ns");
  CHECK_THROWS_WITH(loader_result_from_json(no_busy), Catch::Contains("workers[1]: missing key 'busy_ns'"));
  nlohmann::json bad_type = j;
  bad_type["ranks"][0]["batches"] = "many";
  CHECK_THROWS_AS(loader_result_from_json(bad_type), UsageError);
  CHECK_THROWS_WITH(loader_result_from_json(bad_type),
                    Catch::Contains("loader result.ranks[0].batches: expected a non-negative integer"));
  nlohmann::json fraction = j;
  fraction["errors"] = 1.5;  // a count that is not an integer is mistyped, not truncated
  CHECK_THROWS_WITH(loader_result_from_json(fraction), Catch::Contains("loader result.errors: expected"));
  CHECK_THROWS_AS(loader_result_from_json(nlohmann::json::array()), UsageError);
}
