// The typed run document (report/run_document.hpp): its JSON both ways, strict reading, and a
// document saved by `ioprobe run` (tests/fixtures/documents/) read back and rendered as the run did.
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "report/calibration_effect_report.hpp"
#include "report/device_io_report.hpp"
#include "report/document.hpp"
#include "report/html_report.hpp"
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

// A device's accounting, with a loop device's backing file whose name needs escaping.
DeviceIo disk_io() {
  DeviceIo io;
  io.source = "diskstats";
  io.devices = {{"loop0", 123ULL << 20, 4096, 1000, 1}};
  io.bytes_read = 123ULL << 20;
  io.bytes_written = 4096;
  io.reads = 1000;
  io.writes = 1;
  io.interval_s = 2.5;
  io.start_unix_s = 1.8e9;
  io.idle_window_s = 0.5;
  io.idle_bytes_per_s_before = 1e6;
  BackingIo b;
  b.loop = "loop0";
  b.backing_file = "/var/tmp/disk\\1\n.img";
  b.direct_io = 0;
  b.device = {"vda", 1 << 20, 0, 16, 0};
  io.backing = b;
  return io;
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
  l.engine = EngineKind::kIoUring;
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
  d.results.device_io = device_io_section(disk_io(), DeviceRef::kRead, 300 * 115'000ULL);
  d.results.device_io->ratio.reset();  // interrupted: the whole epochs' ratio instead
  d.results.device_io->ratio_note = "interrupted (SIGINT): no ratio";
  d.results.device_io->whole_epochs = WholeEpochsRatio{.epochs = 1, .bytes = 200 * 115'000ULL, .read_ratio = 1.02};
  d.results.device_io->merge_note = "2 documents from 2 host(s)";
  RunEpoch e1{.epoch = 1, .samples = 200, .bytes = 200 * 115'000ULL, .elapsed_s = 1.25, .samples_per_s = 160};
  e1.bytes_per_s = 160 * 115'000.0;
  e1.residency = 0.0;
  e1.residency_source = "device";
  e1.device_io = device_io_section(disk_io(), DeviceRef::kRead, e1.bytes);
  RunEpoch e2{.epoch = 2, .samples = 100, .bytes = 100 * 115'000ULL};  // not timed, no residency, cut short
  DeviceIo none;
  none.reason = "not measured";
  e2.device_io = device_io_section(none, DeviceRef::kRead, e2.bytes);
  e2.partial = true;
  e2.cut_by = loader_stop_interrupted(SIGINT);
  d.results.epochs = std::vector<RunEpoch>{e1, e2};
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
  d.ingest.calibration_effect = CalibrationEffect{.ranks = 2, .num_workers = 2, .batch_size = 16, .cpus = 4};
  d.ingest.calibration_effect->calibrated = {.worker_us_per_sample = 650,
                                             .cpu_us_per_sample = 700,
                                             .workers_samples_per_s = 3000,
                                             .main_samples_per_s = 0,
                                             .cpus_samples_per_s = 5700,
                                             .samples_per_s = 3000,
                                             .bound = "workers"};
  d.cluster = RunClusterSection{.launcher = "mpirun",
                                .hosts = 2,
                                .mpi_ranks = 2,
                                .gpu_ranks = 2,
                                .start_skew_s = 0.001};
  d.cluster->coordination.gather_method = "binomial tree: 1 round";
  d.cluster->interrupted = true;
  RunHostRow h{.hostname = "h1", .host_index = 0, .mpi_ranks = {0}, .gpu_ranks = 1};
  h.target = {.fs_type = "ext4",
              .device = "sda",
              .direct = true,
              .memory_backed = false,
              .cache = "cold",
              .engine = EngineKind::kIoUring};
  h.device_io = host_device_io(disk_io(), {disk_io()}, 150 * 115'000ULL, true);
  h.results.samples = 150;
  h.results.samples_per_s = 75.5;
  d.hosts = std::vector<RunHostRow>{h};
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
  // The page says what the text says (not available, and why), and shows no demand, AU or verdict.
  CHECK(render_run_text(mback).find("not available        not recomputed") != std::string::npos);
  const std::string html = render_html_report({mj});
  CHECK(html.find("<th>GPU ingest</th><td>not available: not recomputed</td>") != std::string::npos);
  CHECK(html.find("<th>AU</th>") == std::string::npos);
  CHECK(html.find("<th>demand</th>") == std::string::npos);
  CHECK(html.find("<th>verdict</th>") == std::string::npos);
}

TEST_CASE("run document: a missing or mistyped field is refused naming the file and the field's path",
          "[run_document]") {
  const json good = run_document_json(full_document());
  json missing = good;
  missing["loader"].erase("num_workers");
  CHECK_THROWS_WITH(run_document_from_json(missing, "'t.json'"),
                    Catch::Contains("'t.json'.loader: missing key 'num_workers'"));
  json mistyped = good;
  mistyped["ingest"]["host_to_device"]["gpus"][1]["downtrained"] = "yes";
  CHECK_THROWS_WITH(run_document_from_json(mistyped, "'t.json'"),
                    Catch::Contains("'t.json'.ingest.host_to_device.gpus[1].downtrained: expected true or false"));
  json negative = good;
  negative["loader"]["batch_size"] = -16;
  CHECK_THROWS_WITH(run_document_from_json(negative, "'t.json'"),
                    Catch::Contains("'t.json'.loader.batch_size: expected a non-negative integer"));
  json no_section = good;
  no_section.erase("dataset");
  CHECK_THROWS_WITH(run_document_from_json(no_section, "'t.json'"), Catch::Contains("missing key 'dataset'"));
  json other_kind = good;
  other_kind["kind"] = "raw";
  CHECK_THROWS_AS(run_document_from_json(other_kind, "'t.json'"), UsageError);
  json unknown_engine = good;
  unknown_engine["target"]["engine"] = "gds";
  CHECK_THROWS_WITH(run_document_from_json(unknown_engine, "'t.json'"),
                    Catch::Contains("'t.json'.target.engine: 'gds' is not an engine (io_uring, psync)"));
  unknown_engine = good;
  unknown_engine["loader"]["engine"] = "auto";  // a resolved engine, never the selection
  CHECK_THROWS_WITH(run_document_from_json(unknown_engine, "'t.json'"),
                    Catch::Contains("'t.json'.loader.engine: 'auto' is not an engine (io_uring, psync)"));
  json unknown_verdict = good;
  unknown_verdict["ingest"]["verdict"] = "banana";
  CHECK_THROWS_WITH(run_document_from_json(unknown_verdict, "'t.json'"),
                    Catch::Contains("'t.json'.ingest.verdict: 'banana' is not a verdict (none, host-to-device link"));
  json unknown_link = good;
  unknown_link["ingest"]["host_to_device"]["limiting"] = "0000:99:00.0";
  CHECK_THROWS_WITH(run_document_from_json(unknown_link, "'t.json'"),
                    Catch::Contains("'t.json'.ingest.host_to_device.limiting: names '0000:99:00.0'"));
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

TEST_CASE("run text: a run that delivered no batch shows no first-batch time", "[run_document]") {
  RunDocument doc = run_document_from_json(read_json_file(kDocs + "/run_small.json"), "'run_small.json'");
  CHECK_THAT(render_run_text(doc), Catch::Contains("  first batch          0.04 s\n"));
  doc.results.loader.samples = 0;
  doc.results.loader.first_batch_ns = 0;
  const std::string text = render_run_text(doc);
  CHECK_THAT(text, Catch::Contains("  first batch          none: no batch completed before the run ended\n"));
  CHECK_THAT(text, !Catch::Contains("first batch          0.00 s"));
}

TEST_CASE("run text: each CPU figure of a calibrated run says where it comes from", "[run_document]") {
  RunDocument doc = full_document();  // calibrated at batch size 32, run at 16
  doc.loader.consumer.main_cpu_per_batch_us = 800;
  doc.loader.cpu_per_sample_us = 20;
  const std::string text = render_run_text(doc);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("20.0 µs CPU work per sample in each worker's loop (the calibration's, as ioprobe "
                                   "calibrate measured it)"));
  CHECK_THAT(text, Catch::Contains("worker CPU           the calibration's, burned as measured: 20 µs/sample (loop"));
  CHECK_THAT(text, Catch::Contains("800.0 µs CPU per full batch beside the GPU step (the calibration's, scaled from "
                                   "its batch size 32 to 16)"));
  CHECK_THAT(text, Catch::Contains(" µs per sample (measured: the whole ioprobe process"));
  // Without a calibration, the figures are the options' own: no calibration labels.
  doc.loader.consumer.calibration.reset();
  CHECK_THAT(render_run_text(doc), !Catch::Contains("the calibration's"));
}

TEST_CASE("run document: device I/O, epochs, calibration effect, cluster and hosts each read back as written",
          "[run_document][device_io][cluster]") {
  const json good = json::parse(run_document_json(full_document()).dump());
  const RunDocument back = run_document_from_json(good, "'t.json'");
  REQUIRE(back.results.device_io);
  CHECK(device_io_section_json(*back.results.device_io) == good["results"]["device_io"]);
  CHECK(back.results.device_io->whole_epochs->read_ratio == 1.02);
  // The backing file is written escaped once and read back to its own bytes.
  CHECK(good["results"]["device_io"]["backing"]["backing_file"] == "/var/tmp/disk\\\\1\\x0A.img");
  CHECK(back.results.device_io->io.backing->backing_file == "/var/tmp/disk\\1\n.img");
  REQUIRE(back.results.epochs);
  REQUIRE(back.results.epochs->size() == 2);
  CHECK(run_epochs_json(*back.results.epochs) == good["results"]["epochs"]);
  CHECK(back.results.epochs->at(0).residency == 0.0);
  CHECK(back.results.epochs->at(1).partial);
  CHECK_FALSE(back.results.epochs->at(1).elapsed_s);
  CHECK_FALSE(back.results.epochs->at(1).residency);
  CHECK(good["results"]["epochs"][1]["residency"].is_null());
  REQUIRE(back.ingest.calibration_effect);
  CHECK(calibration_effect_json(*back.ingest.calibration_effect) == good["ingest"]["calibration_effect"]);
  CHECK(back.ingest.calibration_effect->calibrated.bound == "workers");
  REQUIRE(back.cluster);
  CHECK(run_cluster_json(*back.cluster) == good["cluster"]);
  CHECK(back.cluster->interrupted == std::optional<bool>(true));
  REQUIRE(back.hosts);
  CHECK(run_hosts_json(*back.hosts) == good["hosts"]);
  REQUIRE(back.hosts->at(0).device_io.epochs);
  CHECK(back.hosts->at(0).device_io.epochs->size() == 1);
  // The report rendered from the saved document is the one the run printed: device lines, epochs,
  // the calibration effect and the Hosts section included.
  const std::string text = render_run_text(back);
  CHECK(text == render_run_text(full_document()));
  CHECK_THAT(text, Catch::Contains("under loop0: vda read 1.00 MiB (1,048,576 B) in 16 requests for its backing file "
                                   "/var/tmp/disk\\\\1\\x0A.img"));
  CHECK_THAT(text, Catch::Contains("epoch 2 (cut short)"));
  CHECK_THAT(text, Catch::Contains("calibration effect"));
  CHECK_THAT(text, Catch::Contains("INTERRUPTED"));
  CHECK_THAT(text, Catch::Contains("h1               device I/O loop0:"));

  // Without the optional sections (a one-process run without --calibration or device accounting):
  // nothing is made up, and the document writes back as it was.
  json plain = good;
  plain["results"].erase("device_io");
  plain["results"].erase("epochs");
  plain["ingest"].erase("calibration_effect");
  plain.erase("cluster");
  plain.erase("hosts");
  const RunDocument p = run_document_from_json(plain, "'p.json'");
  CHECK_FALSE(p.results.device_io);
  CHECK_FALSE(p.results.epochs);
  CHECK_FALSE(p.ingest.calibration_effect);
  CHECK_FALSE(p.cluster);
  CHECK_FALSE(p.hosts);
  CHECK(run_document_json(p) == plain);
  // Optional keys inside them: an older cluster section without interrupted, a section without
  // start_unix_s, backing or notes.
  json older = good;
  older["cluster"].erase("interrupted");
  for (const char* k : {"start_unix_s", "backing", "ratio_note", "whole_epochs", "whole_epochs_bytes",
                        "whole_epochs_read_ratio", "merge_note"})
    older["results"]["device_io"].erase(k);
  const RunDocument o = run_document_from_json(older, "'o.json'");
  CHECK_FALSE(o.cluster->interrupted);
  CHECK_FALSE(o.results.device_io->io.backing);
  CHECK(run_document_json(o) == older);
}

TEST_CASE("run document: a mistyped or missing field of device I/O, epochs, calibration effect, cluster or hosts is "
          "refused naming its path",
          "[run_document][device_io][cluster]") {
  const json good = json::parse(run_document_json(full_document()).dump());
  const auto refused = [&](const std::function<void(json&)>& edit, const std::string& what) {
    json j = good;
    edit(j);
    CHECK_THROWS_WITH(run_document_from_json(j, "'t.json'"), Catch::Contains(what));
  };
  refused([](json& j) { j["results"]["device_io"]["bytes_read"] = "lots"; },
          "'t.json'.results.device_io.bytes_read: expected a non-negative integer");
  refused([](json& j) { j["results"]["device_io"]["backing"]["device"]["reads"] = -1; },
          "'t.json'.results.device_io.backing.device.reads: expected a non-negative integer");
  refused([](json& j) { j["results"]["device_io"].erase("bytes_source"); },
          "'t.json'.results.device_io: missing key 'bytes_source'");
  refused([](json& j) { j["results"]["device_io"].erase("read_ratio"); },
          "'t.json'.results.device_io: reference_bytes without read_ratio or write_ratio");
  refused([](json& j) { j["results"]["epochs"][1]["device_io"].erase("hosts"); },
          "'t.json'.results.epochs[1].device_io: missing key 'hosts'");
  refused([](json& j) { j["results"]["epochs"][1]["device_io"].erase("reason"); },
          "'t.json'.results.epochs[1].device_io: missing key 'reason'");  // source "none" says why
  refused([](json& j) { j["results"]["epochs"][0]["residency"] = "high"; },
          "'t.json'.results.epochs[0].residency: expected a number");
  refused([](json& j) { j["results"]["epochs"][0].erase("samples_per_s"); },
          "'t.json'.results.epochs[0]: missing key 'samples_per_s'");
  refused([](json& j) { j["results"]["epochs"] = json::object(); }, "'t.json'.results.epochs: expected an array");
  refused([](json& j) { j["ingest"]["calibration_effect"]["setting"].erase("cpus"); },
          "'t.json'.ingest.calibration_effect.setting: missing key 'cpus'");
  refused([](json& j) { j["ingest"]["calibration_effect"]["calibrated_bound"] = 1; },
          "'t.json'.ingest.calibration_effect.calibrated_bound: expected a string");
  refused([](json& j) { j["cluster"] = "mpirun"; }, "'t.json'.cluster: expected a JSON object");
  refused([](json& j) { j["cluster"]["coordination"]["gather_s"] = nullptr; },
          "'t.json'.cluster.coordination.gather_s: expected a number");
  refused([](json& j) { j["cluster"].erase("dataset_placement"); },
          "'t.json'.cluster: missing key 'dataset_placement'");
  refused([](json& j) { j["hosts"][0]["results"].erase("au_min"); }, "'t.json'.hosts[0].results: missing key 'au_min'");
  refused([](json& j) { j["hosts"][0]["mpi_ranks"] = json::array({"a"}); },
          "'t.json'.hosts[0].mpi_ranks[0]: expected an integer");
  refused([](json& j) { j["hosts"][0]["target"]["direct"] = "yes"; },
          "'t.json'.hosts[0].target.direct: expected true or false");
  refused([](json& j) { j["hosts"][0]["device_io"]["cold_read_short"] = 1; },
          "'t.json'.hosts[0].device_io.cold_read_short: expected true or false");
  refused([](json& j) { j["hosts"][0]["device_io"]["epochs"][0].erase("devices"); },
          "'t.json'.hosts[0].device_io.epochs[0]: missing key 'devices'");
}
