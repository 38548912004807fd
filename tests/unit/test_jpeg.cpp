// --content jpeg (dataset/jpeg_content) and --decode jpeg (loader/jpeg_decode, the loader's workers).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>

#include "core/error.hpp"
#include "dataset/generator.hpp"
#include "dataset/jpeg_content.hpp"
#include "dataset/manifest.hpp"
#include "dataset/spec.hpp"
#include "dataset/walker.hpp"
#include "loader/jpeg_decode.hpp"
#include "loader/loader_run.hpp"
#include "temp_dir.hpp"

using namespace ioprobe;

namespace {

// workloads/imagenet-like.ini's size distribution.
DatasetSpec imagenet_like(uint64_t files, uint64_t seed) {
  DatasetSpec s;
  s.preset = "imagenet-like";
  s.files = files;
  s.dirs = 4;
  s.dist = SizeDist::kLognormal;
  s.size_mean = 114660;
  s.size_stdev = 57330;
  s.size_min = 1024;
  s.size_max = 2 << 20;
  s.seed = seed;
  s.content = ContentKind::kJpeg;
  return s;
}

std::vector<unsigned char> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("make_jpeg_file: exactly the drawn size, ImageNet-like dimensions, decodes, real image data", "[jpeg]") {
  const DatasetSpec s = imagenet_like(40, 11);
  std::vector<uint64_t> sizes = draw_file_sizes(s);
  // The bounds and the sizes whose padding would be 1-3 bytes short of a COM segment.
  for (uint64_t t : {kJpegMinBytes, kJpegMinBytes + 1, kJpegMinBytes + 3, uint64_t{5000}, uint64_t{2} << 20})
    sizes.push_back(t);
  JpegDecoder dec;
  uint64_t padding = 0, total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const uint64_t t = sizes[i];
    INFO("file " << i << " target " << t << " B");
    REQUIRE(t >= s.size_min);
    REQUIRE(t <= s.size_max);
    const JpegFile f = make_jpeg_file(t, s.seed ^ (i * 0x100000001B3ULL));
    REQUIRE(f.bytes.size() == t);
    REQUIRE(f.image_bytes <= t);
    CHECK(has_jpeg_signature(f.bytes.data(), f.bytes.size()));
    CHECK(f.bytes[t - 2] == 0xFF);  // ends with EOI
    CHECK(f.bytes[t - 1] == 0xD9);
    CHECK(f.dims.width >= 8);
    CHECK(f.dims.height >= 8);
    CHECK(std::max(f.dims.width, f.dims.height) <= 16384);
    // Typical sizes keep the drawn ImageNet-like dimensions: long side 500, short side 300..500.
    if (t >= 100000 && t <= 250000) {
      CHECK(std::max(f.dims.width, f.dims.height) == 500);
      CHECK(std::min(f.dims.width, f.dims.height) >= 300);
    }
    const JpegDecodeResult d = dec.decode(f.bytes.data(), f.bytes.size());
    INFO(d.error);
    REQUIRE(d.ok);
    CHECK(d.width == f.dims.width);
    CHECK(d.height == f.dims.height);
    const auto& px = dec.pixels();
    CHECK(std::set<unsigned char>(px.begin(), px.begin() + 3 * d.width * d.height).size() > 16);  // not flat
    padding += t - f.image_bytes;
    total += t;
  }
  // The bytes are image data, not padding (under 5% of them are COM segments).
  CHECK(static_cast<double>(padding) < 0.05 * static_cast<double>(total));
}

TEST_CASE("make_jpeg_file is deterministic from the seed and refuses sizes it cannot make", "[jpeg]") {
  const JpegFile a = make_jpeg_file(114660, 42), b = make_jpeg_file(114660, 42), c = make_jpeg_file(114660, 43);
  CHECK(a.bytes == b.bytes);
  CHECK(a.bytes != c.bytes);
  CHECK(draw_jpeg_dims(42).width == draw_jpeg_dims(42).width);
  CHECK_THROWS_AS(make_jpeg_file(kJpegMinBytes - 1, 1), std::invalid_argument);
  CHECK_THROWS_AS(make_jpeg_file(kJpegMaxBytes + 1, 1), std::invalid_argument);
}

