#include <catch2/catch.hpp>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "core/error.hpp"
#include "engine/engine_choice.hpp"

using namespace ioprobe;

namespace {
TargetInfo block_target() {
  TargetInfo t;
  t.path = "/data";
  t.fs_type = "ext4";
  t.device = "nvme0n1p1";
  return t;
}
}  // namespace

TEST_CASE("io_uring refusals are explained by layer, never as errno 0 (C2)", "[engine]") {
  UringAvailability sysctl = explain_io_uring(EPERM, 2, 8 << 20, 0, false);
  CHECK_FALSE(sysctl.available);
  CHECK(sysctl.cause == "disabled by sysctl");
  CHECK(sysctl.message.find("EPERM") != std::string::npos);
  CHECK(sysctl.message.find("io_uring_disabled=2") != std::string::npos);
  CHECK(sysctl.message.find("errno 0") == std::string::npos);
  CHECK(sysctl.message.find("Success") == std::string::npos);

  CHECK(explain_io_uring(EPERM, 1, 8 << 20, 0, false).cause == "disabled by sysctl");
  UringAvailability seccomp = explain_io_uring(EPERM, 0, 8 << 20, 0, false);
  CHECK(seccomp.cause == "blocked by seccomp/container");
  CHECK(seccomp.message.find("io_uring_disabled=0") != std::string::npos);
  CHECK(explain_io_uring(ENOSYS, 0, 8 << 20, 0, false).cause == "blocked by seccomp/container");
  CHECK(explain_io_uring(ENOSYS, -1, 8 << 20, 0, false).cause.find("kernel without io_uring") == 0);

  UringAvailability memlock = explain_io_uring(0, 0, 8ULL << 20, 64ULL << 20, false);
  CHECK_FALSE(memlock.available);
  CHECK(memlock.cause == "RLIMIT_MEMLOCK too low for registered buffers");
  CHECK(memlock.message.find("64.00 MiB") != std::string::npos);
  CHECK(memlock.message.find("8.00 MiB") != std::string::npos);
  CHECK(explain_io_uring(0, 0, 8ULL << 20, 64ULL << 20, true).available);  // CAP_IPC_LOCK
  CHECK(explain_io_uring(0, 0, UINT64_MAX, 64ULL << 20, false).available);
}

TEST_CASE("choose_engine: io_uring for O_DIRECT on a device, psync elsewhere", "[engine]") {
  UringAvailability ok = explain_io_uring(0, 0, 8 << 20, 0, false);
  TargetInfo dev = block_target();
  CHECK(choose_engine("auto", dev, false, ok).engine == "io_uring");
  EngineChoice warm = choose_engine("auto", dev, true, ok);
  CHECK(warm.engine == "psync");
  CHECK(warm.reason.find("io-wq") != std::string::npos);

  TargetInfo shm;
  shm.fs_type = "tmpfs";
  shm.memory_backed = true;
  CHECK(choose_engine("auto", shm, false, ok).engine == "psync");
  TargetInfo net;
  net.fs_type = "fuse.sshfs";
  net.network = true;
  CHECK(choose_engine("auto", net, true, ok).engine == "psync");

  CHECK(choose_engine("psync", dev, false, ok).engine == "psync");
  CHECK(choose_engine("io_uring", shm, true, ok).engine == "io_uring");
  CHECK_THROWS_AS(choose_engine("aio", dev, false, ok), UsageError);
}

TEST_CASE("choose_engine: refused io_uring falls back with auto, fails with --engine io_uring", "[engine]") {
  UringAvailability refused = explain_io_uring(EPERM, 0, 8 << 20, 0, false);
  EngineChoice c = choose_engine("auto", block_target(), false, refused);
  CHECK(c.engine == "psync");
  CHECK(c.fallback);
  CHECK(c.reason == "fallback: io_uring EPERM, io_uring_disabled=0");
  CHECK_FALSE(c.warning.empty());
  try {
    choose_engine("io_uring", block_target(), false, refused);
    FAIL("expected IoError");
  } catch (const IoError& e) {
    CHECK(e.err() == EPERM);
    std::string m = e.what();
    CHECK(m.find("io_uring_setup") != std::string::npos);
    CHECK(m.find("blocked by seccomp/container") != std::string::npos);
  }
}

TEST_CASE("probe_io_uring on this kernel agrees with the sysctl", "[engine]") {
  UringAvailability u = probe_io_uring();
  if (u.io_uring_disabled == 0) CHECK((u.ring_ok || u.cause == "blocked by seccomp/container"));
  if (!u.ring_ok) CHECK(u.err != 0);
  CHECK_FALSE(u.message.empty());
}

TEST_CASE("probe_io_uring under a seccomp filter that refuses io_uring_setup says seccomp", "[engine]") {
  if (probe_io_uring().io_uring_disabled != 0 || !probe_io_uring().ring_ok) {
    WARN("io_uring is not usable here to begin with; skipping the seccomp simulation");
    return;
  }
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Return EPERM for io_uring_setup, as Docker's default profile does (moby#47532).
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
    char out[256] = "setup-failed";
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0) {
      UringAvailability u = probe_io_uring();
      std::snprintf(out, sizeof out, "%d|%s", u.err, u.cause.c_str());
    }
    ssize_t w = write(fds[1], out, std::strlen(out));
    _exit(w > 0 ? 0 : 1);
  }
  close(fds[1]);
  char buf[256] = {};
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(n > 0);
  CHECK(std::string(buf) == std::to_string(EPERM) + "|blocked by seccomp/container");
}

TEST_CASE("io_uring ECANCELED errors get the io-wq thread-limit hint, other errors none", "[engine]") {
  const std::string canceled = "read /data/x.jpg: " + errno_text(ECANCELED);
  REQUIRE(canceled.find("(ECANCELED)") != std::string::npos);  // errno_text's form, which the hint looks for
  CHECK_THAT(io_uring_canceled_hint(canceled), Catch::Contains("pids.max") && Catch::Contains("--engine psync"));
  CHECK(io_uring_canceled_hint("read /data/x.jpg: " + errno_text(EIO)).empty());
}
