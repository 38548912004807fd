#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/engine_choice.hpp"
#include "engine/uring_memlock.hpp"

using namespace ioprobe;

namespace {
constexpr uint64_t KiB = 1024;
MemlockLimit limit(uint64_t soft, uint64_t hard, bool cap = false) { return MemlockLimit{soft, hard, cap}; }
}  // namespace

TEST_CASE("ring_locked_bytes matches what kernel 6.18 charged, measured as uid nobody", "[memlock]") {
  // Measured: rings that fit under ulimit -l 4096 (4 MiB): 512 of <= 64 entries, 256 of 128, 146 of 256.
  CHECK(ring_locked_bytes(1) == 8 * KiB);
  CHECK(ring_locked_bytes(8) == 8 * KiB);
  CHECK(ring_locked_bytes(64) == 8 * KiB);
  CHECK(ring_locked_bytes(128) == 16 * KiB);
  CHECK(ring_locked_bytes(256) == 28 * KiB);
  CHECK(4096 * KiB / ring_locked_bytes(256) == 146);
  CHECK(ring_locked_bytes(100) == ring_locked_bytes(128));  // rounded up to a power of two
}

TEST_CASE("kernel_charges_rings follows the 5.12 and 6.14 changes", "[memlock]") {
  CHECK(kernel_charges_rings("5.10.0-28-amd64"));
  CHECK_FALSE(kernel_charges_rings("5.12.0"));
  CHECK_FALSE(kernel_charges_rings("6.1.0-18-amd64"));
  CHECK_FALSE(kernel_charges_rings("6.13.9"));
  CHECK(kernel_charges_rings("6.14.0"));
  CHECK(kernel_charges_rings("6.18.44-fc-v1045"));
  CHECK(kernel_charges_rings("garbage"));  // unknown: assume the limit applies
}

TEST_CASE("registered buffers are charged in whole huge pages from 2 MiB", "[memlock]") {
  CHECK(registered_locked_bytes(0) == 0);
  CHECK(registered_locked_bytes(5000) == 8 * KiB);
  CHECK(registered_locked_bytes(2 * 1024 * KiB + 1) == 4 * 1024 * KiB);
}

TEST_CASE("plan_memlock: the default 8-worker run under ulimit -l 64 does not fit", "[memlock]") {
  const MemlockNeed need = loader_memlock_need(8, "6.18.0");
  CHECK(need.rings == 9);  // the probe's ring is still charged while it is freed
  CHECK(need.total() == 72 * KiB);
  MemlockPlan p = plan_memlock(need, limit(64 * KiB, 64 * KiB));
  CHECK(p.step == MemlockStep::psync);
  CHECK(p.text.find("72 KiB") != std::string::npos);
  CHECK(p.text.find("64 KiB") != std::string::npos);
  // 7 workers (+ the probe's ring) fit exactly (ulimit -l 64, kernel 6.18: docs/benchmarks/robustness.md).
  CHECK(plan_memlock(loader_memlock_need(7, "6.18.0"), limit(64 * KiB, 64 * KiB)).step == MemlockStep::fits);
  // Debian's default 8 MiB: --gpus 8 --workers 160 needs 1281 rings = 10,248 KiB.
  CHECK(plan_memlock(loader_memlock_need(8 * 160, "6.18.0"), limit(8192 * KiB, 8192 * KiB)).step == MemlockStep::psync);
  // A kernel that charges rings to the memory cgroup needs nothing.
  CHECK(plan_memlock(loader_memlock_need(8 * 160, "6.1.0"), limit(64 * KiB, 64 * KiB)).step == MemlockStep::fits);
}

TEST_CASE("plan_memlock: raise the soft limit, then drop registered buffers, then psync", "[memlock]") {
  MemlockNeed need;
  need.rings = 4;
  need.ring_bytes = 8 * KiB;
  need.registered_bytes = 8 * 1024 * KiB;
  // CAP_IPC_LOCK or an unlimited soft limit: everything fits.
  CHECK(plan_memlock(need, limit(64 * KiB, 64 * KiB, true)).step == MemlockStep::fits);
  CHECK(plan_memlock(need, limit(UINT64_MAX, UINT64_MAX)).step == MemlockStep::fits);
  // Fits under the hard limit: raise the soft one to exactly the need.
  MemlockPlan r = plan_memlock(need, limit(64 * KiB, UINT64_MAX));
  CHECK(r.step == MemlockStep::raise_soft);
  CHECK(r.raise_to == need.total());
  // The rings fit, the buffers do not.
  MemlockPlan nb = plan_memlock(need, limit(64 * KiB, 64 * KiB));
  CHECK(nb.step == MemlockStep::no_fixed_buffers);
  CHECK(nb.needed == 32 * KiB);
  CHECK(nb.raise_to == 0);
  // Rings over the soft but under the hard limit, buffers over both: raise to the rings' need.
  MemlockPlan nbr = plan_memlock(need, limit(16 * KiB, 64 * KiB));
  CHECK(nbr.step == MemlockStep::no_fixed_buffers);
  CHECK(nbr.raise_to == 32 * KiB);
  // Not even the rings fit.
  CHECK(plan_memlock(need, limit(16 * KiB, 16 * KiB)).step == MemlockStep::psync);
}

