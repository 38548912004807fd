// The device_io parts of result documents (report/device_io_report.hpp): a run's per-epoch list
// when a stop cut it short, and device I/O through `report` and `report --merge`.
#include <catch2/catch.hpp>

#include <csignal>

#include "cli/device_accounting.hpp"
#include "report/device_io_report.hpp"
#include "report/document_merge.hpp"
#include "report/document_text.hpp"
#include "report/html_report.hpp"
#include "report/raw_document.hpp"
#include "report/raw_report.hpp"
#include "report/run_document.hpp"
#include "report/run_text.hpp"
#include "stats/latency_json.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

DeviceIo reads(const char* dev, uint64_t bytes) {
  DeviceIo io;
  io.source = "diskstats";
  io.devices = {{dev, bytes, 0, bytes / 4096, 0}};
  io.bytes_read = bytes;
  io.reads = bytes / 4096;
  io.interval_s = 1;
  io.idle_window_s = 0.5;
  io.idle_bytes_per_s_before = 1000;
  return io;
}

LoaderResult cut_run() {
  LoaderResult r;
  r.samples = 140;
  r.bytes = 140 * 4096;
  r.epoch_samples = {100, 40, 0};  // epoch 2 cut by --duration, epoch 3 begun as the stop came
  r.epoch_bytes = {100 * 4096, 40 * 4096, 0};
  r.epoch_ns = {1'000'000'000, 500'000'000, 1'000'000};
  r.epochs_completed = 1;
  r.partial = false;  // as run_loader leaves a --duration stop: partial is for signals only
  r.stop = {.kind = LoaderStopKind::kDuration};
  return r;
}

LoaderResult io_run_part(uint64_t samples, int64_t elapsed_ns) {
  RankStats rk;
  rk.timeline = Timeline(1.0);
  WorkerStats w;
  for (uint64_t i = 0; i < samples; ++i) {
    w.file_latency.record(1000 + i);
    w.open_latency.record(100 + i);
  }
  rk.batch_wait.record(5000);
  rk.samples = samples;
  rk.bytes = samples * 4096;
  rk.epoch_samples = {samples};
  rk.epoch_bytes = {samples * 4096};
  rk.timeline.add(100, samples, samples * 4096, 1000);
  return rank_result(rk, {w}, elapsed_ns, 1);
}

// A whole run document (its typed reader refuses one without every section), created at its own
// second so that no two are taken for the same result.
json run_doc(const char* host, const LoaderResult& r, const DeviceIo& io) {
  static int created = 0;
  RunDocument d;
  d.header.created_utc = "2026-12-07T03:00:" + std::to_string(10 + created++ % 50) + "Z";
  d.header.host.hostname = host;
  d.target.reading.emplace();
  d.target.run.emplace();
  d.loader.gpus = 1;
  d.results.loader = r;
  d.results.device_io = device_io_section(io, DeviceRef::kRead, r.bytes);
  d.results.epochs = run_epochs(r, {io});
  d.ingest.result = IngestResult{};
  d.ingest.result->verdict = "none";
  return run_document_json(d);
}

// The device I/O lines of a results object, read back as `ioprobe report` reads them.
std::string device_io_text(const json& results) {
  std::optional<DeviceIoSection> dio;
  if (results.contains("device_io")) dio = device_io_section_from_json(results["device_io"], "results.device_io");
  std::vector<RunEpoch> epochs;
  if (results.contains("epochs")) epochs = run_epochs_from_json(results["epochs"], "results.epochs");
  return render_device_io_text(dio, epochs, 20);
}

}  // namespace

