#include <catch2/catch.hpp>

#include "cli/run_config.hpp"
#include "core/error.hpp"

using namespace ioprobe;

TEST_CASE("an argument holding a Boost.Program_options placeholder is refused, not looped on", "[cli]") {
  // Found by tests/fuzz: Boost 1.74 substitutes "%canonical_option%" in its own error text
  // repeatedly, so an unknown option containing it never returned.
  cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  ctx.args = {"--workersoption '%canonical_option%'"};
  cli::RunConfig c;
  CHECK_THROWS_AS(cli::build_run_config(ctx, false, c), UsageError);
  ctx.args = {"--dir", "/data/%value%/x"};
  CHECK_THROWS_AS(cli::build_run_config(ctx, false, c), UsageError);
}

TEST_CASE("bad values name the option", "[cli]") {
  cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  cli::RunConfig c;
  for (std::vector<std::string> args : {std::vector<std::string>{"--workers", "-1"}, {"--batch-size", "0"},
                                        {"--file-size", "10XB"}, {"--cache", "hot"}, {"--numa", "node:x"}}) {
    ctx.args = args;
    try {
      cli::build_run_config(ctx, false, c);
      FAIL("accepted " << args[0] << " " << args[1]);
    } catch (const UsageError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(args[0]));
    }
  }
}
