// The merge of a checkpoint across hosts (checkpoint/cluster_parts) and its wire form
// (report/checkpoint_cluster_json), and the failure list every process of a job gets (cluster/collective).
#include <catch2/catch.hpp>

#include "cluster/gather.hpp"
#include "core/error.hpp"

#include "checkpoint/cluster_parts.hpp"
#include "cluster/collective.hpp"
#include "comm/comm.hpp"
#include "report/checkpoint_cluster_json.hpp"

using namespace ioprobe;
using namespace ioprobe::checkpoint;

namespace {

// A process that wrote `n` ranks starting at global rank `first`, each `bytes` in `ns`.
CheckpointPart part(int mpi_rank, int host, const std::string& name, int first, int n, uint64_t bytes,
                    std::vector<int64_t> ns, int64_t durable_ns) {
  CheckpointPart p;
  p.mpi_rank = mpi_rank;
  p.host_index = host;
  p.hostname = name;
  p.save.ok = true;
  p.save.durable_ns = durable_ns;
  p.save.ranks_done_ns = durable_ns - 1000;
  for (int i = 0; i < n; ++i) {
    RankState st;
    st.rank = first + i;
    st.bytes = bytes;
    st.regions.push_back({TensorKind::kWeightsBf16, 0, bytes});
    p.state.push_back(st);
    RankSaveResult r;
    r.rank = first + i;
    r.logical_bytes = r.stored_bytes = r.written_bytes = bytes;
    r.total_ns = ns[static_cast<size_t>(i)];
    r.direct = true;
    p.save.ranks.push_back(r);
    p.file_bytes.push_back(bytes + 100);
    p.save.final_paths.push_back("/d/__" + std::to_string(first + i) + "_0.distcp");
  }
  return p;
}

void add_restore(CheckpointPart& p, int from_first, int n, const std::string& writer, uint64_t bytes, int64_t ns) {
  RestoreResult r;
  r.ok = true;
  r.wall_ns = ns;
  for (int i = 0; i < n; ++i) {
    RankRestoreResult x;
    x.path = "/d/__" + std::to_string(from_first + i) + "_0.distcp";
    x.logical_bytes = bytes;
    x.total_ns = ns;
    x.chunks_verified = x.chunks_total = 1;
    r.ranks.push_back(x);
    p.restore_shards.push_back(from_first + i);
  }
  p.restore = r;
  p.restore_writer_host = writer;
}

}  // namespace

