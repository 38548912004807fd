// The typed raw document (report/raw_document.hpp): documents `ioprobe raw` saved
// (tests/fixtures/documents/) read back, written again byte for byte and rendered as `ioprobe
// report` printed them; strict reading naming the field's path; the labels and warnings worked out
// when the document is made; the sections of a run across hosts both ways.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>

#include "cli/device_accounting.hpp"
#include "cluster/raw_parts.hpp"
#include "core/error.hpp"
#include "report/html_report.hpp"
#include "report/raw_document.hpp"
#include "report/raw_report.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

const std::string kRawDocs = std::string(IOPROBE_FIXTURES) + "/documents";

std::string raw_file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fixture `name`.json read back, its JSON and bytes written again, its text as saved.
RawDocument check_fixture(const std::string& name) {
  const std::string saved_text = raw_file_text(kRawDocs + "/" + name + ".json");
  const json saved = json::parse(saved_text);
  RawDocument doc = raw_document_from_json(saved, "'" + name + ".json'");
  CHECK(raw_document_json(doc) == saved);
  CHECK(raw_document_json(doc).dump(2, ' ', false, json::error_handler_t::replace) + "\n" == saved_text);
  CHECK(render_raw_text(doc) == raw_file_text(kRawDocs + "/" + name + ".txt"));
  return doc;
}

