#include <catch2/catch.hpp>

#include <random>

#include "core/error.hpp"
#include "report/device_io_report.hpp"
#include "report/document_merge.hpp"
#include "report/raw_document.hpp"
#include "report/run_document.hpp"
#include "stats/latency_json.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

LatencyHistogram lat(uint32_t seed, int n, double mu) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(mu, 0.8);
  LatencyHistogram h;
  for (int i = 0; i < n; ++i) h.record(static_cast<uint64_t>(d(rng)));
  return h;
}

// A whole raw document (its typed reader refuses one without every section), created at its own
// second so that no two are taken for the same result.
json raw_doc(const char* host, uint64_t ios, double elapsed_s, const LatencyHistogram& h) {
  static int created = 0;
  RawDocument d;
  d.header.created_utc = "2026-12-07T04:00:" + std::to_string(10 + created++ % 50) + "Z";
  d.header.host.hostname = host;
  d.raw.rw = "randread";
  d.raw.bs = 4096;
  RawResultsSection& r = d.raw.results;
  r.ios = ios;
  r.bytes = ios * 4096;
  r.elapsed_s = elapsed_s;
  r.latency = h;
  r.cpu_user_s = 0.5;
  r.cpu_sys_s = 0.25;
  return raw_document_json(d);
}

// A whole run document (its typed reader refuses one without every section), created at its own
// second so that no two are taken for the same result.
json run_doc(const char* host, const LoaderResult& r) {
  static int created = 0;
  RunDocument d;
  d.header.created_utc = "2026-12-07T03:00:" + std::to_string(10 + created++ % 50) + "Z";
  d.header.host.hostname = host;
  d.target.reading.emplace();
  d.target.run.emplace();
  d.loader.gpus = 2;
  d.results.loader = r;
  d.ingest.result = IngestResult{};
  d.ingest.result->verdict = "none";
  d.warnings = {"same warning"};
  return run_document_json(d);
}

LoaderResult run_part(uint32_t seed, int64_t elapsed_ns) {
  RankStats rk;
  rk.timeline = Timeline(1.0);
  WorkerStats w;
  w.file_latency = lat(seed, 500, 11.0);
  w.open_latency = lat(seed + 1, 500, 9.0);
  rk.batch_wait = lat(seed + 2, 50, 12.0);
  rk.samples = 500;
  rk.bytes = 500 * 1000;
  rk.timeline.add(100, 300, 300'000, 1000);
  rk.timeline.add(1'500'000'000, 200, 200'000, 1000);
  return rank_result(rk, {w}, elapsed_ns, 1);
}

}  // namespace

TEST_CASE("merge_documents: raw documents sum I/Os, take the longest elapsed, add latency buckets", "[merge]") {
  const LatencyHistogram a = lat(1, 4000, 8.0), b = lat(2, 1000, 10.0);
  LatencyHistogram all = a;
  all.merge(b);
  const MergedDocument merged = merge_documents({raw_doc("h1", 4000, 2.0, a), raw_doc("h2", 1000, 4.0, b)},
                                                {"a.json", "b.json"});
  json m = merged_document_json(merged);
  const json& r = m["raw"]["results"];
  CHECK(r["ios"] == 5000);
  CHECK(r["elapsed_s"] == 4.0);
  CHECK(r["iops"].get<double>() == Approx(1250.0));
  CHECK(r["latency_us"]["count"] == 5000);
  CHECK(r["latency_us"]["p99"].get<double>() == all.percentile(99) / 1e3);
  CHECK(r["cpu"]["user_s"].get<double>() == Approx(1.0));
  REQUIRE(m["sources"].size() == 2);
  CHECK(m["sources"][1]["hostname"] == "h2");
  CHECK(m["sources"][1]["iops"].get<double>() == Approx(250.0));
  CHECK_THAT(render_merged_raw_text(std::get<RawDocument>(merged.doc)),
             Catch::Contains("merged from 2 documents") && Catch::Contains("h2"));
  // The merged document reads back as written, its sources included, and merges again.
  CHECK(raw_document_json(raw_document_from_json(m, "'m.json'")) == m);
  CHECK_NOTHROW(merge_documents({m, raw_doc("h3", 10, 1.0, a)}, {"m.json", "c.json"}));
}

