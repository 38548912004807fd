#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <catch2/catch.hpp>

#include "cli/run_config.hpp"
#include "cli/run_plan.hpp"
#include "cli/run_prepare.hpp"
#include "core/error.hpp"
#include "report/capacity_report.hpp"
#include "report/run_text.hpp"
#include "report/tune_document.hpp"

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
  // Found by tests/fuzz (fuzz_run_options): a workload file line Boost cannot parse is quoted
  // in its message through "%invalid_line%", so a line holding that token never returned.
  char tmpl[] = "/tmp/ioprobe-ini-ph-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string ini = std::string(tmpl) + "/w.ini";
  {
    std::ofstream f(ini);
    f << "\\  %invalid_line%\n";
  }
  ctx.args = {"--dataset", ini};
  CHECK_THROWS_AS(cli::build_run_config(ctx, false, c), UsageError);
  std::filesystem::remove_all(tmpl);
}

TEST_CASE("bad values name the option", "[cli]") {
  cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  cli::RunConfig c;
  for (std::vector<std::string> args : {std::vector<std::string>{"--workers", "-1"},
                                        {"--batch-size", "0"},
                                        {"--file-size", "10XB"},
                                        {"--cache", "hot"},
                                        {"--numa", "node:x"},
                                        // Decimal only: strtod took these as 80, 1 and infinity.
                                        {"--au-target", "0x50"},
                                        {"--cpu-per-sample", "0x1"},
                                        {"--gpu-samples-per-s", "inf"},
                                        {"--files", "0x10"},
                                        {"--file-size", "0x1000"}}) {
    ctx.args = args;
    try {
      cli::build_run_config(ctx, false, c);
      FAIL("accepted " << args[0] << " " << args[1]);
    } catch (const UsageError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(args[0]) && Catch::Contains(args[1]));
    }
  }
}

TEST_CASE("a numeric option out of range names the option, the value given and the accepted range", "[cli]") {
  cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  cli::RunConfig c;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      // Over 2^64 - 1: the parser's overflow, with the option's range.
      {{"--files", "99999999999999999999"},
       "--files: 99999999999999999999 is out of range; give a value from 1 to 100,000,000"},
      {{"--files", "0"}, "--files: 0 is out of range; give a value from 1 to 100,000,000"},
      {{"--workers", "1,000,000"}, "--workers: 1,000,000 is out of range; give a value from 1 to 4,096"},
      {{"--seed", "99999999999999999999"},
       "--seed: 99999999999999999999 is out of range; give a value from 0 to 18,446,744,073,709,551,615"},
      {{"--file-size", "99999999999PB"},
       "--file-size: 99999999999PB is out of range; give a size from 1 B to 64.00 GiB"},
      {{"--file-size", "65GiB"}, "--file-size: 65GiB is out of range; give a size from 1 B to 64.00 GiB"},
      {{"--duration", "1e400s"}, "--duration: 1e400s is out of range; give a duration from 0 s to 365 days"},
      {{"--au-target", "1e999"}, "--au-target: 1e999 is out of range; give a value from 10 to 100"},
      {{"--au-target", "101"}, "--au-target: 101 is out of range; give a value from 10 to 100"},
      {{"--cpu-per-sample", "-5"}, "--cpu-per-sample: -5 is out of range; give a value from 0 to 60000000"},
  };
  for (const auto& [args, want] : cases) {
    ctx.args = args;
    try {
      cli::build_run_config(ctx, false, c);
      FAIL("accepted " << args[0] << " " << args[1]);
    } catch (const UsageError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(want));
    }
  }
}