std::string refusal(const json& good, const std::function<void(json&)>& edit) {
  json j = good;
  edit(j);
  try {
    raw_document_from_json(j, "'r.json'");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("raw document: documents `ioprobe raw` saved read back, write the same bytes and render the same text",
          "[raw_document]") {
  // Saved with `ioprobe raw --filename D/t.bin --size 4MiB --bs 64k --json` (--rw read --engine psync
  // --iodepth 4; --rw write)
  // before the document was typed, with the text `ioprobe report` printed for each.
  const RawDocument rd = check_fixture("raw_read");
  CHECK(rd.raw.rw == "read");
  CHECK(rd.raw.bs == 65536);
  CHECK(rd.raw.results.ios == 64);
  CHECK(rd.raw.results.latency.count() == 64);
  CHECK(rd.raw.writes_to.empty());
  CHECK_FALSE(rd.cluster);
  const RawDocument wr = check_fixture("raw_write");
  CHECK(wr.raw.rw == "write");
  CHECK(wr.raw.cache == "buffered write");
  CHECK(wr.raw.writes_to == "page cache (not durable: no fsync)");
  CHECK(wr.raw.reads_from.empty());
}

TEST_CASE("raw document: a missing or mistyped field is refused naming its path", "[raw_document]") {
  const json good = json::parse(raw_file_text(kRawDocs + "/raw_read.json"));
  CHECK(refusal(good, [](json&) {}) == "accepted");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"].erase("ios"); }) == "'r.json'.raw.results: missing key 'ios'");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["ios"] = "64"; }) ==
        "'r.json'.raw.results.ios: expected a non-negative integer in range, found \"64\"");
  CHECK(refusal(good, [](json& j) { j["raw"]["bs"] = -4096; }) ==
        "'r.json'.raw.bs: expected a non-negative integer in range, found -4096");
  CHECK(refusal(good, [](json& j) { j["raw"]["engine"]["notes"] = "none"; }) ==
        "'r.json'.raw.engine.notes: expected an array, found \"none\"");
  CHECK(refusal(good, [](json& j) { j["raw"]["engine"]["name"] = "aio"; }) ==
        "'r.json'.raw.engine.name: 'aio' is not an engine (io_uring, psync)");
  CHECK(refusal(good, [](json& j) { j["raw"]["engine_requested"] = "gds"; }) ==
        "'r.json'.raw.engine_requested: 'gds' is not an engine selection (auto, io_uring, psync)");
  CHECK(refusal(good, [](json& j) { j["raw"]["engine_requested"] = 1; }) ==
        "'r.json'.raw.engine_requested: expected a string, found 1");
  CHECK(refusal(good, [](json& j) { j["raw"]["layout"].erase("region_bytes"); }) ==
        "'r.json'.raw.layout: missing key 'region_bytes'");
  CHECK(refusal(good, [](json& j) { j["raw"]["page_cache_evicted"] = "yes"; }) ==
        "'r.json'.raw.page_cache_evicted: expected true or false, found \"yes\"");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["latency_us"]["p99"] = "fast"; }) ==
        "'r.json'.raw.results.latency_us.p99: expected a number, found \"fast\"");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["cpu"].erase("sys_s"); }) ==
        "'r.json'.raw.results.cpu: missing key 'sys_s'");
  CHECK(refusal(good, [](json& j) { j["raw"]["rw"] = "trim"; }) ==
        "'r.json'.raw.rw: 'trim' is not a raw pattern (read, randread, write, randwrite)");
  CHECK(refusal(good, [](json& j) { j["target"] = json::array(); }) ==
        "'r.json'.target: expected a JSON object, found []");
  CHECK(refusal(good, [](json& j) { j["target"].erase("fs_type"); }) == "'r.json'.target: missing key 'fs_type'");
  CHECK(refusal(good, [](json& j) { j["target"]["free_bytes"] = "lots"; }) ==
        "'r.json'.target.free_bytes: expected a non-negative integer in range, found \"lots\"");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["device_io"].erase("bytes_read"); }) ==
        "'r.json'.raw.results.device_io: missing key 'bytes_read'");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["device_io"]["read_ratio"] = "1x"; }) ==
        "'r.json'.raw.results.device_io.read_ratio: expected a number, found \"1x\"");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["device_io"]["devices"][0]["reads"] = -4; }) ==
        "'r.json'.raw.results.device_io.devices[0].reads: expected a non-negative integer in range, found -4");
  CHECK(refusal(good, [](json& j) { j["kind"] = "run"; }) == "'r.json'.kind: 'run' is not a raw document");
  CHECK(refusal(good, [](json& j) { j.erase("warnings"); }) == "'r.json': missing key 'warnings'");
  // Values no raw run writes, named like the type refusals.
  CHECK(refusal(good, [](json& j) { j["raw"]["bs"] = 0; }) ==
        "'r.json'.raw.bs: expected a block size of at least 1 B, found 0");
  CHECK(refusal(good, [](json& j) { j["raw"]["numjobs"] = 0; }) ==
        "'r.json'.raw.numjobs: expected at least 1 job, found 0");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["elapsed_s"] = 0; }) ==
        "'r.json'.raw.results.elapsed_s: expected a time above 0 s for 64 I/Os, found 0");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["elapsed_s"] = -1.5; }) ==
        "'r.json'.raw.results.elapsed_s: expected a time of at least 0 s, found -1.5");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["cpu"]["user_s"] = -0.5; }) ==
        "'r.json'.raw.results.cpu.user_s: expected a time of at least 0 s, found -0.5");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["errors"] = -1; }) ==
        "'r.json'.raw.results.errors: expected a non-negative integer in range, found -1");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["ios"] = 0; }) ==
        "'r.json'.raw.results.bytes: expected 0 B for 0 I/Os, found 4194304");
  // Host rows without their cluster section.
  CHECK(refusal(good, [](json& j) { j["hosts"] = json::array(); }) == "'r.json': missing key 'cluster'");
  // Documents `report --merge` wrote have no stop_reason; older ones no first_error_detail.
  CHECK(refusal(good, [](json& j) { j["raw"]["results"].erase("stop_reason"); }) == "accepted");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"]["stop_reason"] = "completed"; }) ==
        "'r.json'.raw.results.stop_reason: 'completed' is not a raw stop reason (one pass over the region, runtime "
        "reached, stopped early by I/O errors, interrupted (SIGINT), interrupted (SIGTERM))");
  CHECK(refusal(good, [](json& j) { j["raw"]["results"].erase("first_error_detail"); }) == "accepted");
}

