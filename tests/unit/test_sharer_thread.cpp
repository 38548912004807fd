// The worker's resource-sharer stand-in (loader/sharer_thread.hpp): a round trip burns the
// request on the sharer's own thread and returns once it is burned, and a stop ends it.
#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "core/clock.hpp"
#include "loader/sharer_thread.hpp"

using namespace ioprobe;

TEST_CASE("sharer thread: a round trip burns its CPU on the sharer's thread and returns once it is burned",
          "[loader][sharer]") {
  int64_t cpu = 0;
  const int64_t mine0 = thread_cpu_ns();
  {
    SharerThread s([] { return false; }, &cpu);
    const int64_t t0 = now_ns();
    s.serve(20000);  // 20 ms of the sharer's CPU: the caller waits for all of it
    // serve() returned under the lock the sharer released after adding its CPU: reading is safe.
    CHECK(cpu >= 20000000LL);
    CHECK(now_ns() - t0 >= 20000000LL);
    s.serve(0);   // nothing
    s.serve(-5);  // nothing
    CHECK(cpu < 30000000LL);
    s.serve(10000);
    CHECK(cpu >= 30000000LL);
  }
  CHECK(cpu >= 30000000LL);
  // The caller only waited: far below the 30 ms of CPU the sharer burned.
  CHECK(thread_cpu_ns() - mine0 < 15000000LL);
}

TEST_CASE("sharer thread: a stop ends an hour-long round trip and the join returns", "[loader][sharer]") {
  int64_t cpu = 0;
  std::atomic<bool> stop{false};
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop = true;
  });
  {
    SharerThread s([&stop] { return stop.load(); }, &cpu);
    s.serve(3.6e9);  // an hour of CPU: without the stop this would not return (the test would time out)
  }
  stopper.join();
  CHECK(cpu < 3600LL * 1000000000LL);
}
