// How ioprobe watches the calibration driver (calibrate/driver.hpp, driver_io.hpp): the user's
// stdout counted, the driver's last step kept, and --timeout ending the driver and every process
// it started, after asking each for its stacks.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "calibrate/driver.hpp"
#include "calibrate/driver_io.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

namespace {

std::string script(const TempDir& d, const std::string& name, const std::string& body) {
  const std::string path = d.path + "/" + name;
  std::ofstream(path) << body;
  chmod(path.c_str(), 0755);
  return path;
}

// Whether pid runs (a killed process whose parent has not reaped it yet is a zombie: it runs no more).
bool running(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z' && stat[paren + 2] != 'X';
}

}  // namespace

TEST_CASE("driver watch: stdout lines counted, the last own step line kept", "[calibrate][driver]") {
  TempDir d("calwatch");
  DriverWatch w;  // no mark: stdout is counted, not shown
  const DriverRun r = run_driver(script(d, "talk",
                                        "#!/bin/sh\necho 'ioprobe calibrate: [0.1 s] importing x.py' >&2\n"
                                        "for i in 1 2 3; do echo \"print $i\"; done\n"
                                        "echo 'ioprobe calibrate: [0.2 s] pass 1 of 6: one pass' >&2\n"
                                        "echo 'a user line on stderr' >&2\nprintf 'no newline'\n"),
                                 "drv.py", {}, w);
  CHECK(r.exit_code == 0);
  CHECK(r.out_lines == 4);  // the last line without its newline counted too
  CHECK(r.out_bytes == 34);
  CHECK_FALSE(r.out_blank);
  CHECK(r.last_step == "[0.2 s] pass 1 of 6: one pass");  // the user's own stderr line is not a step
  CHECK_FALSE(r.timed_out);
  // Only white space on stdout, nothing on stderr: silent, as before stdout was counted.
  const DriverRun blank = run_driver(script(d, "blank", "#!/bin/sh\necho ' '\nexit 1\n"), "drv.py", {}, w);
  CHECK(blank.silent());
  CHECK(blank.out_lines == 1);
}

TEST_CASE("driver watch: --timeout asks each process for its stacks, then kills them all", "[calibrate][driver]") {
  TempDir d("calwatch");
  DriverWatch w;
  w.timeout_s = 1;
  // A parent that ignores the stack signal (as a Python with faulthandler survives it) and a child
  // that sleeps on: both are asked, both are killed, and run_driver returns soon after the limit.
  const auto t0 = std::chrono::steady_clock::now();
  const DriverRun r =
      run_driver(script(d, "hang",
                        "#!/bin/sh\ntrap '' USR1\necho 'ioprobe calibrate: [0.0 s] calling make(paths)' "
                        ">&2\nsleep 300 &\nsleep 300\n"),
                 "drv.py", {}, w);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  CHECK(took < 20);  // the limit, 1 s per process asked, 3 s for the pipes: a loaded machine adds more
  CHECK(r.elapsed_s >= 1);
  CHECK(r.last_step == "[0.0 s] calling make(paths)");
  REQUIRE(r.dumped.size() >= 3);    // the script and its two sleeps
  for (const int pid : r.dumped) {  // none left running (a killed process ends once scheduled: up to 10 s)
    for (int i = 0; i < 200 && running(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(running(pid));
  }
  // No limit: 0 lets it finish.
  w.timeout_s = 0;
  CHECK_FALSE(run_driver(script(d, "quick", "#!/bin/sh\nsleep 1.2\n"), "drv.py", {}, w).timed_out);
}

TEST_CASE("descendant_processes: children and grandchildren, parents first", "[calibrate][driver]") {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (fork() == 0) {
      pause();
      _exit(0);
    }
    pause();
    _exit(0);
  }
  std::vector<pid_t> below;
  for (int i = 0; i < 100 && below.empty(); ++i) {  // the grandchild appears once the child forked it
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    below = descendant_processes(child);
  }
  const std::vector<pid_t> mine = descendant_processes(getpid());
  CHECK(below.size() == 1);
  REQUIRE(mine.size() >= 2);
  CHECK(std::find(mine.begin(), mine.end(), child) < std::find(mine.begin(), mine.end(), below.at(0)));
  kill(below.at(0), SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}
