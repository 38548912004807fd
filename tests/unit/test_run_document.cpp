// The typed run document (report/run_document.hpp): its JSON both ways, strict reading, and a
// document saved by `ioprobe run` (tests/fixtures/documents/) read back and rendered as the run did.
#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "report/document.hpp"
#include "report/run_document.hpp"
#include "report/run_text.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

const std::string kDocs = std::string(IOPROBE_FIXTURES) + "/documents";

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

LatencyHistogram lognormal_latency(uint32_t seed, int n, double mu) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(mu, 0.8);
  LatencyHistogram h;
  for (int i = 0; i < n; ++i) h.record(static_cast<uint64_t>(d(rng)));
  return h;
}

// A document with every optional part present: calibration, GIL share, sharded read size, GPU
// links with a limiting one, a CUDA copy, device accounting, cluster and hosts, merged sources.
RunDocument full_document() {
  RunDocument d;
  d.header.ioprobe_version = "0.1.0";
  d.header.command = {"ioprobe", "run", "--workers", "2"};
  d.header.created_utc = "2026-12-07T03:00:00Z";
  d.header.host.hostname = "h1";
  d.header.host.cpus_allowed = 2;
  d.target.path = "/data";
  d.target.fs_type = "ext4";
  d.target.reading.emplace();
  d.target.run.emplace();
  d.dataset.preset = "imagenet-like";
  d.dataset.files = 1000;
  d.dataset.bytes = 115000000;
  d.dataset.kind = "sharded";
  RunLoaderSection& l = d.loader;
  l.num_workers = 2;
  l.batch_size = 16;
  l.prefetch_factor = 2;
  l.shuffle = true;
  l.epochs = 3;
  l.duration_s = 1.5;
  l.cpu_per_sample_us = 12.5;
  l.gpus = 2;
  l.gpus_per_process = 1;
  l.engine = "io_uring";
  l.direct = true;
  l.step_time_s = 0.036;
  l.seed = 7;
  l.max_outstanding_batches = 4;
  l.pattern = "IterableDataset";
  l.read_size_bytes = 1 << 20;
  l.shuffle_buffer_samples = 1000;
  l.shuffle_initial_samples = 100;
  l.consumer.worker_put_cpu_per_sample_us = 3.0;
  l.consumer.worker_put_gil_share = 0.5;
  l.consumer.worker_put_gil_share_basis = "measured";
  l.consumer.tensors_per_batch = 2;
  l.consumer.decode = "jpeg";
  l.consumer.calibration = RunCalibrationRef{"cal.json", "ds.py", "make", "h0", "2.3.0", 32, "2026-12-01T00:00:00Z"};
  RankStats rk;
  rk.timeline = Timeline(1.0);
  WorkerStats w;
  w.file_latency = lognormal_latency(1, 300, 11.0);
  w.open_latency = lognormal_latency(2, 300, 9.0);
  w.cpu_list = "0-1";
  w.numa = "none";
  w.decoded = 290;
  w.decode_errors = 10;
  w.decode_cpu_ns = 123'456'789;
  w.decoded_pixels = 290 * 150'528;
  rk.batch_wait = lognormal_latency(3, 20, 12.0);
  rk.samples = 300;
  rk.bytes = 300 * 115'000;
  rk.timeline.add(100, 300, 300 * 115'000, 1000);
  d.results.loader = rank_result(rk, {w}, 2'000'000'000, 1);
  d.results.loader.errors = 1;
  d.results.loader.error_samples.push_back({.detail = "read failed"});
  d.results.device_io = {{"source", "diskstats"}, {"bytes_read", 123}};
  d.results.epochs = json::array({{{"epoch", 1}, {"samples", 300}, {"bytes", 300 * 115000}}});
  IngestResult in;
  in.demand = {"h100", "H100-SXM", "resnet50", "training", 7007, "MLPerf", 2, 0.9};
  in.required_samples_per_s = 14014;
  in.accelerator_utilization = 0.5;
  in.worker_runq_fraction = -1;
  in.gpu_links = {{"0000:81:00.0", 1, 32e9, "gen5 x16", false}, {"0000:82:00.0", 1, 0, "unknown", true}};
  in.h2d_limiting = 0;
  in.h2d_copies = 10;
  in.h2d_error = "";
  in.verdict = "storage";
  in.verdict_text = "the storage is slower";
  d.ingest = run_ingest_section(in, 115000);
  d.ingest.bytes_source = "device";
  d.partial = true;
  d.warnings = {"one", "two"};
  d.cluster = {{"hosts", 2}};
  d.hosts = json::array({{{"hostname", "h1"}}});
  d.sources = {{"a.json", "h1", 300, 34'500'000, 150.0, 17'250'000.0, 2.0, 88.5}};
  return d;
}

}  // namespace

TEST_CASE("run document: run_document_json and run_document_from_json are each other's inverse", "[run_document]") {
  const json j = run_document_json(full_document());
  const RunDocument back = run_document_from_json(json::parse(j.dump()), "'t.json'");
  CHECK(run_document_json(back) == j);
  CHECK(back.loader.read_size_bytes == std::optional<uint64_t>(1 << 20));
  CHECK(back.loader.shuffle_buffer_samples == std::optional<uint64_t>(1000));
  CHECK(back.loader.shuffle_initial_samples == std::optional<uint64_t>(100));
  RunDocument plain = full_document();  // without --shuffle-buffer: no buffer keys, none read back
  plain.loader.shuffle_buffer_samples.reset();
  plain.loader.shuffle_initial_samples.reset();
  const json pj = run_document_json(plain);
  CHECK_FALSE(pj["loader"].contains("shuffle_buffer_samples"));
  CHECK_FALSE(pj["loader"].contains("shuffle_initial_samples"));
  CHECK_FALSE(run_document_from_json(pj, "'p.json'").loader.shuffle_buffer_samples);
  REQUIRE(back.loader.consumer.calibration);
  CHECK(back.loader.consumer.calibration->torch_version == "2.3.0");
  REQUIRE(back.ingest.result);
  CHECK(back.ingest.result->h2d_limiting == 0);
  CHECK(back.ingest.result->worker_runq_fraction == -1);
  CHECK(back.sources.size() == 1);

  // A merged document: no ingest result, its reason instead.
  RunDocument merged = full_document();
  merged.ingest = RunIngestSection{.unavailable_reason = "not recomputed"};
  const json mj = run_document_json(merged);
  CHECK(mj["ingest"] == json{{"available", false}, {"reason", "not recomputed"}});
  const RunDocument mback = run_document_from_json(mj, "'m.json'");
  CHECK_FALSE(mback.ingest.result);
  CHECK(run_document_json(mback) == mj);
}

TEST_CASE("run document: a missing or mistyped field is refused naming the file and the field's path",
          "[run_document]") {
  const json good = run_document_json(full_document());
  json missing = good;
  missing["loader"].erase("num_workers");
  CHECK_THROWS_WITH(run_document_from_json(missing, "'t.json'"),
                    Catch::Contains("'t.json' loader: missing key 'num_workers'"));
  json mistyped = good;
  mistyped["ingest"]["host_to_device"]["gpus"][1]["downtrained"] = "yes";
  CHECK_THROWS_WITH(run_document_from_json(mistyped, "'t.json'"),
                    Catch::Contains("'t.json' ingest.host_to_device.gpus[1].downtrained: expected true or false"));
  json negative = good;
  negative["loader"]["batch_size"] = -16;
  CHECK_THROWS_WITH(run_document_from_json(negative, "'t.json'"),
                    Catch::Contains("'t.json' loader.batch_size: expected a non-negative integer"));
  json no_section = good;
  no_section.erase("dataset");
  CHECK_THROWS_WITH(run_document_from_json(no_section, "'t.json'"), Catch::Contains("missing key 'dataset'"));
  json other_kind = good;
  other_kind["kind"] = "raw";
  CHECK_THROWS_AS(run_document_from_json(other_kind, "'t.json'"), UsageError);
  json unknown_link = good;
  unknown_link["ingest"]["host_to_device"]["limiting"] = "0000:99:00.0";
  CHECK_THROWS_WITH(run_document_from_json(unknown_link, "'t.json'"),
                    Catch::Contains("'t.json' ingest.host_to_device.limiting: names '0000:99:00.0'"));
}

TEST_CASE("run document: a document `ioprobe run` saved reads back, writes the same JSON and renders the same text",
          "[run_document]") {
  // Saved with `ioprobe run --json` before the document was typed, with the text it printed. It
  // predates results.cpu.cache_prep_s, which reads back as 0 and is written from then on.
  const json saved = read_json_file(kDocs + "/run_small.json");
  const RunDocument doc = run_document_from_json(saved, "'run_small.json'");
  json expected = saved;
  expected["results"]["cpu"]["cache_prep_s"] = 0.0;
  CHECK(run_document_json(doc) == expected);
  CHECK(run_document_json(doc).dump(2, ' ', false, json::error_handler_t::replace) ==
        expected.dump(2, ' ', false, json::error_handler_t::replace));
  CHECK(render_run_text(doc) == file_text(kDocs + "/run_small.txt"));
}