TEST_CASE("apply_memlock_plan: auto falls back to psync, --engine io_uring stops naming needed vs limit", "[memlock]") {
  const MemlockNeed need = loader_memlock_need(8, "6.18.0");
  EngineKind engine = EngineKind::kIoUring;
  std::string reason = "O_DIRECT reads";
  std::vector<std::string> warnings;
  apply_memlock_plan(EngineSelection::kAuto, need, limit(64 * KiB, 64 * KiB), engine, reason, warnings);
  CHECK(engine == EngineKind::kPsync);
  CHECK(reason.find("fallback") != std::string::npos);
  CHECK(reason.find("72 KiB") != std::string::npos);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("ulimit -l 72") != std::string::npos);

  engine = EngineKind::kIoUring;
  try {
    apply_memlock_plan(EngineSelection::kIoUring, need, limit(64 * KiB, 64 * KiB), engine, reason, warnings);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.exit_code() == kExitFailure);
    const std::string m = e.what();
    CHECK(m.find("needs 72 KiB") != std::string::npos);
    CHECK(m.find("RLIMIT_MEMLOCK is 64 KiB") != std::string::npos);
    CHECK(m.find("CAP_IPC_LOCK") != std::string::npos);
    CHECK(m.find("limits.conf") != std::string::npos);
  }
  // Root (CAP_IPC_LOCK): io_uring stays, and the header is not cluttered with a limit that does not apply.
  engine = EngineKind::kIoUring;
  reason = "O_DIRECT reads";
  CHECK(apply_memlock_plan(EngineSelection::kAuto, need, limit(0, 0, true), engine, reason, warnings).step ==
        MemlockStep::fits);
  CHECK(engine == EngineKind::kIoUring);
  CHECK(reason == "O_DIRECT reads");
  // A limit that applies and fits is stated.
  apply_memlock_plan(EngineSelection::kAuto, need, limit(128 * KiB, 128 * KiB), engine, reason, warnings);
  CHECK(reason.find("needs 72 KiB; RLIMIT_MEMLOCK 128 KiB") != std::string::npos);
  // psync chosen already: nothing to decide.
  engine = EngineKind::kPsync;
  CHECK(apply_memlock_plan(EngineSelection::kAuto, need, limit(0, 0), engine, reason, warnings).step ==
        MemlockStep::fits);
  CHECK(engine == EngineKind::kPsync);
}

TEST_CASE("probe says what the memlock limit allows", "[memlock]") {
  const std::string allows = memlock_allows_text(limit(64 * KiB, 64 * KiB), true, 8 * KiB);
  CHECK(allows.find("RLIMIT_MEMLOCK 64 KiB") != std::string::npos);
  CHECK(allows.find("(8 KiB per 8-entry ring)") != std::string::npos);
  CHECK(allows.find("at most 7 loader workers") != std::string::npos);
  CHECK(memlock_allows_text(limit(64 * KiB, 64 * KiB), false, 8 * KiB).find("only registered buffers") !=
        std::string::npos);
  CHECK(memlock_allows_text(limit(64 * KiB, 64 * KiB, true), true, 8 * KiB).find("CAP_IPC_LOCK") != std::string::npos);
}

TEST_CASE("an ENOMEM from io_uring setup names the memlock limit when it applies", "[memlock]") {
  UringAvailability u = explain_io_uring(ENOMEM, 0, 64 * KiB, 0, false);
  CHECK(u.cause.find("RLIMIT_MEMLOCK") != std::string::npos);
  CHECK(u.message.find("seccomp") == std::string::npos);
  CHECK(u.message.find("ulimit -l") != std::string::npos);
  UringAvailability c = explain_io_uring(ENOMEM, 0, 64 * KiB, 0, true);
  CHECK(c.cause.find("RLIMIT_MEMLOCK") == std::string::npos);
}