TEST_CASE("raw document: the labels and warnings are worked out when it is made", "[raw_document]") {
  RawConfig cfg;
  cfg.filename = "/mnt/t.bin";
  cfg.rw = RawPattern::write;
  cfg.bs = 4096;
  cfg.iodepth = 8;
  RawTarget target;
  target.region_bytes = 1 << 20;
  RawEngineChoice engine;
  engine.name = EngineKind::kPsync;
  engine.reason = "asked for";
  TargetInfo tinfo;
  tinfo.memory_backed = true;
  RawResults res;
  res.ios = 256;
  res.bytes = 256ULL * 4096;
  res.elapsed_s = 0.5;
  res.stop = {.kind = RawStopKind::kOnePass};
  RawDocument d = make_raw_document(RunHeader{}, tinfo, cfg, target, engine, -1, res, {"locked memory: fell back"});
  CHECK(d.raw.cache == "buffered write");
  CHECK(d.raw.writes_to == "page cache (not durable: no fsync)");
  CHECK_FALSE(d.raw.page_cache_evicted);
  REQUIRE(d.warnings.size() == 3);
  CHECK(d.warnings[0] == "locked memory: fell back");
  CHECK(d.warnings[1] == "psync is synchronous: --iodepth 8 runs as 1 request in flight per job");
  CHECK(d.warnings[2] == "memory-backed target: this measures RAM copies, not a device");
  const std::string text = render_raw_text(d);
  CHECK(text.find("ioprobe raw: write 4.00 KiB (4,096 B), iodepth 8, numjobs 1, direct=0 on /mnt/t.bin\n") == 0);
  CHECK(text.find("  IOPS        512\n") != std::string::npos);
  CHECK(text.find("writes      to the page cache, not made durable") != std::string::npos);

  // O_DIRECT reads come from the device; an eviction that worked is kept as such.
  cfg.rw = RawPattern::randread;
  cfg.direct = true;
  target.evicted = 0;
  d = make_raw_document(RunHeader{}, TargetInfo{}, cfg, target, engine, 0.0, res, {});
  CHECK(d.raw.cache == "bypassed (O_DIRECT)");
  CHECK(d.raw.reads_from == "device");
  CHECK(d.raw.writes_to.empty());
  CHECK(d.raw.page_cache_evicted == true);
}