TEST_CASE("bad values inside a workload INI file name the file, the key and the value", "[cli]") {
  char tmpl[] = "/tmp/ioprobe-ini-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  struct Case {
    std::string line, key, value;
  };
  for (const Case& k : {Case{"files = abc", "files", "abc"}, Case{"file-size = 4XB", "file-size", "4XB"},
                        Case{"workers = -1", "workers", "-1"}, Case{"duration = 1e400s", "duration", "1e400s"},
                        Case{"shuffle = maybe", "shuffle", "maybe"}, Case{"cache = hot", "cache", "hot"},
                        Case{"file-size-dist = zipf", "file-size-dist", "zipf"},
                        Case{"numa = node:x", "numa", "node:x"}, Case{"au-target = 400", "au-target", "400"}}) {
    const std::string path = dir + "/bad set.ini";
    {
      std::ofstream f(path);
      if (k.key != "files") f << "files = 10\n";
      if (k.key != "file-size") f << "file-size = 4KiB\n";
      f << k.line << "\n";
    }
    cli::CommandContext ctx;
    ctx.argv = {"ioprobe"};
    ctx.args = {"--dataset", path};
    cli::RunConfig c;
    try {
      cli::build_run_config(ctx, false, c);
      FAIL("accepted " << k.line);
    } catch (const UsageError& e) {
      const std::string m = e.what();
      INFO(m);
      CHECK_THAT(m, Catch::Contains(path));
      CHECK_THAT(m, Catch::Contains("'" + k.key + "'"));
      CHECK_THAT(m, Catch::Contains(k.value));
      CHECK(e.exit_code() == 2);
    }
    // The same value on the command line is named as the option, and the command line wins over the file.
    ctx.args = {"--dataset", path, "--" + k.key, k.value};
    try {
      cli::build_run_config(ctx, false, c);
      FAIL("accepted --" << k.key << " " << k.value);
    } catch (const UsageError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("--" + k.key));
      CHECK_THAT(std::string(e.what()), !Catch::Contains("bad set.ini"));
    }
    std::remove(path.c_str());
  }
  rmdir(dir.c_str());
}

TEST_CASE("gen --help lists only what gen uses, run --help keeps the run options", "[cli]") {
  auto help_of = [](bool for_gen) {
    cli::CommandContext ctx;
    ctx.argv = {"ioprobe"};
    ctx.args = {"--help"};
    cli::RunConfig c;
    std::ostringstream out;
    std::streambuf* old = std::cout.rdbuf(out.rdbuf());
    bool ran = cli::build_run_config(ctx, for_gen, c);
    std::cout.rdbuf(old);
    CHECK_FALSE(ran);
    return out.str();
  };
  const std::string gen = help_of(true), run = help_of(false);
  for (const char* o :
       {"--dataset", "--dir", "--files", "--dirs", "--file-size ", "--file-size-dist", "--seed", "--quiet"}) {
    CHECK_THAT(gen, Catch::Contains(o));
    CHECK_THAT(run, Catch::Contains(o));
  }
  for (const char* o : {"--workers", "--batch-size", "--epochs", "--duration", "--gpu ", "--gpus", "--cache",
                        "--engine", "--json", "--data ", "--file-list", "--step-time", "--numa"}) {
    CHECK_THAT(gen, !Catch::Contains(o));
    CHECK_THAT(run, Catch::Contains(o));
  }
  CHECK_THAT(gen, Catch::Contains("usage: ioprobe gen"));
}

TEST_CASE("tune's --workers and --numa lists are not read as run's single values", "[cli]") {
  // tune parses "--workers 1,2,4" and "--numa auto" as its sweep lists; the run configuration it
  // shares must leave them alone instead of tune erasing them from the options first.
  {
    cli::po::options_description desc = cli::run_options_description();
    cli::po::variables_map vm = cli::parse_command_line({"--workers", "1,2,4", "--numa", "auto", "--files", "10"}, desc,
                                                        "tune");
    cli::RunConfig c;
    cli::run_config_from_vm(vm, desc, cli::RunCommandKind::kTune, c);
    CHECK(c.loader.num_workers == 8);
    CHECK(c.numa.kind == Placement::Kind::None);
    CHECK(c.cache == cli::CacheMode::kCold);
    CHECK(c.engine_request == EngineSelection::kAuto);
  }
  cli::po::options_description desc = cli::run_options_description();
  cli::po::variables_map vm = cli::parse_command_line({"--workers", "1,2,4", "--files", "10"}, desc, "run");
  cli::RunConfig c;
  CHECK_THROWS_AS(cli::run_config_from_vm(vm, desc, cli::RunCommandKind::kRun, c), UsageError);
}