TEST_CASE("epochs_json: an epoch cut short is partial, without a device read ratio", "[device_io][report]") {
  const LoaderResult r = cut_run();
  // Epoch 2's devices read 2.6 x what it delivered: the workers' read-ahead the stop discarded.
  const json e = epochs_json(r, {reads("sda", 100 * 4096), reads("sda", 104 * 4096), reads("sda", 8 * 4096)});
  REQUIRE(e.size() == 2);  // the epoch that delivered nothing has no row
  CHECK_FALSE(e[0].contains("partial"));
  CHECK(e[0]["device_io"]["read_ratio"].get<double>() == Approx(1.0));
  CHECK(e[0]["device_io"]["bytes_source"] == "device");
  CHECK(e[1]["partial"] == true);
  CHECK(e[1]["cut_by"] == "duration reached");
  CHECK(e[1]["device_io"]["read_ratio"].is_null());
  CHECK(e[1]["device_io"]["bytes_source"] == "unknown");
  CHECK(e[1]["device_io"]["bytes_read"] == 104 * 4096);  // the figure itself stays
  // Each epoch's rate over its own time: the cut one over the 0.5 s it ran, not a whole epoch's.
  CHECK(e[0]["elapsed_s"].get<double>() == Approx(1.0));
  CHECK(e[0]["samples_per_s"].get<double>() == Approx(100.0));
  CHECK(e[1]["elapsed_s"].get<double>() == Approx(0.5));
  CHECK(e[1]["samples_per_s"].get<double>() == Approx(80.0));
  CHECK(e[1]["bytes_per_s"].get<double>() == Approx(80.0 * 4096));
  // The text says so instead of "2.60 x delivered".
  json results = {{"epochs", e}};
  const std::string text = device_io_text(results);
  CHECK(text.find("epoch 2 (cut short)") != std::string::npos);
  CHECK(text.find("cut short by the stop (duration reached)") != std::string::npos);
  CHECK(text.find("80 samples/s over the time it ran") != std::string::npos);
  CHECK(text.find("epoch 1 (cut short)") == std::string::npos);
  CHECK(text.find("2.60") == std::string::npos);
  CHECK(text.find("no ratio") != std::string::npos);

  // A device figure below 10% of the delivered bytes is an upper bound: "page cache" still holds.
  const json pc = epochs_json(r, {reads("sda", 100 * 4096), reads("sda", 4096)});
  CHECK(pc[1]["device_io"]["bytes_source"] == "page cache");

  // A run that was not stopped keeps every epoch as it is.
  LoaderResult whole = r;
  whole.partial = false;
  whole.stop = {.kind = LoaderStopKind::kCompleted};
  whole.epochs_completed = 3;
  CHECK(epochs_json(whole, {}).size() == 3);
  CHECK_FALSE(epochs_json(whole, {})[1].contains("partial"));

  // A signal cuts the same way, named by its stop reason.
  LoaderResult sig = r;
  sig.partial = true;
  sig.stop = loader_stop_interrupted(SIGINT);
  CHECK(epochs_json(sig, {})[1]["cut_by"] == "interrupted (SIGINT)");
}

TEST_CASE("an interrupted run's device I/O line gives no whole-run ratio; the whole epochs' ratio is labelled",
          "[device_io][report]") {
  LoaderResult r = cut_run();
  r.partial = true;  // SIGINT during epoch 2
  r.stop = loader_stop_interrupted(SIGINT);
  // The run's devices read 212 x 4 KiB for 140 delivered: epoch 2's read-ahead the stop discarded.
  const DeviceIo whole = reads("sda", 212 * 4096);
  json doc = {{"results", json::object()}};
  cli::add_run_device_io(doc, r, whole, {reads("sda", 100 * 4096), reads("sda", 112 * 4096)}, true, TargetInfo{});
  const json& io = doc["results"]["device_io"];
  CHECK(io["read_ratio"].is_null());
  CHECK(io["bytes_read"] == 212 * 4096);  // the figure itself stays
  CHECK(io["bytes_source"] == "unknown");
  CHECK_THAT(io.value("ratio_note", ""), Catch::StartsWith("interrupted (SIGINT): the devices' reads include batches"));
  CHECK(io["whole_epochs"] == 1);
  CHECK(io["whole_epochs_bytes"] == 100 * 4096);
  CHECK(io["whole_epochs_read_ratio"].get<double>() == Approx(1.0));
  const std::string text = device_io_text(doc["results"]);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("device I/O           sda: 848.00 KiB (868,352 B) read (interrupted (SIGINT): the "
                                   "devices' reads include batches fetched ahead and never delivered, so no ratio to "
                                   "the delivered bytes is given; the 1 whole epoch(s) before the stop: 1.00 x their "
                                   "400.00 KiB (409,600 B) delivered)"));
  CHECK_THAT(text, !Catch::Contains("1.51 x"));  // 212 / 140: the whole-run ratio, discarded read-ahead included

  // An epoch not measured: no whole-epoch ratio, the note alone.
  json doc2 = {{"results", json::object()}};
  cli::add_run_device_io(doc2, r, whole, {}, true, TargetInfo{});
  CHECK(doc2["results"]["device_io"]["read_ratio"].is_null());
  CHECK_FALSE(doc2["results"]["device_io"].contains("whole_epochs_read_ratio"));
  // A --duration stop (not interrupted) keeps the run's ratio as before.
  LoaderResult dur = cut_run();
  json doc3 = {{"results", json::object()}};
  cli::add_run_device_io(doc3, dur, whole, {}, true, TargetInfo{});
  CHECK(doc3["results"]["device_io"]["read_ratio"].is_number());
}

