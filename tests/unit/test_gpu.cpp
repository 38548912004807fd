// The optional CUDA build: the CUDA code is compiled when CMake found the
// toolkit (IOPROBE_EXPECT_CUDA, set by tests/CMakeLists.txt from CUDAToolkit_FOUND), and the GPU
// options refuse with what is missing where no GPU answers. The copies themselves need a GPU:
// those checks skip here, with the reason, and run on a GPU host (tools/device-check).
#include <catch2/catch.hpp>

#include "cli/gpu_preflight.hpp"
#include "core/error.hpp"
#include "gpu/cuda_copy.hpp"
#include "gpu/gds.hpp"
#include "loader/h2d_stage.hpp"

using namespace ioprobe;

TEST_CASE("the CUDA code is in the build exactly when CMake found the toolkit", "[gpu]") {
  const CudaAvailability a = cuda_availability();
  CHECK(a.built == (IOPROBE_EXPECT_CUDA != 0));
  CHECK(gds_availability().built_cuda == a.built);
  if (a.built) CHECK(a.runtime_version > 0);  // cudaRuntimeGetVersion answers without a GPU
  if (!a.built) CHECK_THAT(a.error, Catch::Contains("built without CUDA"));
}

TEST_CASE("gpu options: --h2d cuda and --engine gds refuse with what is missing", "[gpu][cli]") {
  CHECK(cli::check_h2d("none") == 0);
  const CudaAvailability a = cuda_availability();
  if (a.usable()) {
    WARN("a CUDA GPU is usable here (" << a.device_name << "): the refusal is not exercised");
    CHECK(cli::check_h2d("cuda") == a.devices);
  } else {
    try {
      cli::check_h2d("cuda");
      FAIL("--h2d cuda was accepted without a usable GPU");
    } catch (const UsageError& e) {
      const std::string m = e.what();
      CHECK_THAT(m, Catch::StartsWith("--h2d cuda: "));
      if (a.built)
        CHECK_THAT(m, Catch::Contains("no CUDA GPU is usable here") && Catch::Contains("cudaGetDeviceCount"));
      else CHECK_THAT(m, Catch::Contains("built without CUDA"));
    }
  }
  try {
    cli::refuse_gds();
    FAIL("--engine gds was accepted");
  } catch (const UsageError& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Catch::StartsWith("--engine gds: "));
    const GdsAvailability g = gds_availability();
    // The first thing said is that no build reads through cuFile: rebuilding with GDS would not help.
    CHECK_THAT(m, Catch::StartsWith("--engine gds: this version of ioprobe has no cuFile"));
    const char* want = !g.built_cuda ? "built without CUDA" : !g.built_cufile ? "no libcufile" : "gdsio";
    CHECK_THAT(m, Catch::Contains(want));
  }
}

TEST_CASE("the H2D stage without a GPU records why and copies nothing", "[gpu][loader]") {
  if (cuda_availability().usable()) {
    LoaderConfig cfg;
    cfg.h2d_devices = cuda_availability().devices;
    H2dStage st(cfg, 0);
    RankStats rs;
    Batch b;
    b.samples = 1;
    b.bytes = 64 << 20;
    st.copy(b, rs);
    CHECK(rs.h2d_error.empty());
    CHECK(rs.h2d_copies == 1);
    CHECK(rs.h2d_bytes == (64u << 20));
    CHECK(rs.h2d_ns > 0);
    return;
  }
  LoaderConfig cfg;
  cfg.h2d_devices = 1;
  H2dStage st(cfg, 3);
  CHECK_FALSE(st.error().empty());
  RankStats rs;
  Batch b;
  b.samples = 4;
  b.bytes = 1 << 20;
  st.copy(b, rs);
  st.copy(b, rs);
  CHECK(rs.h2d_copies == 0);
  CHECK(rs.h2d_bytes == 0);
  CHECK(rs.h2d_device == 0);
  CHECK(rs.h2d_error == st.error());
}

#include "loader/pin_stage.hpp"

TEST_CASE("pin stage: growing its page-locked buffer is setup, not copy time", "[loader][pin]") {
  // Three 8 MiB batches, then a larger one: the buffers grow twice (mmap, fill, mlock), and only
  // those two growths count as setup; every batch's memcpy counts as copying.
  const std::vector<uint64_t> sizes = {8u << 20, 8u << 20, 8u << 20, 12u << 20};
  PrefetchQueue q(
      1, 2, [](int) {},
      [&](int w, const BatchTask& t, const std::atomic<bool>&) {
        Batch r;
        r.seq = t.seq;
        r.worker = w;
        r.samples = 1;
        r.bytes = sizes[t.seq];
        return r;
      });
  PinStage pin(q, 0, 1, [] { return false; });
  std::vector<BatchTask> tasks;
  for (uint64_t i = 0; i < sizes.size(); ++i) tasks.push_back({i, i, i + 1, -1});
  q.start_epoch(std::move(tasks));
  pin.start_epoch();
  int n = 0;
  while (pin.next()) ++n;
  pin.end_epoch();
  CHECK(n == 4);
  CHECK(pin.batches() == 4);
  CHECK(pin.pinned_bytes() == (36u << 20));
  CHECK(pin.setup_ns() > 0);
  CHECK(pin.busy_ns() > 0);
}