TEST_CASE("raw document: a run across hosts has its cluster and host rows both ways", "[raw_document]") {
  auto part = [](int rank, int host, const std::string& name, uint64_t ios, double elapsed) {
    cluster::RawProcessPart p;
    p.rank = rank;
    p.host_index = host;
    p.hostname = name;
    p.filename = "/data/t.bin.rank" + std::to_string(rank);
    p.target = {{"fs_type", "xfs"}, {"device", "nvme0n1"}, {"memory_backed", false}};
    p.result.ios = ios;
    p.result.bytes = ios * 4096;
    p.result.elapsed_s = elapsed;
    for (uint64_t i = 0; i < ios; ++i) p.result.latency.record(20'000 + i);
    p.result.stop = {.kind = RawStopKind::kOnePass};
    return p;
  };
  const cluster::ClusterRaw c = cluster::merge_raw_parts({part(0, 0, "h1", 100, 1.0), part(1, 0, "h1", 100, 1.2),
                                                          part(2, 1, "h2", 100, 1.1)},
                                                         false);
  RawConfig cfg;
  cfg.filename = "/data/t.bin";
  RawDocument d = make_raw_document(RunHeader{}, TargetInfo{}, cfg, RawTarget{}, RawEngineChoice{}, -1, c.merged, {});
  add_raw_cluster(d, c, "mpirun", 2, "one per process: /data/t.bin.rank<R>");
  REQUIRE(d.cluster);
  CHECK(d.cluster->mpi_ranks == 3);
  REQUIRE(d.hosts.size() == 2);
  CHECK(d.hosts[0].mpi_ranks == std::vector<int>{0, 1});
  CHECK(d.hosts[0].ios == 200);
  CHECK(d.hosts[1].fs_type == "xfs");

  const json written = raw_document_json(d);
  CHECK(written["hosts"][0]["results"]["latency_us"]["count"] == 200);
  const RawDocument back = raw_document_from_json(written, "'m.json'");
  CHECK(raw_document_json(back) == written);
  CHECK(render_raw_text(back) == render_raw_text(d));
  const std::string hosts = render_raw_hosts_text(back);
  CHECK(hosts.find("2 host(s), 3 MPI rank(s); started by mpirun") != std::string::npos);
  CHECK(hosts.find("  h2               ") != std::string::npos);

  json bad = written;
  bad["hosts"][1]["results"]["iops"] = "many";
  CHECK_THROWS_WITH(raw_document_from_json(bad, "'m.json'"),
                    "'m.json'.hosts[1].results.iops: expected a number, found \"many\"");
  bad = written;
  bad["hosts"][0].erase("device_io");
  CHECK_THROWS_WITH(raw_document_from_json(bad, "'m.json'"), "'m.json'.hosts[0]: missing key 'device_io'");
  bad = written;
  bad["hosts"][1]["device_io"]["cold_read_short"] = "no";
  CHECK_THROWS_WITH(raw_document_from_json(bad, "'m.json'"),
                    "'m.json'.hosts[1].device_io.cold_read_short: expected true or false, found \"no\"");
}

TEST_CASE("raw document: the block size reads as every other size, in the text and the page", "[raw_document]") {
  json j = json::parse(raw_file_text(kRawDocs + "/raw_read.json"));
  j["raw"]["bs"] = 4194304;
  j["raw"]["direct"] = true;
  const RawDocument d = raw_document_from_json(j, "'r.json'");
  CHECK(render_raw_text(d).find("ioprobe raw: read 4.00 MiB (4,194,304 B), iodepth 4") == 0);
  const std::string html = render_html_report({j});
  CHECK(html.find("read 4.00 MiB (4,194,304 B), iodepth 4, numjobs 1, O_DIRECT") != std::string::npos);
  CHECK(html.find("4194304 B") == std::string::npos);
}

TEST_CASE("raw document: buffered reads that re-read a region fitting in memory are not labelled device",
          "[raw_document]") {
  // ioprobe raw --rw randread --bs 1000 --size 8MB --runtime 3s (buffered, cold): the region read
  // about 900 times, all but the first pass from the page cache.
  RawConfig cfg;
  cfg.filename = "/tmp/x/raw1.bin";
  cfg.rw = RawPattern::randread;
  cfg.bs = 1000;
  cfg.size = 8'000'000;
  cfg.runtime_s = 3;
  RawTarget target;
  target.region_bytes = 8'000'000;
  target.evicted = 0;  // evicted, and it worked
  RawEngineChoice engine{.name = EngineKind::kIoUring, .reason = "auto"};
  RawResults res;
  res.ios = 7'200'000;
  res.bytes = res.ios * 1000;
  res.elapsed_s = 3;
  res.stop = {.kind = RawStopKind::kRuntime};
  RunHeader header;
  header.host.memory_bytes = 16ULL << 30;
  RawDocument d = make_raw_document(header, TargetInfo{}, cfg, target, engine, 0.0, res, {});
  CHECK(d.raw.cache == "cold");
  CHECK(d.raw.reads_from == "device for the first pass, then the page cache (the region was read 900 times)");
  CHECK(render_raw_text(d).find("evicted before the run (--cache cold): the reads come from the device for the first "
                                "pass, then the page cache (the region was read 900 times)\n") != std::string::npos);
  REQUIRE(d.warnings.size() == 1);
  CHECK(d.warnings[0].find("the region (7.63 MiB (8,000,000 B) per job) fits in memory and the buffered reads re-read "
                           "it") == 0);
  CHECK(raw_document_json(d)["raw"]["reads_from"] == d.raw.reads_from);

  // The devices' accounting measured where the bytes came from: the label follows it.
  DeviceIo io;
  io.source = "diskstats";
  io.bytes_read = 8'000'000;
  io.reads = 100;
  io.interval_s = 3;
  cli::add_raw_device_io(d, io, TargetInfo{});
  REQUIRE(d.raw.results.device_io);
  CHECK(d.raw.results.device_io->bytes_source == "page cache");
  CHECK(d.raw.reads_from == "page cache");
  CHECK(render_raw_text(d).find("the reads come from the page cache, a memory figure, not the device's") !=
        std::string::npos);

  // One pass, or a region larger than memory, or O_DIRECT: device, as before.
  res.bytes = 8'000'000;
  CHECK(make_raw_document(header, TargetInfo{}, cfg, target, engine, 0.0, res, {}).raw.reads_from == "device");
  res.bytes = 7'200'000'000;
  header.host.memory_bytes = 4'000'000;
  CHECK(make_raw_document(header, TargetInfo{}, cfg, target, engine, 0.0, res, {}).raw.reads_from == "device");
  header.host.memory_bytes = 16ULL << 30;
  cfg.direct = true;
  CHECK(make_raw_document(header, TargetInfo{}, cfg, target, engine, 0.0, res, {}).raw.reads_from == "device");
}