TEST_CASE(
    "the GPU demand: --gpu and a rate of one's own (--step-time, --gpu-samples-per-s) are not both taken silently",
    "[cli]") {
  // `run --gpu h100 --step-time 0.1` dropped --gpu without a word (the catalog's rate is what --gpu sets).
  for (const char* own : {"--step-time", "--gpu-samples-per-s"}) {
    INFO(own);
    for (cli::RunCommandKind kind : {cli::RunCommandKind::kRun, cli::RunCommandKind::kTune}) {
      cli::po::options_description desc = cli::run_options_description();
      cli::po::variables_map vm = cli::parse_command_line({"--gpu", "h100", own, "0.1", "--files", "10"}, desc, "run");
      cli::RunConfig c;
      try {
        cli::run_config_from_vm(vm, desc, kind, c);
        FAIL("--gpu with " << own << " accepted");
      } catch (const UsageError& e) {
        CHECK(e.exit_code() == 2);
        CHECK_THAT(std::string(e.what()), Catch::Contains("--gpu h100 and " + std::string(own) + " 0.1 both set") &&
                                              Catch::Contains("give one"));
      }
    }
  }
  // A preset's gpu (retinanet-like sets gpu = b200) under the command line's own rate: the command
  // line wins, as for every option, and the notes say so; the report does not call it a b200.
  cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  ctx.args = {"--dataset", "retinanet-like", "--step-time", "0.2"};
  cli::RunConfig c;
  REQUIRE(cli::build_run_config(ctx, false, c));
  CHECK(c.user_step_time_s == Approx(0.2));
  REQUIRE(c.notes.size() == 1);
  CHECK_THAT(c.notes[0], Catch::Contains("--step-time 0.2") && Catch::Contains("key 'gpu' = b200"));
  // Each alone: no note.
  ctx.args = {"--gpu", "h200", "--files", "10"};
  cli::RunConfig plain;
  REQUIRE(cli::build_run_config(ctx, false, plain));
  CHECK(plain.notes.empty());
  CHECK(plain.gpu == "h200");
}

TEST_CASE("GPU ranks that would get no sample are refused, less than a batch each is warned", "[cli]") {
  // `run --gpus 1000 --files 402` ran 598 ranks with nothing to read (the sampler does not pad).
  LoaderConfig l;
  l.ranks = 1000;
  l.batch_size = 256;
  try {
    cli::check_rank_shares(l, 1, 402, "samples", 402);
    FAIL("ranks without a sample accepted");
  } catch (const UsageError& e) {
    CHECK(e.exit_code() == 2);
    CHECK_THAT(std::string(e.what()), Catch::Contains("--gpus 1000 with 402 samples: 598 rank(s) would get no") &&
                                          Catch::Contains("use at least 1,000 samples (--files) or at most 402"));
  }
  // Across processes the world is every process's ranks: 4 x 2 = 8 ranks for 7 shards.
  l.ranks = 4;
  CHECK_THROWS_WITH(cli::check_rank_shares(l, 2, 7, "shards", 7 * 53),
                    Catch::Contains("--gpus 4 on each of 2 processes (8 GPU ranks) with 7 shards: 1 rank(s)"));
  // Every rank gets a share but less than one batch: a warning naming the counts and what to do.
  const std::string w = cli::check_rank_shares(l, 1, 402, "samples", 402);
  CHECK_THAT(w, Catch::Contains("--gpus 4 with 402 samples: each rank gets about 100 per epoch") &&
                    Catch::Contains("--batch-size 256") && Catch::Contains("at least 1,024 samples"));
  CHECK(cli::check_rank_shares(l, 1, 1024, "samples", 1024).empty());
  l.drop_last = true;  // refused elsewhere (check_drop_last_batches) when no batch is left
  CHECK(cli::check_rank_shares(l, 1, 402, "samples", 402).empty());
}

