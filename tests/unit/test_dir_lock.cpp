#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "core/dir_lock.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

TEST_CASE("DirLock: a second taker waits, told who holds it; the last one removes the file", "[dir_lock]") {
  TempDir dir("dirlock");
  const std::string lock_file = dir.path + "/" + kDirLockName;
  std::string told;
  std::atomic<bool> second_has_it{false};
  {
    auto first = std::make_unique<DirLock>(dir.path, DirLock::Mode::kExclusive, "ioprobe gen --dir x", nullptr);
    struct stat st {};
    REQUIRE(stat(lock_file.c_str(), &st) == 0);
    // flock(2) locks belong to an open file description: a second open in this process conflicts.
    std::thread second([&] {
      DirLock l(dir.path, DirLock::Mode::kShared, "", [&](const std::string& holder) { told = holder; });
      second_has_it = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_FALSE(second_has_it.load());
    first.reset();
    second.join();
  }
  CHECK(second_has_it.load());
  CHECK(told.find("PID " + std::to_string(getpid())) != std::string::npos);
  CHECK(told.find("ioprobe gen --dir x") != std::string::npos);
  struct stat st {};
  CHECK(stat(lock_file.c_str(), &st) != 0);  // removed by the last holder
}

TEST_CASE("DirLock: shared holders do not wait for each other", "[dir_lock]") {
  TempDir dir("dirlock");
  bool waited = false;
  DirLock a(dir.path, DirLock::Mode::kExclusive, "", nullptr);
  a.downgrade();
  DirLock b(dir.path, DirLock::Mode::kShared, "", [&](const std::string&) { waited = true; });
  CHECK_FALSE(waited);
}
