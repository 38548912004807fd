// Save -> restore -> verify through the real writer (io_uring, O_DIRECT where the temporary
// directory's filesystem accepts it), with chunk sizes that are not multiples of 4096, and a
// flipped byte that restore must catch.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/restorer.hpp"
#include "checkpoint/saver.hpp"
#include "core/error.hpp"
#include "temp_dir.hpp"

using namespace ioprobe::checkpoint;

namespace {

SaveResult save(TempDir& d, std::vector<ResidentState>& states, const SaveOptions& o) {
  return save_checkpoint(states, d.path, o, false, nullptr);
}

std::vector<ResidentState> make_states(uint64_t bytes, int ranks) {
  StateSpec s = state_from_size(bytes, ranks);
  std::vector<ResidentState> v;
  for (auto& r : s.ranks) v.emplace_back(r, UINT64_MAX, 11 + r.rank);
  return v;
}

void flip_byte(const std::string& path, off_t off) {
  int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char c = 0;
  REQUIRE(::pread(fd, &c, 1, off) == 1);
  c ^= 0x40;
  REQUIRE(::pwrite(fd, &c, 1, off) == 1);
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

TEST_CASE("save and restore round-trip with chunk sizes that are not multiples of 4096", "[checkpoint][io]") {
  struct Case {
    const char* compress;
    bool group;
    uint64_t chunk;
    uint64_t bytes;
  };
  const Case cases[] = {{"none", false, 4097, 300001},
                        {"none", true, 1000003, 3000017},
                        {"zstd:1", false, 65537, 2000003},
                        {"zstd:3", true, 1234567, 5000011},
                        {"zstd:1", false, 1, 5000}};
  for (const Case& c : cases) {
    INFO(c.compress << " group " << c.group << " chunk " << c.chunk);
    TempDir d;
    auto states = make_states(c.bytes, 2);
    SaveOptions o;
    o.chunk_bytes = c.chunk;
    o.compress = parse_compression(c.compress);
    o.compress_threads = 2;
    o.byte_group = c.group;
    o.io.io_size = 64 * 1024;
    SaveResult r = save(d, states, o);
    REQUIRE(r.ok);
    REQUIRE(r.final_paths.size() == 2);
    CHECK(d.count_files() == 2);  // no temporary files left
    uint64_t logical = 0;
    for (auto& rr : r.ranks) logical += rr.logical_bytes;
    CHECK(logical == c.bytes);
    RestoreResult rs = restore_checkpoint(r.final_paths, 1 << 20);
    for (auto& x : rs.ranks) INFO(error_line(x.error));
    CHECK(rs.ok);
    uint64_t restored = 0;
    for (auto& x : rs.ranks) restored += x.logical_bytes;
    CHECK(restored == c.bytes);
  }
}

TEST_CASE("a flipped byte is caught at restore, naming the chunk", "[checkpoint][io]") {
  for (const char* comp : {"none", "zstd:1"}) {
    INFO(comp);
    TempDir d;
    auto states = make_states(3000000, 1);
    SaveOptions o;
    o.chunk_bytes = 100000;
    o.compress = parse_compression(comp);
    o.io.io_size = 64 * 1024;
    SaveResult r = save(d, states, o);
    REQUIRE(r.ok);
    flip_byte(r.final_paths[0], 1234567);
    RestoreResult rs = restore_checkpoint(r.final_paths, 1 << 20);
    CHECK_FALSE(rs.ok);
    CHECK(rs.ranks[0].corrupt);
    CHECK(rs.ranks[0].error.detail.find("chunk") != std::string::npos);
  }
}

TEST_CASE("async save: time to durable ends with the last rank, not with the training step in flight",
          "[checkpoint][io]") {
  TempDir d;
  auto states = make_states(2u << 20, 1);
  SaveOptions o;
  o.io.io_size = 256 * 1024;
  TrainingEmulator emu(0.5);  // a 2 MiB save takes milliseconds; the step in flight half a second
  SaveResult r = save_checkpoint(states, d.path, o, true, &emu);
  REQUIRE(r.ok);
  REQUIRE_FALSE(r.step_s.empty());  // the step that ran during persistence ended after the save
  CHECK(r.durable_ns == r.ranks_done_ns + r.publish_ns);
  CHECK(r.ranks_done_ns >= r.ranks[0].total_ns);
  CHECK(r.durable_ns < 300000000);  // was about 0.5 s: the step's end
  // The step's busy loop is training's CPU, not the save's (it read 40 cores busy on 2 CPUs).
  CHECK(r.user_cpu_s < 0.25);
}

TEST_CASE("publishing never replaces a file that appeared under the final name during the save", "[checkpoint][io]") {
  TempDir d;
  auto states = make_states(1u << 20, 1);
  SaveOptions o;
  o.io.io_size = 256 * 1024;
  // Another writer's shard under the final name (save_checkpoint itself does not look before it
  // starts; the CLI refuses such a --dir up front, so here it stands for one that appears later).
  const std::string final0 = shard_path(d.path, 0);
  {
    int fd = ::open(final0.c_str(), O_CREAT | O_WRONLY | O_EXCL, 0644);  // "the other run's" shard
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "other", 5) == 5);
    ::close(fd);
  }
  SaveResult r = save(d, states, o);
  CHECK_FALSE(r.ok);
  CHECK(r.failure.err == EEXIST);
  CHECK(r.failure.path == final0);
  CHECK(error_line(r.failure).find("appeared while this save ran") != std::string::npos);
  CHECK(std::filesystem::file_size(final0) == 5);  // kept as it was
  CHECK(d.count_files() == 1);                     // and this save's temporary file removed
}