TEST_CASE("the user's own GPU rate names no model unless the user chose one", "[cli][ingest]") {
  // `run --data DIR --gpu-samples-per-s N` showed "1 x custom GPU training resnet50": the default
  // preset's model, which set nothing of the demand.
  cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  auto demand_of = [&](std::vector<std::string> args) {
    ctx.args = args;
    cli::RunConfig c;
    REQUIRE(cli::build_run_config(ctx, false, c));
    return cli::resolve_demand(c, cli::plan_model(c));
  };
  const Demand own = demand_of({"--data", "/nonexistent", "--gpu-samples-per-s", "500"});
  CHECK(own.accelerator_name == "custom GPU");
  CHECK(own.model.empty());
  CHECK(own.au_target == Approx(0.9));
  CHECK(demand_of({"--gpu-samples-per-s", "500"}).model.empty());  // the default preset, generated
  // Chosen: --model, or the preset --dataset names; a catalog rate is always the model's.
  CHECK(demand_of({"--data", "/nonexistent", "--gpu-samples-per-s", "500", "--model", "unet3d"}).model == "unet3d");
  CHECK(demand_of({"--dataset", "unet3d-like", "--gpu-samples-per-s", "500"}).model == "unet3d");
  CHECK(demand_of({"--data", "/nonexistent"}).model == "resnet50");

  // The text names the model only when there is one.
  RunDocument doc;
  doc.header.host.cpus_allowed = 2;
  doc.target.path = "/d";
  doc.target.fs_type = "ext4";
  doc.dataset.files = 10;
  doc.dataset.bytes = 1000;
  doc.ingest.result = IngestResult{};
  doc.ingest.result->demand = {.accelerator = "custom",
                               .accelerator_name = "custom GPU",
                               .rate_family = "user",
                               .samples_per_s_per_gpu = 500.0,
                               .source = "--gpu-samples-per-s"};
  std::string text = render_run_text(doc);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("1 x custom GPU: 500 samples/s per GPU (user rate: --gpu-samples-per-s)"));
  CHECK_THAT(text, !Catch::Contains("resnet50"));
  doc.ingest.result->demand.model = "unet3d";
  CHECK_THAT(render_run_text(doc), Catch::Contains("1 x custom GPU training unet3d: 500 samples/s per GPU"));
}

TEST_CASE("a unique prefix of an option is refused, naming what was given", "[cli]") {
  // Boost.Program_options' default style guesses --work as --workers: a script with a typo ran
  // with another option than the one it meant. Only whole option names are taken.
  cli::po::options_description desc = cli::run_options_description();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--work", "4"}, {"--batch", "8"}, {"--hel"}, {"--regen"}}) {
    try {
      cli::parse_command_line(args, desc, "run");
      FAIL("accepted " << args[0]);
    } catch (const UsageError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("'" + args[0] + "'"));
    }
  }
  // The whole name still works.
  cli::po::variables_map vm = cli::parse_command_line({"--workers", "4"}, desc, "run");
  CHECK(vm.count("workers") == 1);
}

TEST_CASE("a switch and its opposite together are refused, naming both", "[cli]") {
  cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  cli::RunConfig c;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--shuffle", "--no-shuffle"}, {"--no-shuffle", "--shuffle"}}) {
    ctx.args = args;
    try {
      cli::build_run_config(ctx, false, c);
      FAIL("accepted " << args[0] << " " << args[1]);
    } catch (const UsageError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("--shuffle and --no-shuffle are opposites: give one"));
    }
  }
  // One alone is taken as it says.
  ctx.args = {"--no-shuffle", "--files", "10"};
  REQUIRE(cli::build_run_config(ctx, false, c));
  CHECK(!c.loader.shuffle);
  ctx.args = {"--shuffle", "--files", "10"};
  REQUIRE(cli::build_run_config(ctx, false, c));
  CHECK(c.loader.shuffle);
  // A workload file's switch gives way to the command line's opposite; the same file setting both is refused.
  char tmpl[] = "/tmp/ioprobe-ini-pair-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string ini = std::string(tmpl) + "/w.ini";
  {
    std::ofstream f(ini);
    f << "files = 10\nshuffle = true\n";
  }
  ctx.args = {"--dataset", ini, "--no-shuffle"};
  REQUIRE(cli::build_run_config(ctx, false, c));
  CHECK(!c.loader.shuffle);
  {
    std::ofstream f(ini, std::ios::app);
    f << "no-shuffle = true\n";
  }
  ctx.args = {"--dataset", ini};
  CHECK_THROWS_WITH(cli::build_run_config(ctx, false, c), Catch::Contains("opposites") && Catch::Contains(ini));
  std::filesystem::remove_all(tmpl);
}
