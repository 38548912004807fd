// --shuffle-buffer / --shuffle-initial (cli/shuffle_buffer_options.hpp): parsed into the loader's
// webdataset order for sharded datasets, refused with a message naming the option, its value and
// what to do on any other kind.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli/run_config.hpp"
#include "core/error.hpp"

using namespace ioprobe;

namespace {

std::string usage_error_of(const std::vector<std::string>& args) {
  cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  ctx.args = args;
  cli::RunConfig c;
  try {
    cli::build_run_config(ctx, false, c);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE(
    "shuffle buffer options: --shuffle-buffer on a sharded dataset sets webdataset's buffer, fill and shard shuffle",
    "[cli][wds]") {
  cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  ctx.args = {"--dataset", "resnet50-tfrecord-like", "--shuffle-buffer", "64", "--shuffle-initial", "16"};
  cli::RunConfig c;
  cli::build_run_config(ctx, false, c);
  CHECK(c.loader.shuffle_buffer == 64);
  CHECK(c.loader.shuffle_initial == 16);
  CHECK(c.loader.wds_shard_shuffle == 100);  // webdataset's shardshuffle=True
  ctx.args = {"--dataset", "resnet50-tfrecord-like", "--shuffle-buffer", "8", "--no-shuffle"};
  cli::RunConfig fixed;
  cli::build_run_config(ctx, false, fixed);
  CHECK(fixed.loader.shuffle_buffer == 8);
  CHECK(fixed.loader.shuffle_initial == 8);  // webdataset's initial=100, capped at the buffer as webdataset does
  CHECK(fixed.loader.wds_shard_shuffle == 0);
  cli::RunConfig plain;
  ctx.args = {"--dataset", "resnet50-tfrecord-like"};
  cli::build_run_config(ctx, false, plain);
  CHECK(plain.loader.shuffle_buffer == 0);  // the plain IterableDataset order
}

TEST_CASE("shuffle buffer options: --shuffle-buffer and --shuffle-initial are refused on datasets that are not sharded",
          "[cli][wds]") {
  const std::string files = usage_error_of({"--shuffle-buffer", "1000"});
  CHECK_THAT(files, Catch::Contains("--shuffle-buffer 1000") && Catch::Contains("kind files") &&
                        Catch::Contains("--dataset-kind sharded"));
  const std::string token = usage_error_of({"--dataset", "llm-tokens-like", "--shuffle-initial", "50"});
  CHECK_THAT(token, Catch::Contains("--shuffle-initial 50") && Catch::Contains("kind token"));
  CHECK_THAT(usage_error_of({"--dataset", "resnet50-tfrecord-like", "--shuffle-initial", "5"}),
             Catch::Contains("--shuffle-initial 5: needs --shuffle-buffer"));
  CHECK_THAT(usage_error_of({"--dataset", "resnet50-tfrecord-like", "--shuffle-buffer", "0"}),
             Catch::Contains("--shuffle-buffer: 0 is out of range"));
}
