// A worker's GIL (loader/worker_gil.hpp): its threads' burns never overlap, turns go in the order
// asked for, a stop ends a burn and hands the lock on, and a null lock burns freely.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "loader/worker_gil.hpp"

using namespace ioprobe;

TEST_CASE("worker GIL: burns through one lock add up instead of overlapping", "[worker_gil]") {
  WorkerGil gil(500);  // 0.5 ms turns
  constexpr double kEachUs = 20000;
  const int64_t t0 = now_ns();
  std::vector<std::thread> threads;
  std::vector<int64_t> cpu(2, 0);
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      const int64_t c0 = thread_cpu_ns();
      gil.burn(kEachUs, {});
      cpu[static_cast<size_t>(i)] = thread_cpu_ns() - c0;
    });
  for (auto& t : threads) t.join();
  const double wall_us = static_cast<double>(now_ns() - t0) / 1e3;
  // Each burned its share of CPU; held one at a time, the wall time is at least their sum (with
  // two free CPUs and no lock it would be about one share).
  CHECK(static_cast<double>(cpu[0]) / 1e3 >= kEachUs * 0.99);
  CHECK(static_cast<double>(cpu[1]) / 1e3 >= kEachUs * 0.99);
  CHECK(wall_us >= 2 * kEachUs * 0.99);
  CHECK(gil.turns() >=
        2 * 30);  // 20 ms in turns of at most 0.5 ms (and a little over: the burn checks its clock in steps)
}

TEST_CASE("worker GIL: a waiting thread gets the next turn", "[worker_gil]") {
  WorkerGil gil(1000);
  std::atomic<int> phase{0};
  std::atomic<uint64_t> turns_when_b_done{0};
  // A burns a long time in 1 ms turns; B asks once A is under way and must finish long before A.
  std::thread a([&] {
    phase = 1;
    gil.burn(100000, {});
    phase = 3;
  });
  while (phase.load() < 1) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::thread b([&] {
    gil.burn(1000, {});
    turns_when_b_done = gil.turns();
  });
  b.join();
  a.join();
  // B waited at most for A's current turn (and its own 1 ms): far fewer than A's 100 turns.
  CHECK(turns_when_b_done.load() < 60);
}

TEST_CASE("worker GIL: a stop ends a burn and the lock passes on; no lock burns freely", "[worker_gil]") {
  WorkerGil gil(1000);
  std::atomic<bool> stop{false};
  std::thread a([&] { gil.burn(60e6, [&] { return stop.load(); }); });  // a minute, unless stopped
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop = true;
  a.join();  // returns within about a turn
  const int64_t c0 = thread_cpu_ns();
  gil.burn(2000, {});  // the lock is free again
  CHECK(thread_cpu_ns() - c0 >= 1900000);
  const int64_t c1 = thread_cpu_ns();
  burn_worker_cpu(nullptr, 2000, {});
  CHECK(thread_cpu_ns() - c1 >= 1900000);
  WorkerGils none;
  CHECK(none.at(0) == nullptr);
  WorkerGils two(2);
  CHECK(two.at(1) != nullptr);
  CHECK(two.at(0) != two.at(1));
  CHECK(two.at(2) == nullptr);
}

namespace {

// Wall µs of two threads each burning `each_us` of CPU through worker 0's and worker 1's lock of
// `gils`, `share` of it holding the lock.
double two_burns_wall_us(const WorkerGils& gils, double each_us, double share) {
  const int64_t t0 = now_ns();
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < 2; ++w) threads.emplace_back([&, w] { burn_worker_cpu(gils.at(w), each_us, {}, share); });
  for (auto& t : threads) t.join();
  return static_cast<double>(now_ns() - t0) / 1e3;
}

}  // namespace

TEST_CASE("worker GIL: a thread pipeline's workers share one lock; its share sets how much they serialize",
          "[worker_gil]") {
  WorkerGils shared(3, true);
  REQUIRE(shared.at(0) != nullptr);
  CHECK(shared.at(0) == shared.at(1));
  CHECK(shared.at(2) == shared.at(0));
  CHECK(shared.at(3) == nullptr);
  CHECK(WorkerGils(0, true).at(0) == nullptr);
  constexpr double kEachUs = 40000;
  // All of the CPU holding the one lock: the two burns add up (whatever the host's load).
  const double held_us = two_burns_wall_us(shared, kEachUs, 1.0);
  CHECK(held_us >= 2 * kEachUs * 0.99);
  // Both threads' turns went through the one lock: 40 ms each in turns of at most 200 µs.
  const uint64_t turns = shared.at(0)->turns();
  CHECK(turns >= 2 * 150);
  // None of it holding the lock: the lock is never taken, and the burns overlap where the host has
  // two CPUs free for them (on a crowded host the wall time says nothing, so only the lock is checked).
  const double free_us = two_burns_wall_us(shared, kEachUs, 0.0);
  CHECK(shared.at(0)->turns() == turns);
  if (free_us < 1.5 * kEachUs) CHECK(held_us >= 1.6 * free_us);  // ~2x: serialized against overlapped
  else
    WARN("the host gave the two threads less than two CPUs (" << free_us << " µs for 2 x " << kEachUs
                                                              << " µs of CPU): the wall-time ratio is not checked");
}
