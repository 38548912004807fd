#include <catch2/catch.hpp>

#include "cli/run_config.hpp"
#include "cli/same_options.hpp"
#include "cluster/option_agreement.hpp"

using namespace ioprobe;

namespace {

cluster::OptionValue given(const char* o, const char* v) { return {o, v, true}; }
cluster::OptionValue absent(const char* o) { return {o, "", false}; }

// The options a process would send, from its command line, as cmd_run reads them.
std::vector<cluster::OptionValue> run_options_of(const std::vector<std::string>& args) {
  cli::po::options_description desc = cli::run_options_description();
  cli::po::variables_map vm = cli::parse_command_line(args, desc, "run");
  return cli::shared_option_values(vm, desc, cli::PresetFile::kDataset);
}

}  // namespace

TEST_CASE("ranks with the same options agree; a rank with another value is named with both values", "[cluster]") {
  const std::vector<cluster::OptionValue> lead = {given("--workers", "4"), absent("--batch-size"),
                                                  given("--gpu", "h100")};
  std::vector<cluster::RankOptions> all = {{0, "h1", lead}, {1, "h2", lead}, {2, "h2", lead}};
  CHECK(cluster::options_mismatch(all).empty());

  all[1].options = {given("--workers", "1"), given("--batch-size", "64"), given("--gpu", "h100")};
  const std::string diff = cluster::options_mismatch(all);
  CHECK_THAT(diff, Catch::Contains("rank 1 on host h2: --workers 1, rank 0 (host h1) has 4"));
  CHECK_THAT(diff, Catch::Contains("rank 1 on host h2: --batch-size 64, rank 0 (host h1) has not given (its default)"));
  CHECK_THAT(diff, !Catch::Contains("--gpu"));
  CHECK_THAT(diff, !Catch::Contains("rank 2"));

  // An option only one side knows of differs too; many differences are counted, not all listed.
  all[2].options = lead;
  all[2].options.push_back(given("--stonewall", "true"));
  CHECK_THAT(cluster::options_mismatch(all), Catch::Contains("rank 2 on host h2: --stonewall true, rank 0 (host h1) "
                                                             "has not given (its default)"));
  CHECK_THAT(cluster::options_mismatch(all, 1), Catch::Contains("and 2 more difference(s)"));
}

TEST_CASE("the options a run compares: command line and preset values, --gpu by its key, --json and --quiet not",
          "[cluster][cli]") {
  const auto a = run_options_of({"--workers", "4", "--gpu", "h100", "--json", "/tmp/a.json", "--quiet"});
  const auto b = run_options_of({"--workers", "4", "--gpu", "H100-SXM", "--json", "/tmp/b.json"});
  CHECK(cluster::options_mismatch({{0, "h1", a}, {1, "h2", b}}).empty());
  for (const auto& o : a) {
    CHECK(o.option != "--json");
    CHECK(o.option != "--quiet");
    CHECK(o.option != "--help");
  }
  // The default preset (imagenet-like) sets --files: a rank that gives another count differs.
  const auto c = run_options_of({"--workers", "4", "--gpu", "h100", "--files", "7"});
  const std::string diff = cluster::options_mismatch({{0, "h1", a}, {1, "h2", c}});
  CHECK_THAT(diff, Catch::Contains("--files 7, rank 0 (host h1) has 50000"));
  // Another GPU kind is a difference, named by key.
  const auto d = run_options_of({"--workers", "4", "--gpu", "a100"});
  CHECK_THAT(cluster::options_mismatch({{0, "h1", a}, {1, "h2", d}}),
             Catch::Contains("--gpu a100, rank 0 (host h1) has h100"));
}
