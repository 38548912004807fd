// The typed checkpoint document (report/checkpoint_document.hpp): its JSON both ways, strict
// reading, and documents saved by `ioprobe checkpoint` (tests/fixtures/documents/) read back and
// rendered as the command did.
#include <catch2/catch.hpp>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "checkpoint/chunker.hpp"
#include "checkpoint/run_data.hpp"
#include "core/error.hpp"
#include "report/checkpoint_document.hpp"
#include "report/checkpoint_report.hpp"
#include "report/checkpoint_series.hpp"
#include "report/device_io_report.hpp"
#include "report/document.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

const std::string kCkptDocs = std::string(IOPROBE_FIXTURES) + "/documents";

std::string ckpt_fixture_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

// A compressed save of two ranks with a restore, the async figures, every probe and a series:
// every optional part of the section present.
CheckpointDocument full_checkpoint_document() {
  using namespace checkpoint;
  CheckpointRunData d;
  d.state = state_from_size(64ull << 20, 2);
  d.opts.compress = parse_compression("zstd:1");
  d.opts.compress_threads = 2;
  d.async = true;
  d.baseline_step_s = 0.02;
  d.save.ok = true;
  d.save.durable_ns = 500'000'000;
  d.save.step_s = {0.021, 0.025};
  for (int r = 0; r < 2; ++r) {
    RankSaveResult x;
    x.rank = r;
    x.logical_bytes = 32ull << 20;
    x.stored_bytes = 16ull << 20;
    x.written_bytes = 16ull << 20;
    x.total_ns = 400'000'000;
    x.compress_active_ns = 100;
    x.compress_busy_ns = 150;
    x.compress_workers_used = 2;
    x.chunks_total = x.chunks_done = 1;
    d.save.ranks.push_back(x);
  }
  RawWriteResult raw;
  raw.bytes = 64ull << 20;
  raw.max_ns = 100'000'000;
  raw.rank_ns = {raw.max_ns};
  d.raw = raw;
  d.raw_runs_bytes_per_s = {600e6, 650e6};
  d.raw_after_save_skipped = "not enough free space";
  d.zstd_probe = ZstdProbe{600e6, 1.1};
  d.zstd_mt_probe = ZstdProbe{300e6, 1.1};
  d.pool_probe = ZstdProbe{1100e6, 1.1};
  RestoreResult rr;
  rr.ok = false;
  for (int r = 0; r < 2; ++r) {
    RankRestoreResult x;
    x.path = "/ckpt/__" + std::to_string(r) + "_0.distcp";
    x.logical_bytes = 32ull << 20;
    x.total_ns = 200'000'000;
    x.chunks_total = 1;
    if (r == 1)
      x.error = {.path = x.path, .detail = "chunk 0 of 1 (stored bytes 0..10, logical bytes 0..20): checksum mismatch"};
    rr.ranks.push_back(x);
  }
  d.restore = rr;
  CheckpointDocument doc;
  doc.header.ioprobe_version = "0.1.0";
  doc.header.command = {"ioprobe", "checkpoint"};
  doc.header.created_utc = "2026-12-07T06:00:00Z";
  doc.header.host.hostname = "h1";
  doc.target.path = "/ckpt";
  doc.target.fs_type = "ext4";
  doc.section = checkpoint_section(d);
  doc.section.elapsed_s = 1.5;
  DeviceIo save_io;
  save_io.source = "diskstats";
  save_io.devices = {{"sda", 0, 4096, 0, 1}};
  save_io.bytes_written = 4096;
  save_io.writes = 1;
  doc.section.save.device_io = checkpoint_save_device_io(save_io, 8192, 16384);
  doc.section.save.device_io->section.scope = "every host's own devices";
  DeviceIo restore_io;
  restore_io.source = "diskstats";
  restore_io.devices = {{"sda", 2, 0, 1, 0}};
  restore_io.bytes_read = 2;
  restore_io.reads = 1;
  doc.section.restore->device_io = device_io_section(restore_io, DeviceRef::kRead, 2);
  doc.section.restore->served_from = "device";
  doc.section.save.ranks[1].host = "h2";
  doc.section.restore->ranks[0].shard_rank = 0;
  doc.section.restore->ranks[0].read_on_host = "h1";
  doc.section.restore->ranks[0].written_on_host = "h2";
  SeriesResult series;
  series.saves.push_back({1, 64ull << 20, 32ull << 20, 0.5, 134e6, 0.1, 0.2, 300e6});
  series.saves.push_back({2, 64ull << 20, 32ull << 20, 0.6, 111e6, 0.1, 0.2, std::nullopt});
  series.elapsed_s = 1.2;
  series.stopped_by = SeriesStop::kRepeat;
  doc.section.series = checkpoint_series_section(series, 2, 0, true);
  doc.partial = true;
  doc.warnings = {"a warning"};
  doc.cluster = CheckpointClusterSection{.launcher = "mpirun",
                                         .hosts = 2,
                                         .mpi_ranks = 2,
                                         .ckpt_ranks = 2,
                                         .dir_placement = "shared",
                                         .restore_placement = "each host read the other's shards",
                                         .merge = "max over ranks",
                                         .save_bytes = 64ull << 20,
                                         .save_duration_max_s = std::nullopt,  // the save failed: null
                                         .save_bytes_per_s = std::nullopt,
                                         .restores_from_other_host = 2};
  CheckpointHostSection h1{.hostname = "h1",
                           .host_index = 0,
                           .mpi_ranks = {0},
                           .ckpt_ranks = {0},
                           .save_bytes = 32ull << 20,
                           .save_duration_max_s = 0.25,
                           .time_to_durable_s = 0.3,
                           .save_bytes_per_s = 111e6,
                           .min_rank_bytes_per_s = 111e6};
  h1.save_device_io = device_io_section(save_io, DeviceRef::kWrite, 4096);
  h1.restore = CheckpointHostRestore{.bytes = 32ull << 20,
                                     .duration_max_s = 0.2,
                                     .bytes_per_s = 160e6,
                                     .restored_from = {"h2"},
                                     .error = "checksum mismatch",
                                     .device_io = device_io_section(restore_io, DeviceRef::kRead, 2),
                                     .served_from = "device"};
  CheckpointHostSection h2 = h1;
  h2.hostname = "h2";
  h2.host_index = 1;
  h2.mpi_ranks = h2.ckpt_ranks = {1};
  h2.save_device_io.reset();  // this host sent no save accounting
  h2.restore->error.reset();
  doc.hosts = {h1, h2};
  return doc;
}

}  // namespace