TEST_CASE("checkpoint across hosts: bytes add, duration is the slowest process's, rows per rank and host",
          "[checkpoint][cluster]") {
  // Two hosts x 1 process x 2 ranks; given out of order.
  std::vector<CheckpointPart> parts = {part(1, 1, "h2", 2, 2, 3000, {3'000'000'000, 1'000'000'000}, 3'500'000'000),
                                       part(0, 0, "h1", 0, 2, 1000, {1'000'000'000, 2'000'000'000}, 2'100'000'000)};
  add_restore(parts[0], 0, 2, "h1", 1000, 500'000'000);  // h2 reads h1's shards
  add_restore(parts[1], 2, 2, "h2", 3000, 700'000'000);  // h1 reads h2's
  const CheckpointCluster c = merge_checkpoint_parts(parts);
  REQUIRE(c.state.size() == 4);
  REQUIRE(c.save.ranks.size() == 4);
  for (int g = 0; g < 4; ++g) {
    CHECK(c.state[static_cast<size_t>(g)].rank == g);
    CHECK(c.save.ranks[static_cast<size_t>(g)].rank == g);
  }
  CHECK(c.rank_host == std::vector<std::string>{"h1", "h1", "h2", "h2"});
  CHECK(c.save.ok);
  CHECK(c.save.durable_ns == 3'500'000'000);  // max over processes (MLPerf: max over ranks)
  CHECK(c.file_bytes == std::vector<uint64_t>{1100, 1100, 3100, 3100});
  CHECK(c.save.final_paths.size() == 4);
  REQUIRE(c.hosts.size() == 2);
  CHECK(c.hosts[0].hostname == "h1");
  CHECK(c.hosts[0].save.logical_bytes == 2000);
  CHECK(c.hosts[0].save.duration_max_ns == 2'000'000'000);
  CHECK(c.hosts[1].save.logical_bytes == 6000);
  CHECK(c.hosts[1].durable_ns == 3'500'000'000);
  CHECK(c.hosts[0].save.logical_bytes + c.hosts[1].save.logical_bytes == 8000);
  // The cluster's throughput: total bytes / the slowest rank's time to durable.
  SaveTotals all;
  for (const auto& h : c.hosts) all.merge(h.save);
  CHECK(all.logical_bytes == 8000);
  CHECK(rate_bytes_per_s(all.logical_bytes, c.save.durable_ns) == Approx(8000 / 3.5));
  // Restore rows sorted by the shard they read; every shard read on the other host.
  REQUIRE(c.restore);
  CHECK(c.restore->ok);
  CHECK(c.restore_shards == std::vector<int>{0, 1, 2, 3});
  CHECK(c.restore_reader_host == std::vector<std::string>{"h2", "h2", "h1", "h1"});
  CHECK(c.restores_from_other_host == 4);
  CHECK(c.hosts[0].restored_from == std::vector<std::string>{"h2"});
  CHECK(c.restore->wall_ns == 700'000'000);
  CHECK(c.warnings.empty());
}

TEST_CASE("checkpoint across hosts: a failed process fails the save; numbering gaps and overlaps are refused",
          "[checkpoint][cluster]") {
  std::vector<CheckpointPart> parts = {part(0, 0, "h1", 0, 1, 10, {1}, 2), part(1, 1, "h2", 1, 1, 10, {1}, 2)};
  parts[1].save.ok = false;
  parts[1].save.failed_rank = 1;
  parts[1].save.failure = {.err = ENOSPC, .op = "write", .path = "/x/__1_0.distcp"};
  const CheckpointCluster c = merge_checkpoint_parts(parts);
  CHECK_FALSE(c.save.ok);
  CHECK(error_line(c.save.failure) == "host h2 (process 1): write /x/__1_0.distcp: " + errno_text(ENOSPC));
  CHECK(c.save.failure.err == ENOSPC);
  // A process interrupted before its save started sends no save rows: its ranks count as empty.
  auto cut = parts;
  cut[1].save = SaveResult{};
  cut[1].save.interrupted = true;
  const CheckpointCluster ci = merge_checkpoint_parts(cut);
  CHECK(ci.save.interrupted);
  CHECK_FALSE(ci.save.ok);
  REQUIRE(ci.save.ranks.size() == 2);
  CHECK(ci.save.ranks[1].rank == 1);
  CHECK(ci.save.ranks[1].logical_bytes == 0);
  auto overlap = parts;
  overlap[1] = part(1, 1, "h2", 0, 1, 10, {1}, 2);
  CHECK_THROWS_WITH(merge_checkpoint_parts(overlap), Catch::Contains("rank 0 was written by two processes"));
  auto gap = parts;
  gap[1] = part(1, 1, "h2", 2, 1, 10, {1}, 2);
  CHECK_THROWS_WITH(merge_checkpoint_parts(gap), Catch::Contains("none wrote rank 1"));
}

TEST_CASE("raw write baselines of every host merge: bytes summed, duration the slowest rank's",
          "[checkpoint][cluster]") {
  RawWriteResult a, b;
  a.bytes = 100;
  a.rank_ns = {1'000'000'000};
  a.max_ns = 1'000'000'000;
  a.direct = true;
  b.bytes = 300;
  b.rank_ns = {2'000'000'000, 1'500'000'000};
  b.max_ns = 2'000'000'000;
  b.direct = false;
  const RawWriteResult m = merge_raw_writes({a, b});
  CHECK(m.bytes == 400);
  CHECK(m.rank_ns.size() == 3);
  CHECK(m.max_ns == 2'000'000'000);
  CHECK_FALSE(m.direct);
  CHECK(m.bytes_per_s() == Approx(200));
  const RawWriteResult back = decode_raw_write(encode_raw_write(b));
  CHECK(back.bytes == 300);
  CHECK(back.rank_ns == b.rank_ns);
}

TEST_CASE("restore sources: every process reads another host's shards when the hosts allow", "[checkpoint][cluster]") {
  CHECK(restore_sources({0, 0, 1, 1}) == std::vector<int>{2, 3, 0, 1});  // 2 hosts x 2 processes
  CHECK(restore_sources({0, 1}) == std::vector<int>{1, 0});
  CHECK(restore_sources({0, 0}) == std::vector<int>{1, 0});  // one host: another process's
  CHECK(restore_sources({0}) == std::vector<int>{0});
  const std::vector<int> s = restore_sources({0, 0, 0, 1, 1, 1});
  for (size_t p = 0; p < s.size(); ++p) CHECK((p < 3) != (s[p] < 3));  // always the other host
}

TEST_CASE("a checkpoint part survives its wire form", "[checkpoint][cluster]") {
  CheckpointPart p = part(3, 1, "h2", 4, 2, 12345, {7, 8}, 99);
  p.save.ranks[1].err = 28;
  p.save.ranks[1].err_op = "write";
  add_restore(p, 0, 2, "h1", 12345, 55);
  const CheckpointPart q = cluster::decode_gathered<CheckpointPart>(nlohmann::json(p).dump(), 0, "gather the results");
  CHECK(q.mpi_rank == 3);
  CHECK(q.hostname == "h2");
  REQUIRE(q.state.size() == 2);
  CHECK(q.state[1].rank == 5);
  CHECK(q.state[1].regions.at(0).bytes == 12345);
  CHECK(q.save.ranks[1].total_ns == 8);
  CHECK(q.save.ranks[1].err == 28);
  CHECK(q.save.ranks[1].err_op == "write");
  CHECK(q.save.durable_ns == 99);
  CHECK(q.file_bytes == p.file_bytes);
  REQUIRE(q.restore);
  CHECK(q.restore->ranks.size() == 2);
  CHECK(q.restore_shards == std::vector<int>{0, 1});
  CHECK(q.restore_writer_host == "h1");
  CHECK_THROWS_WITH(cluster::decode_gathered<CheckpointPart>("{\"v\":2}", 1, "gather the results"),
                    Catch::Contains("same ioprobe build"));
  nlohmann::json bad = p;
  bad["save"]["ranks"][0][2] = -1;  // logical_bytes
  CHECK_THROWS_WITH(cluster::decode_gathered<CheckpointPart>(bad.dump(), 1, "gather the results"),
                    Catch::Contains("checkpoint part.save.ranks[0][2]: expected a non-negative integer"));
  bad = p;
  bad["state"][0][2][0][0] = 9;  // a tensor kind that does not exist
  CHECK_THROWS_WITH(cluster::decode_gathered<CheckpointPart>(bad.dump(), 1, "gather the results"),
                    Catch::Contains("checkpoint part.state[0][2][0][0]: 9 is not a tensor kind"));
}

TEST_CASE("checkpoint across hosts: each host's restore is accounted once on its devices, the job's is their sum",
          "[checkpoint][cluster]") {
  // Two hosts x 2 processes x 1 rank; each process restores the shard of the process 2 places on.
  auto io = [](const std::string& dev, uint64_t read, double interval) {
    DeviceIo d;
    d.source = "diskstats";
    d.devices.push_back({dev, read, 0, read / 4096, 0});
    d.bytes_read = read;
    d.reads = read / 4096;
    d.interval_s = interval;
    return d;
  };
  std::vector<CheckpointPart> parts;
  const char* names[] = {"h1", "h1", "h2", "h2"};
  for (int p = 0; p < 4; ++p) {
    parts.push_back(part(p, p / 2, names[p], p, 1, 1000, {1000}, 2000));
    add_restore(parts.back(), (p + 2) % 4, 1, names[(p + 2) % 4], 1000, 500);
    // Every process of a host measured the same devices; the host's first process counts.
    parts.back().restore_device_io = io(p < 2 ? "sda" : "sdb", p % 2 ? 999999 : p == 0 ? 110 : 4400, 0.5 + p);
  }
  // The wire form keeps the accounting.
  const CheckpointPart back = cluster::decode_gathered<CheckpointPart>(nlohmann::json(parts[2]).dump(), 0,
                                                                       "gather the results");
  REQUIRE(back.restore_device_io);
  CHECK(back.restore_device_io->bytes_read == 4400);
  CHECK(back.restore_device_io->devices.at(0).name == "sdb");
  const CheckpointCluster c = merge_checkpoint_parts(parts);
  REQUIRE(c.hosts.size() == 2);
  REQUIRE(c.hosts[0].restore_device_io);
  CHECK(c.hosts[0].restore_device_io->bytes_read == 110);   // process 0's, not process 1's
  CHECK(c.hosts[1].restore_device_io->bytes_read == 4400);  // process 2's
  CHECK(c.hosts[0].restore_file_bytes == 2 * 1100);         // the two shard files h1 read (bytes on disk)
  CHECK(c.hosts[1].restore_file_bytes == 2 * 1100);
  REQUIRE(c.restore_device_io);
  CHECK(c.restore_device_io->bytes_read == 110 + 4400);
  CHECK(c.restore_device_io->hosts == 2);
  CHECK(c.restore_file_bytes == 4 * 1100);
  // The document: a row per host with its own accounting and label, the job's sum in restore.
  const std::vector<CheckpointHostSection> hosts = checkpoint_host_sections(c);
  REQUIRE(hosts[0].restore);
  REQUIRE(hosts[1].restore);
  CHECK(hosts[0].restore->device_io.io.bytes_read == 110);
  CHECK(hosts[0].restore->device_io.reference_bytes == 2200);
  CHECK(hosts[0].restore->served_from == "page cache");  // 110 B read for 2200 B of shards: 5%
  CHECK(hosts[1].restore->served_from == "device");      // 4400 B for 2200 B
  CheckpointSection ck;
  ck.restore.emplace();
  add_cluster_restore_device_io(ck, c);
  REQUIRE(ck.restore->device_io);
  CHECK(ck.restore->device_io->io.bytes_read == 4510);
  CHECK(ck.restore->device_io->reference_bytes == 4400);
  CHECK(ck.restore->served_from == "device");
}

TEST_CASE("raise_failures names every process, one line per distinct message", "[cluster]") {
  comm::LocalComm comm;  // rank 0: holds the message
  try {
    cluster::raise_failures(comm, {"2 --size: bad", "", "2 --size: bad", "1 no space"}, {"h1", "h1", "h2", "h2"},
                            "step");
    FAIL("no failure raised");
  } catch (const cluster::JobFailure& e) {
    const std::string m = e.what();
    CHECK(e.exit_code() == 2);
    CHECK(m.find("3 of 4 processes failed (step)") != std::string::npos);
    CHECK(m.find("host h1 (rank 0), host h2 (rank 2): --size: bad") != std::string::npos);
    CHECK(m.find("host h2 (rank 3): no space") != std::string::npos);
  }
}