TEST_CASE("report --merge: device I/O per host, summed; one host's documents not double-counted",
          "[device_io][merge]") {
  const LoaderResult a = io_run_part(100, 1'000'000'000), b = io_run_part(50, 2'000'000'000);
  const json m = merged_document_json(
      merge_documents({run_doc("h1", a, reads("sda", 400 * 4096)), run_doc("h2", b, reads("sda", 50 * 4096))},
                      {"a.json", "b.json"}));
  const json& d = m["results"]["device_io"];
  REQUIRE(d.is_object());
  CHECK(d["bytes_read"] == 450 * 4096);
  REQUIRE(d["devices"].size() == 2);  // sda of h1 and sda of h2 are two devices
  CHECK(d["devices"][0]["name"] == "h1:sda");
  CHECK(d["devices"][1]["name"] == "h2:sda");
  CHECK(d["reference_bytes"] == 150 * 4096);
  CHECK(d["read_ratio"].get<double>() == Approx(3.0));
  CHECK(d["hosts"] == 2);
  CHECK(d["idle_bytes_per_s_before"].get<double>() == Approx(2000));
  CHECK(d["merge_note"].get<std::string>().find("idle window") != std::string::npos);
  REQUIRE(m["results"]["epochs"].size() == 1);
  CHECK(m["results"]["epochs"][0]["samples"] == 150);
  CHECK(m["results"]["epochs"][0]["device_io"]["bytes_read"] == 450 * 4096);
  CHECK(m["ingest"]["bytes_source"] == "device");
  const std::string text = device_io_text(m["results"]);
  CHECK(text.find("h1:sda, h2:sda") != std::string::npos);
  CHECK(text.find("idle window") != std::string::npos);

  // Two documents of one host: the same devices, overlapping intervals: the larger, not the sum.
  const json same = merged_document_json(
      merge_documents({run_doc("h1", a, reads("sda", 400 * 4096)), run_doc("h1", b, reads("sda", 300 * 4096))},
                      {"a.json", "b.json"}));
  CHECK(same["results"]["device_io"]["bytes_read"] == 400 * 4096);
  CHECK(same["results"]["device_io"]["hosts"] == 1);
  CHECK(same["results"]["device_io"]["merge_note"].get<std::string>().find("not the sum") != std::string::npos);
}

TEST_CASE("report --merge: a loop target's backing device is named with its host", "[device_io][merge]") {
  const LoaderResult a = io_run_part(100, 1'000'000'000), b = io_run_part(50, 2'000'000'000);
  auto on_loop = [](uint64_t backing_bytes) {
    DeviceIo io = reads("loop0", 400 * 4096);
    BackingIo bk;
    bk.loop = "loop0";
    bk.backing_file = "/var/tmp/disk.img";
    bk.direct_io = 0;
    bk.device = {"vda", backing_bytes, 0, backing_bytes / 4096, 0};
    io.backing = bk;
    return io;
  };
  // Two documents of one host: one backing device, named host:device, as the loop device is.
  const json m = merged_document_json(
      merge_documents({run_doc("h1", a, on_loop(8 * 4096)), run_doc("h1", b, on_loop(4 * 4096))},
                      {"a.json", "b.json"}));
  const json& d = m["results"]["device_io"];
  REQUIRE(d.contains("backing"));
  CHECK(d["backing"]["loop"] == "h1:loop0");
  CHECK(d["backing"]["device"]["name"] == "h1:vda");
  const std::string text = device_io_text(m["results"]);
  INFO(text);
  CHECK(text.find("under h1:loop0: h1:vda read") != std::string::npos);
  const std::string html = render_html_report({m});
  INFO(html);
  CHECK(html.find("under h1:loop0: h1:vda read") != std::string::npos);
  // Two hosts: vda of h1 and vda of h2 are two disks, not one backing device to add up.
  const json two = merged_document_json(
      merge_documents({run_doc("h1", a, on_loop(8 * 4096)), run_doc("h2", b, on_loop(4 * 4096))},
                      {"a.json", "b.json"}));
  CHECK_FALSE(two["results"]["device_io"].contains("backing"));
}