TEST_CASE("merge_documents: raw documents of different block sizes are warned about, naming files and field",
          "[merge]") {
  const LatencyHistogram a = lat(1, 100, 8.0), b = lat(2, 100, 8.0);
  json other = raw_doc("h2", 100, 1.0, b);
  other["raw"]["bs"] = 1000;
  const MergedDocument merged = merge_documents({raw_doc("h1", 100, 1.0, a), other}, {"a.json", "b.json"});
  REQUIRE(merged.workload_warnings.size() == 1);
  const json m = merged_document_json(merged);
  REQUIRE(m["warnings"].size() >= 1);
  CHECK_THAT(m["warnings"][0].get<std::string>(),
             Catch::Contains("a.json and b.json measured different workloads (raw.bs 4.00 KiB (4,096 B) and 1000 B)"));
  CHECK(m["warnings"][0] == merged.workload_warnings[0]);
  CHECK_THAT(render_merged_raw_text(std::get<RawDocument>(merged.doc)),
             Catch::Contains("raw.bs 4.00 KiB (4,096 B) and 1000 B"));
}

TEST_CASE("merge_documents: run documents merge their results exactly and drop ingest", "[merge]") {
  LoaderResult a = run_part(10, 2'000'000'000), b = run_part(20, 3'000'000'000);
  LoaderResult both = a;
  both.merge(b);
  json m = merged_document_json(merge_documents({run_doc("h1", a), run_doc("h2", b)}, {"a.json", "b.json"}));
  CHECK(m["results"] == loader_results_json(both));  // the document merge is the value merge
  CHECK(m["loader"]["gpus"] == 4);
  CHECK(m["ingest"]["available"] == false);
  CHECK(m["sources"][0]["file"] == "a.json");
  CHECK(m["warnings"].size() == 2);  // the inputs' shared warning once, and the merge note
}

TEST_CASE("run merge: one rule for live parts and saved documents, decode counters and epochs included",
          "[merge][loader_result]") {
  // Two hosts' parts with --decode jpeg counters and per-epoch counts: the documents read back
  // and merged must give what the parts merged as values give.
  LoaderResult a = run_part(10, 2'000'000'000), b = run_part(20, 3'000'000'000);
  a.workers[0].decoded = 480;
  a.workers[0].decode_errors = 20;
  a.workers[0].decode_cpu_ns = 1'500'000'000;
  a.workers[0].decoded_pixels = 480ULL * 150'000;
  b.workers[0].decoded = 300;
  b.workers[0].decode_cpu_ns = 900'000'000;
  b.workers[0].decoded_pixels = 300ULL * 150'000;
  a.epoch_samples = {300, 200};
  a.epoch_bytes = {300'000, 200'000};
  a.epoch_ns = {1'000'000'000, 1'000'000'000};
  b.epoch_samples = {250, 250};
  b.epoch_bytes = {250'000, 250'000};
  b.epoch_ns = {1'200'000'000, 1'800'000'000};
  LoaderResult both = a;
  both.merge(b);
  const json jb = loader_results_json(both);
  REQUIRE(jb.contains("decode"));
  CHECK(jb["decode"]["samples"] == 780);
  CHECK(jb["decode"]["errors"] == 20);
  CHECK(jb["decode"]["cpu_s"].get<double>() == Approx(2.4));
  CHECK(both.epoch_samples == std::vector<uint64_t>{550, 450});
  CHECK(both.epoch_ns == std::vector<int64_t>{1'200'000'000, 1'800'000'000});

  auto saved = [](const LoaderResult& r) {
    json res = loader_results_json(r);
    res["epochs"] = epochs_json(r, {});
    return res;
  };
  LoaderResult merged = run_results_from_json(saved(a), "'a.json'.results");
  merged.merge(run_results_from_json(saved(b), "'b.json'.results"));
  CHECK(loader_results_json(merged) == jb);
  CHECK(merged.epoch_samples == both.epoch_samples);
  CHECK(merged.epoch_bytes == both.epoch_bytes);
  CHECK(merged.epoch_ns == both.epoch_ns);
  json m = merged_document_json(merge_documents({run_doc("h1", a), run_doc("h2", b)}, {"a.json", "b.json"}));
  CHECK(m["results"] == jb);
  // A document that kept only the decode totals (no per-worker counters) still adds them.
  json old = loader_results_json(a);
  for (auto& w : old["workers"])
    for (const char* k : {"decoded", "decode_errors", "decode_cpu_s", "decoded_pixels"}) w.erase(k);
  CHECK(loader_results_json(run_results_from_json(old, "old"))["decode"] == loader_results_json(a)["decode"]);
}

