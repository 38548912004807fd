// The checkpoint document of a save that did not complete claims no rate, ratio or size on disk;
// the space preflight's bound on an uncompressed shard holds for a real save.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/chunker.hpp"
#include "checkpoint/run_data.hpp"
#include "checkpoint/saver.hpp"
#include "checkpoint/shard_format.hpp"
#include "core/error.hpp"
#include "report/checkpoint_report.hpp"

using namespace ioprobe::checkpoint;
using nlohmann::json;

namespace {

CheckpointRunData failed_run(bool with_raw) {
  CheckpointRunData d;
  d.state = state_from_size(64ull << 20, 2);
  d.dir = "/x";
  d.save.ok = false;
  d.save.failed_rank = 1;
  d.save.failure = {.err = ENOSPC, .op = "write", .path = "/x/__1_0.distcp.ioprobe-tmp.1", .detail = "4 MiB written"};
  d.save.ranks_done_ns = 500'000'000;
  for (int r = 0; r < 2; ++r) {
    RankSaveResult x;
    x.rank = r;
    x.logical_bytes = 4u << 20;
    x.stored_bytes = 30u << 20;  // queued, mostly never written: must not appear as "on disk"
    x.written_bytes = 4u << 20;
    x.chunks_done = 4;
    x.chunks_total = 32;
    x.total_ns = 500'000'000;
    d.save.ranks.push_back(x);
  }
  if (with_raw) {
    RawWriteResult raw;
    raw.bytes = 64ull << 20;
    raw.max_ns = 100'000'000;
    raw.rank_ns = {raw.max_ns, raw.max_ns};
    d.raw = raw;
  } else {
    d.raw_unavailable = "not enough space before the save: it needs 64.00 MiB, 8.00 MiB are free in /x";
  }
  return d;
}

}  // namespace

TEST_CASE("a failed save's document has null rates, ratio and size on disk, and the text shows none", "[checkpoint]") {
  for (bool with_raw : {true, false}) {
    ioprobe::CheckpointDocument cdoc;
    cdoc.section = ioprobe::checkpoint_section(failed_run(with_raw));
    json doc = {{"checkpoint", ioprobe::checkpoint_section_json(cdoc.section)}};
    doc["checkpoint"]["elapsed_s"] = 1.0;
    const json& s = doc["checkpoint"]["save"];
    for (const char* k : {"ratio", "bytes_on_disk", "throughput_min_rank_bytes_per_s", "write_bytes_per_s",
                          "stored_write_bytes_per_s", "time_to_durable_s"})
      CHECK(s.at(k).is_null());
    for (const auto& r : s.at("ranks")) {
      CHECK(r.at("write_bytes_per_s").is_null());
      CHECK(r.at("bytes_on_disk").is_null());
    }
    CHECK(s.at("written_bytes").get<uint64_t>() == (8u << 20));
    CHECK(s.at("durable_bytes").get<uint64_t>() == 0);
    CHECK(s.at("duration_max_s").get<double>() == Approx(0.5));
    // The schema requires raw_write and comparison; the comparison is marked unavailable.
    CHECK(doc["checkpoint"]["raw_write"].at("available").get<bool>() == with_raw);
    CHECK_FALSE(doc["checkpoint"]["comparison"].at("available").get<bool>());
    CHECK(doc["checkpoint"]["comparison"].at("checkpoint_over_raw").is_null());

    const std::string text = ioprobe::render_checkpoint_text(cdoc);
    INFO(text);
    CHECK(text.find("save FAILED") != std::string::npos);
    CHECK(text.find("completed work: 8 of 64 chunks") != std::string::npos);
    CHECK(text.find("8.00 MiB (8,388,608 B) written to the files before the stop") != std::string::npos);
    CHECK(text.find("throughput (min") == std::string::npos);
    CHECK(text.find("ratio 1") == std::string::npos);
    CHECK(text.find("30.00 MiB") == std::string::npos);
    CHECK(text.find("checkpoint / raw: not available") != std::string::npos);
    // The raw write itself was measured and may be shown; the save has no MB/s of its own.
    const std::string save_part = text.substr(0, text.find("raw sequential write"));
    CHECK(save_part.find("MB/s") == std::string::npos);
  }
}