TEST_CASE("report --merge: one host's documents at different times add their device figures, with a warning",
          "[device_io][merge]") {
  // Two cold runs on one host, one after the other, each read 1.02 x what it delivered: the merge
  // said 0.51 x "mixed" (the larger, not the sum, against both runs' bytes).
  const LoaderResult a = io_run_part(100, 1'000'000'000), b = io_run_part(100, 1'000'000'000);
  DeviceIo ia = reads("sda", 102 * 4096), ib = reads("sda", 102 * 4096);
  ia.start_unix_s = 1'000'000;
  ib.start_unix_s = 1'000'060;  // a minute later; each interval is 1 s
  const json apart = merged_document_json(
      merge_documents({run_doc("h1", a, ia), run_doc("h1", b, ib)}, {"a.json", "b.json"}));
  const json& d = apart["results"]["device_io"];
  INFO(d.dump());
  CHECK(d["bytes_read"] == 204 * 4096);
  CHECK(d["read_ratio"].get<double>() == Approx(1.02));
  CHECK(d["bytes_source"] == "device");
  CHECK(d["hosts"] == 1);
  CHECK(d["start_unix_s"].get<double>() == Approx(1'000'000));
  CHECK_THAT(d["merge_note"].get<std::string>(), Catch::Contains("disjoint intervals): their figures added"));
  std::string warnings = apart["warnings"].dump();
  CHECK_THAT(warnings, Catch::Contains("a.json and b.json did not run at the same time"));
  CHECK_THAT(warnings, Catch::Contains("no concurrent load"));
  // At the same time: overlapping intervals, the larger (each counts the other's traffic), no warning.
  ib.start_unix_s = 1'000'000.5;
  const json together = merged_document_json(
      merge_documents({run_doc("h1", a, ia), run_doc("h1", b, ib)}, {"a.json", "b.json"}));
  CHECK(together["results"]["device_io"]["bytes_read"] == 102 * 4096);
  CHECK_THAT(together["warnings"].dump(), !Catch::Contains("did not run at the same time"));
}

TEST_CASE("report --merge of runs on different datasets at different times: warned first, the headline says so",
          "[device_io][merge]") {
  const LoaderResult a = io_run_part(100, 1'000'000'000), b = io_run_part(200, 1'000'000'000);
  DeviceIo ia = reads("sda", 100 * 4096), ib = reads("sda", 200 * 4096);
  ia.start_unix_s = 1'000'000;
  ib.start_unix_s = 1'000'060;  // a minute later: no overlap
  json da = run_doc("h1", a, ia), db = run_doc("h1", b, ib);
  da["dataset"] = dataset_section_json({.preset = "imagenet-like", .root = "/data/a", .files = 100, .bytes = 409600});
  db["dataset"] = dataset_section_json({.preset = "imagenet-like", .root = "/data/b", .files = 200, .bytes = 819200});
  const std::vector<std::string> names = {"a.json", "b.json"};
  const MergedDocument merged = merge_documents({da, db}, names);
  const std::vector<std::string>& differ = merged.workload_warnings;
  REQUIRE(differ.size() == 1);
  CHECK_THAT(differ[0], Catch::Contains("a.json and b.json measured different datasets") &&
                            Catch::Contains("dataset.root '/data/a' and '/data/b'") &&
                            Catch::Contains("dataset.files 100 and 200") &&
                            Catch::Contains("dataset.bytes 400.00 KiB (409,600 B) and 800.00 KiB (819,200 B)") &&
                            !Catch::Contains("dataset.preset"));
  const json m = merged_document_json(merged);
  REQUIRE(m["warnings"].size() >= 3);
  CHECK(m["warnings"][0] == differ[0]);  // first, before the merge note
  CHECK(m["sources_apart"] == true);
  const std::string text = render_run_text(run_document_from_json(m, "merged"));
  INFO(text);
  const std::string headline = text.substr(0, text.find('\n'));
  CHECK_THAT(headline, Catch::Contains("merged from 2 documents: NOT AT THE SAME TIME") &&
                           Catch::Contains("the sum of 2 runs that did not overlap in time"));
  CHECK_THAT(text, Catch::Contains("(the sum of runs that did not overlap in time)"));
  // One dataset, at the same time: no such warning, the headline as a run's.
  ib.start_unix_s = 1'000'000.5;
  db = run_doc("h1", b, ib);
  db["dataset"] = da["dataset"];
  const MergedDocument merged_together = merge_documents({da, db}, names);
  CHECK(merged_together.workload_warnings.empty());
  const json together = merged_document_json(merged_together);
  CHECK_FALSE(together.contains("sources_apart"));
  const std::string t2 = render_run_text(run_document_from_json(together, "merged"));
  CHECK_THAT(t2.substr(0, t2.find('\n')), !Catch::Contains("merged"));
  CHECK_THAT(t2, !Catch::Contains("did not overlap"));
}