TEST_CASE("a failed save publishes nothing and removes its temporary files", "[checkpoint][io]") {
  TempDir d;
  auto states = make_states(1000000, 2);
  // A file already under the temporary name makes rank 1's O_EXCL create fail (EEXIST).
  std::string blocker = shard_path(d.path, 1) + ".ioprobe-tmp." + std::to_string(getpid());
  {
    int fd = ::open(blocker.c_str(), O_CREAT | O_WRONLY, 0644);
    REQUIRE(fd >= 0);
    ::close(fd);
  }
  SaveOptions o;
  o.io.io_size = 64 * 1024;
  SaveResult r = save(d, states, o);
  CHECK_FALSE(r.ok);
  CHECK(r.failed_rank == 1);
  CHECK(r.failure.err == EEXIST);
  CHECK(r.failure.op == "create");
  CHECK_FALSE(std::filesystem::exists(shard_path(d.path, 0)));
  CHECK_FALSE(std::filesystem::exists(shard_path(d.path, 1)));
  CHECK_FALSE(std::filesystem::exists(shard_path(d.path, 0) + ".ioprobe-tmp." + std::to_string(getpid())));
  CHECK(std::filesystem::exists(blocker));  // not ours: never deleted
}

TEST_CASE("async save: staged before durable, training steps run during persistence", "[checkpoint][io]") {
  TempDir d;
  auto states = make_states(8u << 20, 2);
  SaveOptions o;
  o.io.io_size = 256 * 1024;
  o.io.depth = 1;  // slow enough that at least one step overlaps the persistence
  TrainingEmulator emu(0.005);
  CHECK(emu.baseline_step_s() > 0);
  SaveResult r = save_checkpoint(states, d.path, o, true, &emu);
  REQUIRE(r.ok);
  CHECK(r.async);
  CHECK(r.staged_ns > 0);
  CHECK(r.durable_ns > r.staged_ns);
  CHECK_FALSE(r.step_s.empty());
  RestoreResult rs = restore_checkpoint(r.final_paths, 1 << 20);
  CHECK(rs.ok);
}
