// core/threads.hpp: every item runs, all threads are joined, and an item's exception reaches the caller;
// core/clock.hpp's run-queue wait of a thread.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "core/threads.hpp"

using ioprobe::run_threads;
using ioprobe::thread_cpu_ns;
using ioprobe::thread_runqueue_wait_ns;

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
  CHECK(finished.load() == 3);                               // the others ran to their end before the rethrow
  run_threads(0, [&](size_t) { FAIL("no item"); });
}

TEST_CASE("thread_runqueue_wait_ns: two threads spinning on one CPU each wait for it", "[core]") {
  if (thread_runqueue_wait_ns() < 0) {
    WARN("skipped: this kernel does not expose /proc/thread-self/schedstat");
    return;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  REQUIRE(sched_getaffinity(0, sizeof(one), &one) == 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &one)) ++cpu;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  // Each thread spins for 60 ms of its own CPU time on the same single CPU: while one runs, the
  // other is runnable, so each waits at least about as long as the other ran (the scheduler
  // alternates them in slices of a few ms).
  std::atomic<int> ready{0};
  int64_t waited[2] = {0, 0};
  auto spin = [&](int i) {
    pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    ++ready;
    while (ready.load() < 2) {
    }
    const int64_t q0 = thread_runqueue_wait_ns();
    const int64_t c0 = thread_cpu_ns();
    while (thread_cpu_ns() - c0 < 60'000'000) {
    }
    waited[i] = thread_runqueue_wait_ns() - q0;
  };
  std::thread a(spin, 0), b(spin, 1);
  a.join();
  b.join();
  INFO("run-queue waits: " << waited[0] / 1e6 << " ms, " << waited[1] / 1e6 << " ms");
  CHECK(waited[0] + waited[1] >= 40'000'000);  // together at least 40 of the 60 ms the other ran
  CHECK(waited[0] > 0);
  CHECK(waited[1] > 0);
}

namespace {

// Open file descriptors of this process (entries of /proc/self/fd, the listing's own included).
int open_fd_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

}  // namespace

TEST_CASE("thread_runqueue_wait_ns keeps one open schedstat file per thread, read again on each call", "[core]") {
  if (thread_runqueue_wait_ns() < 0) {
    WARN("skipped: this kernel does not expose /proc/thread-self/schedstat");
    return;
  }
  const int before = open_fd_count();
  int during_first = 0, during_last = 0;
  int64_t first = 0, last = 0;
  std::thread t([&] {
    first = thread_runqueue_wait_ns();
    during_first = open_fd_count();
    for (int i = 0; i < 100; ++i) last = thread_runqueue_wait_ns();
    during_last = open_fd_count();
  });
  t.join();
  CHECK(during_first == before + 1);   // the thread's own file, kept open after its first call
  CHECK(during_last == during_first);  // later calls read it again instead of opening another
  CHECK(open_fd_count() == before);    // closed when the thread ended
  CHECK(first >= 0);
  CHECK(last >= first);  // the counter only grows
}