TEST_CASE("report on a raw document and report --merge of raw documents show the device I/O", "[device_io][merge]") {
  LatencyHistogram h;
  for (int i = 0; i < 100; ++i) h.record(10'000 + i);
  auto raw_doc = [&](const char* host, uint64_t dev_bytes) {
    RawDocument d;
    d.header.host.hostname = host;
    d.raw.rw = "randread";
    d.raw.bs = 4096;
    d.raw.iodepth = 8;
    d.raw.direct = true;
    d.raw.filename = "/x";
    RawResultsSection& r = d.raw.results;
    r.ios = 100;
    r.bytes = 100ULL * 4096;
    r.elapsed_s = 1.0;
    r.latency = h;
    r.cpu_user_s = r.cpu_sys_s = 0.1;
    r.device_io = device_io_section(reads("nvme0n1", dev_bytes), DeviceRef::kRead, r.bytes);
    return raw_document_json(d);
  };
  RawDocument typed;  // the document `ioprobe raw` makes, with its device I/O
  typed.raw.rw = "randread";
  typed.raw.direct = true;
  typed.raw.results.ios = 100;
  typed.raw.results.bytes = 100ULL * 4096;
  typed.raw.results.latency = h;
  typed.raw.results.device_io = device_io_section_from_json(raw_doc("h1", 100ULL * 4096)["raw"]["results"]["device_io"],
                                                            "'a.json'.raw.results.device_io");
  const std::string one = render_raw_text(typed);
  CHECK(one.find("device I/O") != std::string::npos);
  CHECK(one.find("nvme0n1") != std::string::npos);
  const MergedDocument merged = merge_documents({raw_doc("h1", 100 * 4096), raw_doc("h2", 200 * 4096)},
                                                {"a.json", "b.json"});
  const json m = merged_document_json(merged);
  const json& d = m["raw"]["results"]["device_io"];
  CHECK(d["bytes_read"] == 300 * 4096);
  CHECK(d["read_ratio"].get<double>() == Approx(1.5));
  const std::string text = render_merged_raw_text(std::get<RawDocument>(merged.doc));
  CHECK(text.find("device I/O  h1:nvme0n1, h2:nvme0n1") != std::string::npos);
}

TEST_CASE("render_device_io_text: many epochs print a bounded number of rows; the JSON keeps them all",
          "[device_io][report]") {
  LoaderResult r;
  const size_t n = 300;  // e.g. --files 200 --duration 5s: hundreds of tiny epochs
  for (size_t i = 0; i < n; ++i) {
    r.epoch_samples.push_back(i + 1 == n ? 7 : 200);
    r.epoch_bytes.push_back((i + 1 == n ? 7 : 200) * 4096);
    r.epoch_ns.push_back(i == 3 ? 400'000'000 : 100'000'000);
  }
  r.epochs_completed = n - 1;
  r.stop = {.kind = LoaderStopKind::kDuration};
  const json e = epochs_json(r, {});
  REQUIRE(e.size() == n);
  const std::string text = device_io_text(json{{"epochs", e}});
  size_t rows = 0;
  for (size_t p = text.find("  epoch "); p != std::string::npos; p = text.find("  epoch ", p + 1)) ++rows;
  CHECK(rows == kMaxEpochRows);
  CHECK(text.find("epoch 9 ") != std::string::npos);
  CHECK(text.find("epoch 10 ") == std::string::npos);
  // The omitted ones in one line: how many, which, their samples and the range of their rates.
  CHECK(text.find("... 290 more epochs (10 to 299: 58,000 samples, 2000 to 2000 samples/s)") != std::string::npos);
  CHECK(text.find("results.epochs") != std::string::npos);
  // The last row, the one the stop cut short, is always shown.
  CHECK(text.find("epoch 300 (cut short)") != std::string::npos);

  // Up to the bound every row is printed, and no summary line.
  const json few(e.begin(), e.begin() + kMaxEpochRows);
  const std::string t2 = device_io_text(json{{"epochs", few}});
  CHECK(t2.find("more epoch") == std::string::npos);
  CHECK(t2.find("epoch 10 ") != std::string::npos);
}
