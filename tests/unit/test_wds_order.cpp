// loader/wds_order against the real webdataset and Python: tests/fixtures/webdataset/order.json was
// written once by tools/wds-order with webdataset 1.0.2 under Python 3.11, so these tests need
// neither.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loader/wds_order.hpp"

using namespace ioprobe;

namespace {

nlohmann::json wds_fixture() {
  const std::string path = std::string(IOPROBE_FIXTURES) + "/webdataset/order.json";
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("PyRandom gives Python's random.Random(seed) words and randrange draws", "[loader][wds]") {
  const nlohmann::json doc = wds_fixture();
  REQUIRE(doc.at("random").size() >= 4);
  for (const auto& c : doc.at("random")) {
    const auto seed = c.at("seed").get<uint64_t>();
    INFO("seed " << seed);
    PyRandom rng(seed);
    std::vector<uint64_t> words;
    for (size_t i = 0; i < c.at("getrandbits32").size(); ++i) words.push_back(rng.getrandbits(32));
    CHECK(words == c.at("getrandbits32").get<std::vector<uint64_t>>());
    std::vector<uint64_t> draws;
    for (uint64_t n : c.at("randrange_n").get<std::vector<uint64_t>>()) draws.push_back(rng.randbelow(n));
    CHECK(draws == c.at("randrange").get<std::vector<uint64_t>>());
  }
}

TEST_CASE("wds_shuffle yields webdataset's _shuffle order and fill", "[loader][wds]") {
  const nlohmann::json doc = wds_fixture();
  REQUIRE(!doc.at("shuffle").empty());
  for (const auto& c : doc.at("shuffle")) {
    const auto n = c.at("n").get<uint64_t>();
    const auto bufsize = c.at("bufsize").get<uint64_t>();
    const auto initial = c.at("initial").get<uint64_t>();
    INFO("n " << n << " bufsize " << bufsize << " initial " << initial);
    const WdsShuffle sh = wds_shuffle(n, bufsize, initial, c.at("seed").get<uint64_t>());
    CHECK(sh.order == c.at("order").get<std::vector<uint64_t>>());
    CHECK(sh.pulled == c.at("consumed").get<std::vector<uint64_t>>());
  }
}

TEST_CASE("wds shard split and buffer give WebDataset's delivery order per worker", "[loader][wds]") {
  const nlohmann::json doc = wds_fixture();
  REQUIRE(!doc.at("pipeline").empty());
  for (const auto& c : doc.at("pipeline")) {
    const auto records = c.at("records_per_shard").get<uint64_t>();
    const auto seed = c.at("seed").get<uint64_t>();
    INFO("case " << c.dump());
    const std::vector<uint64_t> shards = wds_shards_for_worker(c.at("shards").get<uint64_t>(),
                                                               c.at("shardshuffle").get<uint64_t>(), seed,
                                                               c.at("rank").get<uint32_t>(),
                                                               c.at("world").get<uint32_t>(),
                                                               c.at("worker").get<uint32_t>(),
                                                               c.at("workers").get<uint32_t>());
    const WdsShuffle sh = wds_shuffle(shards.size() * records, c.at("bufsize").get<uint64_t>(),
                                      c.at("initial").get<uint64_t>(), seed);
    std::vector<uint64_t> delivered;
    for (uint64_t pos : sh.order) delivered.push_back(shards[pos / records] * records + pos % records);
    CHECK(delivered == c.at("order").get<std::vector<uint64_t>>());
  }
}

TEST_CASE("wds_shuffle holds back the first sample until the buffer has `initial` samples", "[loader][wds]") {
  const WdsShuffle sh = wds_shuffle(1000, 200, 150, 1);
  REQUIRE(sh.pulled.size() == 1000);
  CHECK(sh.pulled.front() == 150);  // two pulled per step while under the buffer size: 150 exactly
  CHECK(sh.pulled.back() == 1000);
  CHECK(std::is_sorted(sh.pulled.begin(), sh.pulled.end()));
  std::vector<uint64_t> sorted = sh.order;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t i = 0; i < sorted.size(); ++i) REQUIRE(sorted[i] == i);
}