TEST_CASE("merge_documents: refusals name the file and the reason", "[merge]") {
  LoaderResult a = run_part(10, 2'000'000'000);
  const json run = run_doc("h1", a);
  json old = run;
  old["results"]["batch_wait_us"].erase("buckets");
  CHECK_THROWS_WITH(merge_documents({run, old}, {"a.json", "old.json"}),
                    Catch::Contains("'old.json'.results.batch_wait_us: missing key 'buckets'") &&
                        Catch::Contains("written before"));
  json raw_bad = raw_doc("h", 1, 1, lat(1, 1, 8));
  raw_bad["raw"]["results"]["ios"] = 1.5;
  CHECK_THROWS_WITH(merge_documents({raw_doc("h", 1, 1, lat(1, 1, 8)), raw_bad}, {"r.json", "bad.json"}),
                    Catch::Contains("'bad.json'.raw.results.ios: expected a non-negative integer"));
  CHECK_THROWS_WITH(merge_documents({run, raw_doc("h", 1, 1, lat(1, 1, 8))}, {"a.json", "r.json"}),
                    Catch::Contains("only documents of one kind merge"));
  // A raw document missing a field is refused naming its path, not read as 0.
  json raw_cut = raw_doc("h", 1, 1, lat(1, 1, 8));
  raw_cut["raw"]["results"].erase("errors");
  CHECK_THROWS_WITH(merge_documents({raw_doc("h", 1, 1, lat(1, 1, 8)), raw_cut}, {"r.json", "cut.json"}),
                    Catch::Contains("'cut.json'.raw.results: missing key 'errors'"));
  json raw_nohost = raw_doc("h", 1, 1, lat(1, 1, 8));
  raw_nohost["host"].erase("hostname");
  CHECK_THROWS_WITH(merge_documents({raw_doc("h", 1, 1, lat(1, 1, 8)), raw_nohost}, {"r.json", "nh.json"}),
                    Catch::Contains("'nh.json'.host: missing key 'hostname'"));
  json nokind = run;
  nokind.erase("kind");
  CHECK_THROWS_WITH(merge_documents({run, nokind}, {"a.json", "k.json"}),
                    Catch::Contains("'k.json': missing key 'kind'"));
  json half = run;
  half["results"]["timeline_interval_s"] = 0.5;
  CHECK_THROWS_AS(merge_documents({run, half}, {"a.json", "h.json"}), UsageError);
  json mistyped = run;
  mistyped["results"]["workers"][0]["busy_s"] = "slow";
  CHECK_THROWS_WITH(merge_documents({run, mistyped}, {"a.json", "m.json"}),
                    Catch::Contains("'m.json'.results.workers[0].busy_s: expected a number"));
  json tune = run;
  tune["kind"] = "tune";
  CHECK_THROWS_WITH(merge_documents({tune, tune}, {"t.json", "u.json"}), Catch::Contains("cannot be merged"));
  CHECK_THROWS_AS(merge_documents({run}, {"a.json"}), UsageError);
}
