// core/threads.hpp: every item runs, all threads are joined, and an item's exception reaches the caller.
#include <catch2/catch.hpp>

#include <atomic>
#include <new>
#include <stdexcept>
#include <vector>

#include "core/threads.hpp"

using ioprobe::run_threads;

TEST_CASE("run_threads runs every item and rethrows an item's exception after all ended", "[core]") {
  std::vector<int> done(8, 0);
  run_threads(done.size(), [&](size_t i) { done[i] = static_cast<int>(i) + 1; });
  for (size_t i = 0; i < done.size(); ++i) CHECK(done[i] == static_cast<int>(i) + 1);

  std::atomic<int> finished{0};
  auto failing = [&](size_t i) {
    if (i == 1) throw std::bad_alloc();
    if (i == 3) throw std::runtime_error("three");
    ++finished;
  };
  CHECK_THROWS_AS(run_threads(5, failing), std::bad_alloc);  // the lowest index's exception
  CHECK(finished.load() == 3);  // the others ran to their end before the rethrow
  run_threads(0, [&](size_t) { FAIL("no item"); });
}
