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
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/engine_choice.hpp"
#include "engine/uring_ring.hpp"
#include "raw/raw_config.hpp"
#include "raw/raw_run.hpp"
#include "topology/target.hpp"

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

TEST_CASE("io_uring refusals are explained by layer, never as errno 0", "[engine]") {
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
  CHECK(choose_engine(EngineSelection::kAuto, dev, false, ok).engine == EngineKind::kIoUring);
  EngineChoice warm = choose_engine(EngineSelection::kAuto, dev, true, ok);
  CHECK(warm.engine == EngineKind::kPsync);
  CHECK(warm.reason.find("io-wq") != std::string::npos);

  TargetInfo shm;
  shm.fs_type = "tmpfs";
  shm.memory_backed = true;
  CHECK(choose_engine(EngineSelection::kAuto, shm, false, ok).engine == EngineKind::kPsync);
  TargetInfo net;
  net.fs_type = "fuse.sshfs";
  net.network = true;
  CHECK(choose_engine(EngineSelection::kAuto, net, true, ok).engine == EngineKind::kPsync);

  CHECK(choose_engine(EngineSelection::kPsync, dev, false, ok).engine == EngineKind::kPsync);
  CHECK(choose_engine(EngineSelection::kIoUring, shm, true, ok).engine == EngineKind::kIoUring);
  CHECK_FALSE(engine_selection_from_string("aio"));  // cli/ offers only auto, io_uring, psync (and refuses gds)
}

TEST_CASE("choose_engine: the reason speaks of files only where each read opens its own", "[engine]") {
  const UringAvailability ok = explain_io_uring(0, 0, 8 << 20, 0, false);
  EngineRequest r;
  r.buffered = false;
  CHECK_THAT(choose_engine(r, block_target(), ok).reason, Catch::Contains("opens, reads and closes a file"));
  r.file_per_read = false;  // raw: blocks of one open file
  const EngineChoice raw = choose_engine(r, block_target(), ok);
  CHECK(raw.engine == EngineKind::kIoUring);
  CHECK(raw.reason.find("file") == std::string::npos);
  CHECK_THAT(raw.reason, Catch::Contains("one io_uring_enter per read"));
}

