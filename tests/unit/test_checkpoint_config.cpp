// `ioprobe checkpoint`'s options parsed into the typed CheckpointConfig (cli/checkpoint_config):
// defaults, values reaching their fields, the model presets, and refusals that name the option.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "checkpoint/config.hpp"
#include "cli/checkpoint_cluster_steps.hpp"
#include "cli/checkpoint_config.hpp"
#include "comm/comm.hpp"
#include "core/error.hpp"

using namespace ioprobe;
using namespace ioprobe::cli;

namespace {

HostInfo test_host() {
  HostInfo h;
  h.cpus_allowed = 8;
  h.memory_bytes = 64ull << 30;
  return h;
}

ParsedCheckpoint parse(const std::vector<std::string>& args) {
  comm::LocalComm comm;
  CheckpointJob job(comm);
  return parse_checkpoint_config(args, test_host(), job);
}

std::string refusal(const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("checkpoint config: defaults", "[cli][checkpoint]") {
  const ParsedCheckpoint p = parse({});
  const checkpoint::CheckpointConfig& c = p.config;
  CHECK_FALSE(p.help);
  CHECK(c.dir == "./ioprobe-ckpt");
  CHECK(c.state.host_bytes == (1ull << 30));
  CHECK(c.state.ranks.size() == 1);
  CHECK(c.save.chunk_bytes == (1ull << 30));
  CHECK_FALSE(c.save.compress.enabled);
  CHECK(c.save.io.io_size == (16u << 20));
  CHECK(c.save.io.depth == 2);
  CHECK(c.save.io.flush_bytes == (64ull << 20));
  CHECK(c.save.io.direct);
  CHECK(c.save.fsync);
  CHECK_FALSE(c.restore);
  CHECK(c.restore_cold);
  CHECK(c.restore_threads == 8);  // allowed CPUs / ranks
  CHECK(c.raw_baseline);
  CHECK_FALSE(c.keep);
  CHECK_FALSE(c.series);
  CHECK(c.repeat == 1);
  CHECK(c.content == checkpoint::StateContent::tensors);
  CHECK(c.cpus_allowed == 8);
  CHECK(c.memory_budget_bytes == (32ull << 30));  // half of RAM
  CHECK(parse({"--help"}).help);
}

TEST_CASE("checkpoint config: values reach their fields", "[cli][checkpoint]") {
  const ParsedCheckpoint p = parse({"--dir",
                                    "/tmp/x",
                                    "--size",
                                    "64MiB",
                                    "--ranks",
                                    "4",
                                    "--compress",
                                    "zstd:3",
                                    "--compress-threads",
                                    "2",
                                    "--io-size",
                                    "1MiB",
                                    "--io-depth",
                                    "4",
                                    "--restore",
                                    "--restore-threads",
                                    "3",
                                    "--restore-cache",
                                    "warm",
                                    "--repeat",
                                    "5",
                                    "--raw-baseline",
                                    "off",
                                    "--keep",
                                    "--data",
                                    "text",
                                    "--seed",
                                    "9",
                                    "--json",
                                    "r.json"});
  const checkpoint::CheckpointConfig& c = p.config;
  CHECK(c.dir == "/tmp/x");
  CHECK(c.state.host_bytes == (64ull << 20));
  CHECK(c.state.ranks.size() == 4);
  CHECK(c.save.compress.enabled);
  CHECK(c.save.compress.level == 3);
  CHECK(c.save.compress_threads == 2);
  CHECK(c.save.io.io_size == (1u << 20));
  CHECK(c.save.io.depth == 4);
  CHECK(c.restore);
  CHECK_FALSE(c.restore_cold);
  CHECK(c.restore_threads == 3);
  CHECK(p.restore_threads_given);
  CHECK(c.series);
  CHECK(c.repeat == 5);
  CHECK_FALSE(c.raw_baseline);
  CHECK(c.keep);
  CHECK(c.content == checkpoint::StateContent::text);
  CHECK(c.seed == 9);
  CHECK(c.json_path == "r.json");
  // --duration alone: no count limit.
  const checkpoint::CheckpointConfig d = parse({"--duration", "10m"}).config;
  CHECK(d.series);
  CHECK(d.repeat == 0);
  CHECK(d.duration_s == 600);
  CHECK(parse({"--plan"}).config.plan_only);
}

TEST_CASE("checkpoint config: a model preset sizes the state by its parameters", "[cli][checkpoint]") {
  const checkpoint::CheckpointConfig c = parse({"--model", "llama3-8b", "--ranks", "2"}).config;
  CHECK(c.state.source == "llama3-8b");
  CHECK(c.state.ranks.size() == 2);
  CHECK(c.state.world >= 2);
  CHECK(c.state.host_bytes > 0);
  CHECK(c.state.host_bytes < c.state.world_bytes);
}

TEST_CASE("checkpoint config: refusals name the option and what to do", "[cli][checkpoint]") {
  struct Bad {
    std::vector<std::string> args;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {{"--size", "1GiB", "--params", "7B"}, "--size and --params"},
      {{"--tp", "2"}, "--tp shapes a model's state"},
      {{"--restore-threads", "2", "--compress", "zstd:1"}, "--restore-threads: only with --restore"},
      {{"--restore", "--restore-threads", "2"}, "with --compress none there is nothing to decompress"},
      {{"--restore-cache", "warm"}, "--restore-cache: only with --restore"},
      {{"--restore", "--restore-cache", "lukewarm"}, "--restore-cache"},
      {{"--compress-pool", "zstd"}, "--compress-pool chooses who compresses"},
      {{"--io-size", "6000"}, "--io-size"},
      {{"--io-size", "8MiB", "--flush-every", "4MiB"}, "below --io-size"},
      {{"--fsync", "false", "--flush-every", "64MiB"}, "--flush-every flushes toward durability"},
      {{"--step-time", "10ms"}, "--step-time: only with --async"},
      {{"--duration", "0s"}, "--duration"},
      {{"--json", ""}, "--json: empty path"},
      {{"--data", "zeros"}, "--data"},
      // Decimal only: strtod read 0x10B as 16 x 10^9 parameters.
      {{"--params", "0x10B"}, "--params: '0x10B' is not a parameter count"},
      {{"--params", "infB"}, "--params: 'infB' is not a parameter count"},
      {{"--params", "+7B"}, "--params: '+7B' is not a parameter count"},
  };
  for (const Bad& b : bad) {
    std::string line;
    for (const auto& a : b.args) line += a + " ";
    INFO(line);
    const std::string why = refusal(b.args);
    INFO(why);
    CHECK(why.find(b.says) != std::string::npos);
  }
}

TEST_CASE("checkpoint config: a read-back's refusal lists only the options that mode takes", "[cli][checkpoint]") {
  const std::string verify = refusal({"--verify-only", "--dir", "d", "--size", "1GiB"});
  CHECK(verify.find("drop --size (with --verify-only: --dir, --json, --restore-cache, --io-size, --quiet)") !=
        std::string::npos);
  CHECK(verify.find("--restore-threads") == std::string::npos);  // --verify-only decompresses nothing
  CHECK(refusal({"--verify-only", "--restore-threads", "2"}).find("--verify-only decompresses nothing") !=
        std::string::npos);
  const std::string restore = refusal({"--restore-only", "--dir", "d", "--size", "1GiB"});
  CHECK(restore.find("(with --restore-only: --dir, --json, --restore-cache, --restore-threads, --io-size, --quiet)") !=
        std::string::npos);
  CHECK(parse({"--restore-only", "--restore-threads", "2"}).config.restore_threads == 2);
}