TEST_CASE("JpegDecoder: not a JPEG and truncated files fail with libjpeg-turbo's message, the next file decodes",
          "[jpeg]") {
  JpegDecoder dec;
  std::vector<unsigned char> junk(5000);
  fill_pseudorandom(reinterpret_cast<char*>(junk.data()), junk.size(), 7);
  JpegDecodeResult r = dec.decode(junk.data(), junk.size());
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("Not a JPEG file") != std::string::npos);
  const JpegFile f = make_jpeg_file(50000, 3);
  r = dec.decode(f.bytes.data(), f.bytes.size() / 2);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("Premature end") != std::string::npos);
  r = dec.decode(f.bytes.data(), f.bytes.size());
  CHECK(r.ok);
}

TEST_CASE("ensure_dataset with JPEG content: files decode, the manifest names the content, reuse keeps it",
          "[jpeg][dataset]") {
  TempDir d("jpeg");
  const std::string dir = d.path + "/set";
  DatasetSpec s = imagenet_like(24, 5);
  GenerateOptions g;
  g.progress = false;
  DatasetOutcome out = ensure_dataset(dir, s, g);
  CHECK(out.action == "generated");
  CHECK(out.content == ContentKind::kJpeg);
  const std::vector<uint64_t> sizes = draw_file_sizes(s);
  JpegDecoder dec;
  for (size_t i = 0; i < out.index.size(); ++i) {
    const std::vector<unsigned char> bytes = slurp(out.index.display_path(i));
    INFO(out.index.display_path(i));
    CHECK(bytes.size() == sizes[i]);
    CHECK(dec.decode(bytes.data(), bytes.size()).ok);
  }
  CHECK(std::string(out.index.path(0)).ends_with(".JPEG"));
  const nlohmann::json m = read_manifest(dir)->spec;
  CHECK(m.value("content", "") == "jpeg");
  out.lock.reset();

  // Not asked for: the dataset there keeps its JPEG content (and a prefix of it too).
  DatasetSpec reuse = s;
  reuse.content = ContentKind::kSynthetic;
  reuse.content_from_manifest = true;
  DatasetOutcome again = ensure_dataset(dir, reuse, g);
  CHECK(again.action == "reused");
  CHECK(again.content == ContentKind::kJpeg);
  again.lock.reset();
  reuse.files = 10;
  DatasetOutcome part = ensure_dataset(dir, reuse, g);
  CHECK(part.content == ContentKind::kJpeg);
  CHECK(part.index.size() == 10);
  part.lock.reset();

  // Asked for synthetic content: another shape, refused without --regenerate.
  DatasetSpec other = s;
  other.content = ContentKind::kSynthetic;
  CHECK_THROWS_AS(ensure_dataset(dir, other, g), UsageError);
}

TEST_CASE("run_loader --decode jpeg: every sample decoded on the workers, its CPU measured; non-JPEG files are errors",
          "[jpeg][loader]") {
  TempDir d("jpegrun");
  GenerateOptions g;
  g.progress = false;
  DatasetOutcome jpeg = ensure_dataset(d.path + "/jpeg", imagenet_like(32, 9), g);
  LoaderConfig c;
  c.num_workers = 2;
  c.batch_size = 8;
  c.engine = EngineKind::kPsync;
  c.direct = false;
  c.decode_jpeg = true;
  LoaderResult r = run_loader(jpeg.index, c);
  CHECK(r.samples == 32);
  CHECK(r.errors == 0);
  uint64_t decoded = 0, pixels = 0;
  int64_t cpu = 0, work = 0;
  for (const auto& w : r.workers) {
    decoded += w.decoded;
    pixels += w.decoded_pixels;
    cpu += w.decode_cpu_ns;
    work += w.cpu_work_ns;
    CHECK(w.decode_errors == 0);
  }
  CHECK(decoded == 32);
  CHECK(pixels > 32 * 1000);
  CHECK(cpu > 0);
  CHECK(work >= cpu);  // the decode is the workers' CPU work

  DatasetSpec syn = imagenet_like(16, 9);
  syn.content = ContentKind::kSynthetic;
  DatasetOutcome bin = ensure_dataset(d.path + "/bin", syn, g);
  const std::optional<NotJpeg> bad = find_non_jpeg(bin.index);
  REQUIRE(bad);
  CHECK(bad->why.find("not FF D8 FF") != std::string::npos);
  CHECK_FALSE(find_non_jpeg(jpeg.index));
  r = run_loader(bin.index, c);
  CHECK(r.samples == 0);
  CHECK(r.errors == 16);
  REQUIRE_FALSE(r.error_samples.empty());
  CHECK(r.error_samples.front().op == "decode (libjpeg-turbo)");
}