TEST_CASE("choose_engine: refused io_uring falls back with auto, fails with --engine io_uring", "[engine]") {
  UringAvailability refused = explain_io_uring(EPERM, 0, 8 << 20, 0, false);
  EngineChoice c = choose_engine(EngineSelection::kAuto, block_target(), false, refused);
  CHECK(c.engine == EngineKind::kPsync);
  CHECK(c.fallback);
  CHECK(c.reason == "fallback: io_uring EPERM, io_uring_disabled=0");
  CHECK_FALSE(c.warning.empty());
  try {
    choose_engine(EngineSelection::kIoUring, block_target(), false, refused);
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
  CHECK_THAT(io_uring_canceled_hint(ECANCELED), Catch::Contains("pids.max") && Catch::Contains("--engine psync"));
  CHECK(io_uring_canceled_hint(EIO).empty());
  CHECK(io_uring_canceled_hint(0).empty());
}

TEST_CASE("a refused ring has one explanation per errno: cause, sysctl where it can be the cause, fix", "[engine]") {
  MemlockLimit limited;
  limited.soft = limited.hard = 64 * 1024;
  MemlockLimit unlimited;  // soft = hard = UINT64_MAX
  MemlockLimit cap = limited;
  cap.cap_ipc_lock = true;

  for (int err : {EPERM, EACCES}) {
    RingRefusal sysctl = explain_ring_refusal(err, 2, limited);
    CHECK(sysctl.cause == "disabled by sysctl");
    CHECK_THAT(sysctl.text(), Catch::Contains(errno_name(err)) && Catch::Contains("io_uring_disabled=2") &&
                                  Catch::Contains("sysctl -w kernel.io_uring_disabled=0") &&
                                  Catch::Contains("--engine psync"));
    CHECK(explain_ring_refusal(err, 1, limited).cause == "disabled by sysctl");
    RingRefusal seccomp = explain_ring_refusal(err, 0, limited);
    CHECK(seccomp.cause == "blocked by seccomp/container");
    CHECK_THAT(seccomp.text(), Catch::Contains("io_uring_disabled=0") && Catch::Contains("seccomp profile"));
    CHECK(explain_ring_refusal(err, -1, limited).cause == "blocked by seccomp/container");
  }
  CHECK(explain_ring_refusal(ENOSYS, 0, limited).cause == "blocked by seccomp/container");
  RingRefusal nosys = explain_ring_refusal(ENOSYS, -1, limited);
  CHECK(nosys.cause == "kernel without io_uring or blocked by seccomp");
  CHECK_THAT(nosys.text(), Catch::Contains("ENOSYS") && Catch::Contains("io_uring_disabled absent") &&
                               Catch::Contains("CONFIG_IO_URING"));

  RingRefusal memlock = explain_ring_refusal(ENOMEM, 0, limited);
  CHECK_THAT(memlock.cause, Catch::StartsWith("RLIMIT_MEMLOCK is 64 KiB"));
  CHECK_THAT(memlock.text(), Catch::Contains("ENOMEM") && Catch::Contains("ulimit -l") &&
                                 Catch::Contains("CAP_IPC_LOCK") && Catch::Contains("--engine psync"));
  // The sysctl and seccomp cannot refuse with ENOMEM: they are not named.
  CHECK_THAT(memlock.text(), !Catch::Contains("io_uring_disabled") && !Catch::Contains("seccomp"));
  for (const MemlockLimit& l : {unlimited, cap}) {
    RingRefusal r = explain_ring_refusal(ENOMEM, 0, l);
    CHECK(r.cause == "ring memory refused (ENOMEM: memory cgroup or host memory)");
    CHECK_THAT(r.fix, Catch::Contains("memory.max"));
  }
  CHECK_THAT(explain_ring_refusal(ENOMEM, 0, cap).fix, Catch::Contains("CAP_IPC_LOCK"));

  RingRefusal other = explain_ring_refusal(EINVAL, 0, limited);
  CHECK(other.cause == "ring setup failed");
  CHECK_THAT(other.text(), Catch::StartsWith(errno_text(EINVAL)) && !Catch::Contains("io_uring_disabled"));

  for (int err : {EPERM, EACCES, ENOSYS, ENOMEM, EINVAL, EFAULT}) {
    const std::string t = explain_ring_refusal(err, 0, limited).text();
    CHECK_THAT(t, !Catch::Contains("errno 0") && !Catch::Contains("Success"));
    CHECK(explain_ring_refusal(err, 0, limited).hint() == t.substr(errno_text(err).size() + 2));
  }
  // Every user words a refusal with the same explanation.
  CHECK(io_uring_setup_failure_text(EPERM) == "io_uring_queue_init failed: " + explain_ring_refusal(EPERM).text());
  CHECK(io_uring_setup_hint(ENOMEM) == explain_ring_refusal(ENOMEM).hint());
  UringAvailability u = explain_io_uring(EPERM, 2, 64 * 1024, 0, false);
  CHECK_THAT(u.message, Catch::EndsWith(explain_ring_refusal(EPERM, 2, limited).text()));
}

TEST_CASE("UringRing: sets up, moves, exits; SINGLE_ISSUER falls back with a note", "[engine]") {
  if (!probe_io_uring().ring_ok) {
    WARN("io_uring is not usable here; skipping the ring life cycle");
    return;
  }
  UringRing ring;
  CHECK_FALSE(ring.ok());
  std::vector<std::string> notes;
  RingOptions ro;
  ro.entries = 4;
  ro.single_issuer = true;
  REQUIRE(ring.init(ro, &notes) == 0);
  CHECK(ring.ok());
  CHECK(ring.get() != nullptr);
  CHECK((ring.single_issuer() || (notes.size() == 1 && notes[0].find("defer_taskrun: off") == 0)));
  UringRing moved(std::move(ring));
  CHECK(moved.ok());
  CHECK_FALSE(ring.ok());  // NOLINT(bugprone-use-after-move): the moved-from ring owns nothing
  moved.reset();
  CHECK_FALSE(moved.ok());
  moved.reset();  // idempotent
  UringRing plain;
  REQUIRE(plain.init(RingOptions{}) == 0);
  CHECK_FALSE(plain.single_issuer());
}

namespace {
RawConfig raw_config(bool buffered, unsigned depth, RawPattern rw = RawPattern::randread) {
  RawConfig c;
  c.direct = !buffered;
  c.iodepth = depth;
  c.rw = rw;
  return c;
}
}  // namespace

TEST_CASE("one engine chooser: raw, the loader and probe get the same engine for the same target, cache, depth",
          "[engine]") {
  UringAvailability ok = explain_io_uring(0, 0, 8 << 20, 0, false);
  UringAvailability refused = explain_io_uring(EPERM, 2, 8 << 20, 0, false);
  TargetInfo dev = block_target();
  TargetInfo shm;
  shm.path = "/dev/shm";
  shm.fs_type = "tmpfs";
  shm.memory_backed = true;
  TargetInfo net;
  net.path = "/mnt/nfs";
  net.fs_type = "nfs4";
  net.network = true;
  TargetInfo nodev;
  nodev.path = "/mnt/overlay";
  nodev.fs_type = "overlay";
  for (const TargetInfo& t : {dev, shm, net, nodev}) {
    for (const UringAvailability& u : {ok, refused}) {
      for (bool buffered : {true, false}) {
        for (unsigned depth : {1u, 2u, 32u}) {
          CAPTURE(t.fs_type, u.available, buffered, depth);
          EngineRequest r;
          r.buffered = buffered;
          r.depth = depth;
          const EngineChoice one = choose_engine(r, t, u);
          const RawEngineChoice raw = choose_raw_engine(raw_config(buffered, depth), t, -1, u);
          CHECK(raw.name == one.engine);
          EngineRequest blocks = r;  // raw reads blocks of one open file: the same engine, its own words
          blocks.file_per_read = false;
          CHECK(choose_engine(blocks, t, u).engine == one.engine);
          CHECK(raw.reason == "auto: " + choose_engine(blocks, t, u).reason);
          if (depth == 1) {  // the loader's workers and probe's cold/warm rows read at depth 1
            const EngineChoice loader = choose_engine(EngineSelection::kAuto, t, buffered, u);
            CHECK(loader.engine == raw.name);
            CHECK(loader.reason == one.reason);
          }
        }
      }
    }
  }
  // The decision itself: buffered reads go through psync at depth 1 and io_uring with requests in
  // flight (measured on ext4: ARCHITECTURE.md's engine row); O_DIRECT on a device io_uring.
  CHECK(choose_raw_engine(raw_config(true, 1), dev, 1.0, ok).name == EngineKind::kPsync);
  CHECK(choose_raw_engine(raw_config(true, 1), dev, 0.0, ok).name == EngineKind::kPsync);
  CHECK(choose_raw_engine(raw_config(true, 16), dev, 1.0, ok).name == EngineKind::kIoUring);
  CHECK(choose_raw_engine(raw_config(true, 16), dev, 0.0, ok).name == EngineKind::kIoUring);
  CHECK(choose_raw_engine(raw_config(false, 1), dev, -1, ok).name == EngineKind::kIoUring);
  CHECK(choose_raw_engine(raw_config(true, 16), shm, 1.0, ok).name == EngineKind::kPsync);
  CHECK(choose_raw_engine(raw_config(true, 16, RawPattern::write), dev, -1, ok).name == EngineKind::kIoUring);
  // A refusal falls back the same way for both, with the warning.
  const RawEngineChoice fb = choose_raw_engine(raw_config(false, 16), dev, -1, refused);
  CHECK(fb.name == EngineKind::kPsync);
  CHECK_THAT(fb.warning, Catch::Contains("io_uring_disabled=2"));
  CHECK_THROWS_AS(choose_raw_engine(
                      [] {
                        RawConfig c = raw_config(false, 16);
                        c.engine = EngineSelection::kIoUring;
                        return c;
                      }(),
                      dev, -1, refused),
                  IoError);
}