TEST_CASE("checkpoint document: every part written, read back and written again gives the same JSON",
          "[checkpoint_document]") {
  const CheckpointDocument doc = full_checkpoint_document();
  const json first = checkpoint_document_json(doc);
  // The optional parts this document must exercise are in the JSON.
  CHECK(first["checkpoint"]["save"].contains("async"));
  CHECK(first["checkpoint"]["save"].contains("compression"));
  CHECK(first["checkpoint"]["comparison"].contains("checkpoint_over_measured_limit"));
  CHECK(first["checkpoint"]["raw_write"].contains("after_save_skipped"));
  CHECK(first["checkpoint"]["restore"].contains("error"));
  CHECK(first["checkpoint"]["restore"]["ranks"][0]["read_on_host"] == "h1");
  CHECK(first["checkpoint"]["series"]["saves"][1]["restore_bytes_per_s"].is_null());
  const CheckpointDocument back = checkpoint_document_from_json(first, "'t.json'");
  CHECK(dump(checkpoint_document_json(back)) == dump(first));
  CHECK(render_checkpoint_text(back) == render_checkpoint_text(doc));
  CHECK(render_series_text(back) == render_series_text(doc));
}

TEST_CASE("checkpoint document: the cluster and hosts sections are read strictly, naming the field's path",
          "[checkpoint_document]") {
  const json good = checkpoint_document_json(full_checkpoint_document());
  CHECK(good["cluster"]["save_bytes_per_s"].is_null());
  CHECK(good["cluster"]["restores_from_other_host"] == 2);
  CHECK(good["hosts"][0]["results"]["restore_error"] == "checksum mismatch");
  CHECK(!good["hosts"][1]["results"].contains("save_device_io"));
  CHECK_THAT(render_checkpoint_text(checkpoint_document_from_json(good, "'t.json'")),
             Catch::Contains("2 host(s), 2 MPI rank(s), 2 checkpoint rank(s)") &&
                 Catch::Contains("h1               save device I/O"));
  const auto refusal = [](const json& j) -> std::string {
    try {
      checkpoint_document_from_json(j, "'t.json'");
      return "";
    } catch (const UsageError& e) {
      return e.what();
    }
  };
  json bad = good;
  bad["cluster"].erase("dir_placement");
  CHECK(refusal(bad) == "'t.json'.cluster: missing key 'dir_placement'");
  bad = good;
  bad["cluster"]["ckpt_ranks"] = "2";
  CHECK(refusal(bad) == "'t.json'.cluster.ckpt_ranks: expected a non-negative integer in range, found \"2\"");
  bad = good;
  bad["hosts"][1]["results"]["save_bytes"] = "32 MiB";
  CHECK(refusal(bad) ==
        "'t.json'.hosts[1].results.save_bytes: expected a non-negative integer in range, found \"32 MiB\"");
  bad = good;
  bad["hosts"][0]["results"]["restore_device_io"].erase("bytes_read");
  CHECK(refusal(bad) == "'t.json'.hosts[0].results.restore_device_io: missing key 'bytes_read'");
  bad = good;
  bad["hosts"][0]["mpi_ranks"][0] = 0.5;
  CHECK(refusal(bad) == "'t.json'.hosts[0].mpi_ranks[0]: expected an integer in range, found 0.5");
  bad = good;
  bad.erase("hosts");
  CHECK(refusal(bad) == "'t.json': missing key 'hosts'");
}