TEST_CASE("the preflight's uncompressed shard size bounds a real shard within 4 KiB", "[checkpoint][io]") {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/ioprobe-ckpt-size.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back(0);
  REQUIRE(mkdtemp(buf.data()) != nullptr);
  const std::string dir = buf.data();
  for (uint64_t chunk : {uint64_t(1) << 20, uint64_t(3000001), uint64_t(65537)}) {
    StateSpec spec = state_from_size(5'000'003, 1);
    std::vector<ResidentState> states;
    states.emplace_back(spec.ranks[0], UINT64_MAX, 3);
    SaveOptions o;
    o.chunk_bytes = chunk;
    o.io.io_size = 64 * 1024;
    SaveResult r = save_checkpoint(states, dir, o, false, nullptr);
    REQUIRE(r.ok);
    struct stat st {};
    REQUIRE(::stat(shard_path(dir, 0).c_str(), &st) == 0);
    const uint64_t bound = uncompressed_shard_bytes(spec.ranks[0].bytes, spec.ranks[0].regions.size(), chunk);
    INFO("chunk " << chunk << ": file " << st.st_size << " B, bound " << bound << " B");
    CHECK(static_cast<uint64_t>(st.st_size) <= bound);
    CHECK(bound - static_cast<uint64_t>(st.st_size) < 4096);
    ::unlink(shard_path(dir, 0).c_str());
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("the report says which pool compressed and how many workers were busy, measured", "[checkpoint]") {
  CheckpointRunData d;
  d.state = state_from_size(64ull << 20, 2);
  d.dir = "/x";
  d.cpus_allowed = 2;
  d.opts.compress = parse_compression("zstd:1");
  d.opts.compress_threads = 2;
  d.save.ok = true;
  d.save.durable_ns = d.save.ranks_done_ns = 1'000'000'000;
  d.file_bytes = {30u << 20, 30u << 20};
  for (int r = 0; r < 2; ++r) {
    RankSaveResult x;
    x.rank = r;
    x.logical_bytes = x.written_bytes = 32u << 20;
    x.stored_bytes = 30u << 20;
    x.total_ns = 1'000'000'000;
    x.frames = 8;
    x.compress_active_ns = 1'000'000'000;
    x.compress_busy_ns = r == 0 ? 1'500'000'000 : 1'000'000'000;  // 1.5 and 1.0 workers busy
    x.compress_workers_used = 2;
    d.save.ranks.push_back(x);
  }
  RawWriteResult raw;
  raw.bytes = 64ull << 20;
  raw.max_ns = 100'000'000;
  raw.rank_ns = {raw.max_ns, raw.max_ns};
  d.raw = raw;
  d.zstd_probe = ZstdProbe{600e6, 1.1};
  d.zstd_mt_probe = ZstdProbe{300e6, 1.1};
  d.pool_probe = ZstdProbe{1100e6, 1.1};
  ioprobe::CheckpointDocument cdoc;
  cdoc.section = ioprobe::checkpoint_section(d);
  json doc = {{"checkpoint", ioprobe::checkpoint_section_json(cdoc.section)}};
  const json& c = doc["checkpoint"];
  CHECK(c["config"]["compress_pool"] == "ioprobe");
  CHECK(c["config"]["frame_bytes"].get<uint64_t>() == kPieceBytes);
  CHECK(c["config"]["zstd_workers_busy_per_chunk"].get<int>() == 0);  // zstd's pool did not run
  CHECK(c["save"]["compression"]["workers_busy_mean_per_rank"].get<double>() == Approx(1.25));
  CHECK(c["save"]["ranks"][0]["compress_workers_busy_mean"].get<double>() == Approx(1.5));
  CHECK(c["comparison"]["ioprobe_pool_in_memory_bytes_per_s"].get<double>() == Approx(1100e6));
  const std::string text = ioprobe::render_checkpoint_text(cdoc);
  INFO(text);
  CHECK(text.find("ioprobe's own threads (not zstd's pool): 2 per rank") != std::string::npos);
  CHECK(text.find("workers busy (measured: their CPU time in zstd / wall): 1.25 of 2") != std::string::npos);
  CHECK(text.find("zstd's own pool 300.00 MB/s") != std::string::npos);
  CHECK(text.find("ioprobe's threads 1100.00 MB/s") != std::string::npos);

  d.opts.compress_pool = CompressPool::kZstd;
  for (auto& x : d.save.ranks) x.compress_active_ns = x.compress_busy_ns = 0;
  ioprobe::CheckpointDocument zcdoc;
  zcdoc.section = ioprobe::checkpoint_section(d);
  json zdoc = {{"checkpoint", ioprobe::checkpoint_section_json(zcdoc.section)}};
  CHECK(zdoc["checkpoint"]["config"]["compress_pool"] == "zstd");
  CHECK(zdoc["checkpoint"]["config"]["zstd_workers_busy_per_chunk"].get<int>() >= 1);
  CHECK_FALSE(zdoc["checkpoint"]["save"].contains("compression"));
  CHECK(ioprobe::render_checkpoint_text(zcdoc).find("zstd's own pool: 2 worker(s) per rank") != std::string::npos);
}

TEST_CASE("checkpoint / raw at a few MiB or under 0.5 s: a note says the ratio is not meaningful, and what size to use",
          "[checkpoint]") {
  using ioprobe::kRatioMinBytes;
  using ioprobe::ratio_size_note;
  const uint64_t MiB = 1ULL << 20;
  // 4 MiB in a few ms each: too small on both counts; the size to use comes from the slower rate
  // (4 MiB / 0.04 s = 100 MiB/s: 100 MiB in 1 s, below the floor of 1 GiB).
  std::string n = ratio_size_note(4 * MiB, 0.04, 4 * MiB, 0.01);
  INFO(n);
  CHECK(n.find("not meaningful at this size") != std::string::npos);
  CHECK(n.find("use --size 1GiB or more") != std::string::npos);
  // Large but fast (1 GiB in 0.2 s and 0.25 s): the time is too short; the slower 4 GiB/s x 1 s -> 4GiB.
  n = ratio_size_note(1024 * MiB, 0.2, 1024 * MiB, 0.25);
  CHECK(n.find("use --size 4GiB or more") != std::string::npos);
  // Long enough and large enough: no note.
  CHECK(ratio_size_note(kRatioMinBytes, 0.5, 2 * kRatioMinBytes, 0.9).empty());
  // The raw write alone too small also voids the ratio.
  CHECK_FALSE(ratio_size_note(512 * MiB, 2.0, 8 * MiB, 0.05).empty());
}

TEST_CASE("a save whose read-back failed verification shows its rates only marked as of a failed save",
          "[checkpoint]") {
  CheckpointRunData d;
  d.state = state_from_size(64ull << 20, 2);
  d.dir = "/x";
  d.save.ok = true;
  d.save.durable_ns = d.save.ranks_done_ns = 1'000'000'000;
  d.file_bytes = {32u << 20, 32u << 20};
  for (int r = 0; r < 2; ++r) {
    RankSaveResult x;
    x.rank = r;
    x.logical_bytes = x.written_bytes = x.stored_bytes = 32u << 20;
    x.total_ns = 1'000'000'000;
    d.save.ranks.push_back(x);
  }
  RawWriteResult raw;
  raw.bytes = 64ull << 20;
  raw.max_ns = 100'000'000;
  raw.rank_ns = {raw.max_ns, raw.max_ns};
  d.raw = raw;
  RestoreResult rr;
  rr.ok = false;
  rr.wall_ns = 200'000'000;
  for (int r = 0; r < 2; ++r) {
    RankRestoreResult x;
    x.path = "/x/__" + std::to_string(r) + "_0.distcp";
    x.logical_bytes = r == 0 ? 32u << 20 : 8u << 20;
    x.chunks_total = 8;
    x.chunks_verified = r == 0 ? 8 : 2;
    x.total_ns = 100'000'000;
    if (r == 1) {
      x.corrupt = true;
      x.error = {.path = x.path, .detail = "chunk 2 (bytes 8388608..12582912): logical checksum mismatch"};
    }
    rr.ranks.push_back(x);
  }
  d.restore = rr;
  ioprobe::CheckpointDocument doc;
  doc.section = ioprobe::checkpoint_section(d);
  const std::string text = ioprobe::render_checkpoint_text(doc);
  INFO(text);
  CHECK(text.find("save FAILED VERIFICATION") != std::string::npos);
  CHECK(text.find("aggregate write 67.11 MB/s (64.00 MiB/s) of logical state of a save that FAILED VERIFICATION") !=
        std::string::npos);
  CHECK(text.find("(to durable)") == std::string::npos);  // never presented as a good save's rate
  CHECK(text.find("checkpoint / raw: not claimed: the save failed verification") != std::string::npos);
  CHECK(text.find("checkpoint / raw =") == std::string::npos);
  CHECK(text.find("RESTORE FAILED") != std::string::npos);
  const std::string restore_line = text.substr(text.find("\nrestore,"));
  CHECK(restore_line.substr(0, restore_line.find('\n', 1)).find("MB/s") == std::string::npos);
}

TEST_CASE("a checkpoint / raw ratio the report calls not meaningful is not judged against the design target",
          "[checkpoint]") {
  // 64 MiB saved in 1 s against a raw write of 64 MiB in 0.1 s: the raw write is under 0.5 s, so
  // the ratio is not meaningful; the text shows checkpoint / limit but does not call it below 0.90.
  CheckpointRunData d;
  d.state = state_from_size(64ull << 20, 1);
  d.dir = "/x";
  d.cpus_allowed = 2;
  d.save.ok = true;
  d.save.durable_ns = d.save.ranks_done_ns = 1'000'000'000;
  RankSaveResult x;
  x.logical_bytes = x.written_bytes = x.stored_bytes = 64u << 20;
  x.total_ns = 1'000'000'000;
  d.save.ranks.push_back(x);
  RawWriteResult raw;
  raw.bytes = 64ull << 20;
  raw.max_ns = 100'000'000;
  raw.rank_ns = {raw.max_ns};
  d.raw = raw;
  ioprobe::CheckpointDocument cdoc;
  cdoc.section = ioprobe::checkpoint_section(d);
  REQUIRE(cdoc.section.comparison.ratio_meaningful == false);
  std::string text = ioprobe::render_checkpoint_text(cdoc);
  INFO(text);
  CHECK(text.find("not meaningful at this size") != std::string::npos);
  CHECK(text.find("checkpoint / limit = 0.100 (not judged") != std::string::npos);
  CHECK(text.find("below ioprobe's design target") == std::string::npos);
  // Long enough writes (1 GiB raw in 1 s, 1 GiB saved in 2 s): judged as before.
  d.state = state_from_size(1ull << 30, 1);
  d.save.durable_ns = d.save.ranks_done_ns = d.save.ranks[0].total_ns = 2'000'000'000;
  d.save.ranks[0].logical_bytes = d.save.ranks[0].written_bytes = d.save.ranks[0].stored_bytes = 1ull << 30;
  d.raw->bytes = 1ull << 30;
  d.raw->max_ns = 1'000'000'000;
  d.raw->rank_ns = {d.raw->max_ns};
  cdoc.section = ioprobe::checkpoint_section(d);
  text = ioprobe::render_checkpoint_text(cdoc);
  CHECK(text.find("checkpoint / limit = 0.500 (below ioprobe's design target of 0.90") != std::string::npos);
}