TEST_CASE("checkpoint document: a missing or mistyped field is refused naming its path", "[checkpoint_document]") {
  const json good = checkpoint_document_json(full_checkpoint_document());
  REQUIRE_NOTHROW(checkpoint_document_from_json(good, "'t.json'"));

  json no_ok = good;
  no_ok["checkpoint"]["save"].erase("ok");
  CHECK_THROWS_WITH(checkpoint_document_from_json(no_ok, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint.save: missing key 'ok'"));
  json bad_chunk = good;
  bad_chunk["checkpoint"]["config"]["chunk_bytes"] = "1GiB";
  CHECK_THROWS_WITH(checkpoint_document_from_json(bad_chunk, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint.config.chunk_bytes: expected"));
  json bad_rank = good;
  bad_rank["checkpoint"]["save"]["ranks"][1]["duration_s"] = nullptr;
  CHECK_THROWS_WITH(checkpoint_document_from_json(bad_rank, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint.save.ranks[1].duration_s: expected a number"));
  json bad_restore = good;
  bad_restore["checkpoint"]["restore"]["ranks"][0].erase("chunks_total");
  CHECK_THROWS_WITH(checkpoint_document_from_json(bad_restore, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint.restore.ranks[0]: missing key 'chunks_total'"));
  json bad_restore_io = good;
  bad_restore_io["checkpoint"]["restore"]["device_io"]["bytes_read"] = 2.5;
  CHECK_THROWS_WITH(checkpoint_document_from_json(bad_restore_io, "'t.json'"),
                    Catch::Contains(
                        "'t.json'.checkpoint.restore.device_io.bytes_read: expected a non-negative integer"));
  json no_restore_source = good;
  no_restore_source["checkpoint"]["restore"]["device_io"].erase("bytes_source");
  CHECK_THROWS_WITH(checkpoint_document_from_json(no_restore_source, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint.restore.device_io: missing key 'bytes_source'"));
  json bad_save_io = good;
  bad_save_io["checkpoint"]["save"]["device_io"]["written_over_logical"] = "half";
  CHECK_THROWS_WITH(checkpoint_document_from_json(bad_save_io, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint.save.device_io.written_over_logical: expected a number"));
  json no_logical = good;
  no_logical["checkpoint"]["save"]["device_io"].erase("logical_bytes");
  CHECK_THROWS_WITH(checkpoint_document_from_json(no_logical, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint.save.device_io: missing key 'logical_bytes'"));
  json no_restore_io = good;  // not measured: no device_io, none read back
  no_restore_io["checkpoint"]["restore"].erase("device_io");
  CHECK_FALSE(checkpoint_document_from_json(no_restore_io, "'t.json'").section.restore->device_io);
  json bad_series = good;
  bad_series["checkpoint"]["series"]["write_bytes_per_s"] = {{"min", 1}, {"max", 2}};
  CHECK_THROWS_WITH(checkpoint_document_from_json(bad_series, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint.series.write_bytes_per_s: missing key 'median'"));
  json no_state = good;
  no_state["checkpoint"].erase("state");
  CHECK_THROWS_WITH(checkpoint_document_from_json(no_state, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint: missing key 'state'"));
  json other_kind = good;
  other_kind["kind"] = "raw";
  CHECK_THROWS_WITH(checkpoint_document_from_json(other_kind, "'t.json'"),
                    Catch::Contains("'t.json'.kind: 'raw' is not a checkpoint document"));
  json no_warnings = good;
  no_warnings.erase("warnings");
  CHECK_THROWS_WITH(checkpoint_document_from_json(no_warnings, "'t.json'"),
                    Catch::Contains("'t.json': missing key 'warnings'"));
}

TEST_CASE("checkpoint document: documents `ioprobe checkpoint` saved read back, write the same JSON and render the "
          "same text",
          "[checkpoint_document]") {
  // Saved with `ioprobe checkpoint --json` before the document was typed, with the text `ioprobe
  // report` printed for each: a compressed save with a restore, a series of async saves, a
  // --restore-only and a --verify-only read-back.
  for (const char* name : {"checkpoint_small", "checkpoint_series", "checkpoint_readback", "checkpoint_verify"}) {
    INFO(name);
    const json saved = read_json_file(kCkptDocs + "/" + name + ".json");
    const CheckpointDocument doc = checkpoint_document_from_json(saved, std::string("'") + name + ".json'");
    CHECK(dump(checkpoint_document_json(doc)) == dump(saved));
    CHECK(render_checkpoint_text(doc) + render_series_text(doc) == ckpt_fixture_text(kCkptDocs + "/" + name + ".txt"));
  }
}

TEST_CASE("checkpoint document: a read-back's section is typed and refused naming the field", "[checkpoint_document]") {
  const json saved = read_json_file(kCkptDocs + "/checkpoint_verify.json");
  const CheckpointDocument doc = checkpoint_document_from_json(saved, "'v.json'");
  REQUIRE(doc.readback);
  REQUIRE(doc.readback->verify);
  CHECK_FALSE(doc.readback->restore);
  CHECK(doc.readback->verify->chunks_total == doc.readback->verify->chunks_verified);
  CHECK(doc.readback->shards.size() == 1);

  json no_verify = saved;
  no_verify["checkpoint"].erase("verify");
  CHECK_THROWS_WITH(checkpoint_document_from_json(no_verify, "'v.json'"),
                    Catch::Contains("'v.json'.checkpoint: missing key 'verify'"));
  json bad_shard = saved;
  bad_shard["checkpoint"]["shards"][0]["file_bytes"] = -1;
  CHECK_THROWS_WITH(checkpoint_document_from_json(bad_shard, "'v.json'"),
                    Catch::Contains("'v.json'.checkpoint.shards[0].file_bytes: expected a non-negative integer"));
  json bad_mode = saved;
  bad_mode["checkpoint"]["mode"] = "save";
  CHECK_THROWS_WITH(checkpoint_document_from_json(bad_mode, "'v.json'"),
                    Catch::Contains("'v.json'.checkpoint.mode: 'save' is not a read-back's"));
  json restore = read_json_file(kCkptDocs + "/checkpoint_readback.json");
  restore["checkpoint"]["restore"]["ranks"][0]["decode_wait_s"] = "0.1";
  CHECK_THROWS_WITH(checkpoint_document_from_json(restore, "'r.json'"),
                    Catch::Contains("'r.json'.checkpoint.restore.ranks[0].decode_wait_s: expected a number"));
}

TEST_CASE("checkpoint document: a save's and a restore's failures are records, written with their line, read back "
          "with their errno and rendered with the hint",
          "[checkpoint_document]") {
  CheckpointDocument doc = full_checkpoint_document();
  // io_uring could not start its worker threads: error_hint names the thread limits.
  doc.section.save.failure = ErrorRecord{.err = ECANCELED, .op = "write", .path = "/ckpt/__0_0.distcp.tmp\n"};
  const json j = checkpoint_document_json(doc);
  const json& save = j["checkpoint"]["save"];
  CHECK(save["failure"] == error_line(*doc.section.save.failure));
  CHECK(save["failure_detail"]["errno_name"] == "ECANCELED");
  CHECK(save["failure_detail"]["path"] == "/ckpt/__0_0.distcp.tmp\\x0A");  // escaped, as every path written
  CHECK(j["checkpoint"]["restore"]["error"] ==
        "/ckpt/__1_0.distcp: chunk 0 of 1 (stored bytes 0..10, logical bytes 0..20): checksum mismatch");

  const CheckpointDocument back = checkpoint_document_from_json(j, "'t.json'");
  REQUIRE(back.section.save.failure);
  CHECK(back.section.save.failure->err == ECANCELED);
  CHECK(back.section.save.failure->same_failure(*doc.section.save.failure));
  REQUIRE(back.section.restore->error);
  CHECK(back.section.restore->error->path == "/ckpt/__1_0.distcp");
  CHECK(dump(checkpoint_document_json(back)) == dump(j));
  const std::string text = render_checkpoint_text(back);
  CHECK_THAT(text, Catch::Contains("  FAILED: " + error_line(*doc.section.save.failure) + "\n  "));
  CHECK_THAT(text, Catch::Contains("io-wq"));  // the hint, on its own line

  // A document written before the record: its line alone, kept as the record's detail.
  json old = j;
  old["checkpoint"]["save"].erase("failure_detail");
  old["checkpoint"]["save"]["failure"] = "checkpoint save failed: write /x: No space left on device (ENOSPC)";
  const CheckpointDocument was = checkpoint_document_from_json(old, "'old.json'");
  CHECK(was.section.save.failure->detail == old["checkpoint"]["save"]["failure"]);
  CHECK(checkpoint_document_json(was)["checkpoint"]["save"]["failure"] == old["checkpoint"]["save"]["failure"]);

  json bad = j;
  bad["checkpoint"]["restore"]["error_detail"]["errno"] = "EIO";
  CHECK_THROWS_WITH(checkpoint_document_from_json(bad, "'t.json'"),
                    Catch::Contains("'t.json'.checkpoint.restore.error_detail.errno: expected"));
}
