#include "dataset/jpeg_content.hpp"

// jpeglib.h needs size_t and FILE declared first.
#include <csetjmp>
#include <cstdio>
#include <cstdlib>

#include <jpeglib.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

namespace {

constexpr int kQuality = 96;         // ImageNet's usual quality (header comment's source)
constexpr uint32_t kLongSide = 500;  // px, the source's most common size
constexpr uint32_t kMaxSide = 16384;
constexpr int kMaxEncodes = 12;

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double unit(uint64_t& x) { return static_cast<double>(splitmix(x) >> 11) * (1.0 / 9007199254740992.0); }

// The image for (w, h, seed) at noise amplitude `amp_q8` / 256 grey levels, RGB interleaved.
void draw_image(std::vector<unsigned char>& rgb, uint32_t w, uint32_t h, uint32_t amp_q8, uint64_t seed) {
  rgb.resize(static_cast<size_t>(w) * h * 3);
  // The smooth field: a grid of random colours every 64 px, bilinearly interpolated.
  constexpr uint32_t cell = 64;  // fixed: the content is stationary, so a tile predicts a whole image
  const uint32_t gw = w / cell + 2, gh = h / cell + 2;
  std::vector<std::array<int, 3>> grid(static_cast<size_t>(gw) * gh);
  uint64_t g = seed ^ 0xC0FFEEULL;
  for (auto& c : grid)
    for (int& v : c) v = 32 + static_cast<int>(splitmix(g) % 192);
  const int64_t amp = amp_q8;
  for (uint32_t y = 0; y < h; ++y) {
    const uint32_t gy = y / cell, fy = (y % cell) * 256 / cell;
    unsigned char* row = rgb.data() + static_cast<size_t>(y) * w * 3;
    for (uint32_t x = 0; x < w; ++x) {
      const uint32_t gx = x / cell, fx = (x % cell) * 256 / cell;
      const auto& c00 = grid[gy * gw + gx];
      const auto& c01 = grid[gy * gw + gx + 1];
      const auto& c10 = grid[(gy + 1) * gw + gx];
      const auto& c11 = grid[(gy + 1) * gw + gx + 1];
      uint64_t n = seed + (static_cast<uint64_t>(y) << 32) + x;
      const uint64_t noise = splitmix(n);
      for (int k = 0; k < 3; ++k) {
        const int top = c00[k] * static_cast<int>(256 - fx) + c01[k] * static_cast<int>(fx);
        const int bot = c10[k] * static_cast<int>(256 - fx) + c11[k] * static_cast<int>(fx);
        const int64_t base = (static_cast<int64_t>(top) * (256 - fy) + static_cast<int64_t>(bot) * fy) >> 16;
        const int64_t b = static_cast<int64_t>((noise >> (8 * k)) & 0xFF) - 128;  // -128..127
        const int64_t v = base + ((b * amp) >> 15);                               // up to +-amp/256 grey levels
        row[static_cast<size_t>(x) * 3 + k] = static_cast<unsigned char>(std::clamp<int64_t>(v, 0, 255));
      }
    }
  }
}

struct ErrorMgr {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
  unsigned char* mem;  // jpeg_mem_dest's buffer (malloc'ed by libjpeg)
  unsigned long mem_size;
};

[[noreturn]] void on_error(j_common_ptr c) {
  auto* e = reinterpret_cast<ErrorMgr*>(c->err);
  (*c->err->format_message)(c, e->msg);
  std::longjmp(e->jump, 1);
}

void silent(j_common_ptr) {}

// Encodes `rgb` (w x h) as a baseline 4:4:4 JPEG at kQuality into `out`. Throws Error.
void encode(const std::vector<unsigned char>& rgb, uint32_t w, uint32_t h, std::vector<unsigned char>& out) {
  jpeg_compress_struct cinfo;
  ErrorMgr jerr{};
  cinfo.err = jpeg_std_error(&jerr.pub);
  jerr.pub.error_exit = on_error;
  jerr.pub.output_message = silent;
  if (setjmp(jerr.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(jerr.mem);
    throw Error(fmt::format("libjpeg-turbo could not encode a {} x {} image: {}", w, h, jerr.msg), kExitFailure);
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &jerr.mem, &jerr.mem_size);
  cinfo.image_width = w;
  cinfo.image_height = h;
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, kQuality, TRUE);
  for (int c = 0; c < 3; ++c) cinfo.comp_info[c].h_samp_factor = cinfo.comp_info[c].v_samp_factor = 1;  // 4:4:4
  cinfo.dct_method = JDCT_ISLOW;
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(rgb.data()) + static_cast<size_t>(cinfo.next_scanline) * w * 3;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  out.assign(jerr.mem, jerr.mem + jerr.mem_size);
  jpeg_destroy_compress(&cinfo);
  std::free(jerr.mem);
}

// Bytes per pixel of the entropy-coded data against the noise amplitude, measured once per
// process on a 128 x 128 tile; `header` is the size of an 8 x 8 flat image (headers and tables).
struct SizeModel {
  static constexpr std::array<uint32_t, 15> kAmpQ8 = {0,    128,  256,  512,  768,   1024,  1536, 2048,
                                                      3072, 4096, 6144, 8192, 16384, 24576, 32767};
  std::array<double, kAmpQ8.size()> bpp{};
  double header = 0;

  SizeModel() {
    std::vector<unsigned char> rgb, out;
    draw_image(rgb, 8, 8, 0, 1);
    encode(rgb, 8, 8, out);
    header = static_cast<double>(out.size());
    constexpr uint32_t kTile = 128;
    double prev = 0;
    for (size_t i = 0; i < kAmpQ8.size(); ++i) {
      draw_image(rgb, kTile, kTile, kAmpQ8[i], 12345);
      encode(rgb, kTile, kTile, out);
      prev = std::max(prev, std::max(0.0, (static_cast<double>(out.size()) - header)) / (kTile * kTile));
      bpp[i] = prev + 1e-9 * static_cast<double>(i);  // strictly increasing, for the inverse
    }
  }
  // Predicted bytes per pixel at amplitude a (q8), piecewise linear.
  double at(double a) const {
    if (a <= kAmpQ8.front()) return bpp.front();
    for (size_t i = 1; i < kAmpQ8.size(); ++i)
      if (a <= kAmpQ8[i]) {
        const double t = (a - kAmpQ8[i - 1]) / (kAmpQ8[i] - kAmpQ8[i - 1]);
        return bpp[i - 1] + t * (bpp[i] - bpp[i - 1]);
      }
    return bpp.back();
  }
  // The amplitude (q8) whose predicted bytes per pixel is `b` (clamped to the table).
  double amp_for(double b) const {
    if (b <= bpp.front()) return 0;
    for (size_t i = 1; i < kAmpQ8.size(); ++i)
      if (b <= bpp[i]) {
        const double t = (b - bpp[i - 1]) / (bpp[i] - bpp[i - 1]);
        return kAmpQ8[i - 1] + t * (kAmpQ8[i] - kAmpQ8[i - 1]);
      }
    return kAmpQ8.back();
  }
};

const SizeModel& size_model() {
  static const SizeModel m;  // thread-safe initialisation
  return m;
}

// Inserts `pad` bytes of COM segments after SOI and the JFIF APP0 segment: out = exactly
// jpeg.size() + pad bytes. `pad` is 0 or at least 4.
std::vector<unsigned char> pad_with_comments(const std::vector<unsigned char>& jpeg, uint64_t pad) {
  size_t at = 2;  // after SOI
  if (jpeg.size() > 6 && jpeg[2] == 0xFF && jpeg[3] == 0xE0) at = 4 + (static_cast<size_t>(jpeg[4]) << 8 | jpeg[5]);
  std::vector<unsigned char> out;
  out.reserve(jpeg.size() + pad);
  out.insert(out.end(), jpeg.begin(), jpeg.begin() + static_cast<std::ptrdiff_t>(at));
  static constexpr char kText[] = "ioprobe --content jpeg: padding to the drawn file size. ";
  while (pad > 0) {
    uint64_t n = std::min<uint64_t>(pad, 65537);  // a segment: FF FE, 2-byte length (<= 65535), payload
    if (pad - n > 0 && pad - n < 4) n -= 4;       // leave at least one whole segment's 4 bytes
    const uint64_t len = n - 2;
    out.push_back(0xFF);
    out.push_back(0xFE);
    out.push_back(static_cast<unsigned char>(len >> 8));
    out.push_back(static_cast<unsigned char>(len & 0xFF));
    for (uint64_t i = 0; i < n - 4; ++i) out.push_back(static_cast<unsigned char>(kText[i % (sizeof(kText) - 1)]));
    pad -= n;
  }
  out.insert(out.end(), jpeg.begin() + static_cast<std::ptrdiff_t>(at), jpeg.end());
  return out;
}

}  // namespace

JpegDims draw_jpeg_dims(uint64_t seed) {
  uint64_t x = seed ^ 0xD1B54A32D192ED03ULL;
  const double r = 0.6 + 0.4 * unit(x);
  const bool landscape = unit(x) < 0.75;
  const auto s = static_cast<uint32_t>(std::lround(kLongSide * r));
  return landscape ? JpegDims{kLongSide, s} : JpegDims{s, kLongSide};
}

bool has_jpeg_signature(const unsigned char* d, size_t len) {
  return len >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF;
}

std::optional<NotJpeg> find_non_jpeg(const FileIndex& index, size_t max_files) {
  const size_t n = index.size();
  if (n == 0 || max_files == 0) return std::nullopt;
  const size_t step = n <= max_files ? 1 : n / max_files;
  for (size_t i = 0; i < n; i += step) {
    const std::string path = index.display_path(i);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NotJpeg{path, "open: " + errno_text(errno)};
    unsigned char head[3] = {0, 0, 0};
    const ssize_t got = pread(fd, head, sizeof(head), 0);
    const int err = errno;
    close(fd);
    if (got < 0) return NotJpeg{path, "read: " + errno_text(err)};
    if (!has_jpeg_signature(head, static_cast<size_t>(got)))
      return NotJpeg{path, got == 0 ? std::string("it is empty")
                                    : fmt::format("it starts with {:02X} {:02X} {:02X}, not FF D8 FF", head[0],
                                                  got > 1 ? head[1] : 0, got > 2 ? head[2] : 0)};
  }
  return std::nullopt;
}

JpegFile make_jpeg_file(uint64_t target, uint64_t seed) {
  if (target < kJpegMinBytes || target > kJpegMaxBytes)
    throw std::invalid_argument(
        fmt::format("JPEG file size {} B outside {} .. {} B", target, kJpegMinBytes, kJpegMaxBytes));
  const SizeModel& m = size_model();
  JpegFile f;
  JpegDims d = draw_jpeg_dims(seed);
  const double t = static_cast<double>(target);
  const double budget = std::max(1.0, 0.97 * (t - m.header));  // entropy-coded bytes to aim at
  // Dimensions the content can fill: bytes per pixel between 1.5x the flat image's and 0.8x the
  // noisiest's; otherwise scale the image, keeping its aspect ratio.
  const double lo = std::max(m.bpp.front() * 1.5, 1e-3), hi = m.bpp.back() * 0.8;
  double px = static_cast<double>(d.width) * d.height;
  const double want = budget / px;
  if (want < lo || want > hi) {
    const double s = std::sqrt(want / (want < lo ? lo : hi));
    d.width = std::clamp<uint32_t>(static_cast<uint32_t>(std::lround(d.width * s)), 8, kMaxSide);
    d.height = std::clamp<uint32_t>(static_cast<uint32_t>(std::lround(d.height * s)), 8, kMaxSide);
    px = static_cast<double>(d.width) * d.height;
  }
  double amp = m.amp_for(budget / px);
  double factor = 1;  // measured / predicted bytes per pixel, learned from each encode
  std::vector<unsigned char> rgb, enc, best;
  bool raised = false;
  for (int i = 0; i < kMaxEncodes; ++i) {
    const auto aq8 = static_cast<uint32_t>(std::lround(amp));
    draw_image(rgb, d.width, d.height, aq8, seed);
    encode(rgb, d.width, d.height, enc);
    ++f.encodes;
    const uint64_t size = enc.size();
    const bool fits = size == target || (size < target && target - size >= 4);
    if (fits && size > best.size()) {
      best = enc;
      f.dims = d;
    }
    const double data = std::max(1.0, static_cast<double>(size) - m.header);
    factor = data / std::max(1e-9, px * m.at(aq8));
    // Close enough (under 5% padding), or already raised once: done. Too small: one try higher.
    if (fits && (t - static_cast<double>(size) <= 0.05 * t || raised || aq8 >= SizeModel::kAmpQ8.back())) break;
    if (fits) raised = true;
    if (!fits && aq8 == 0) {  // even the flat image is too large: a smaller image
      d.width = std::max<uint32_t>(8, d.width * 7 / 8);
      d.height = std::max<uint32_t>(8, d.height * 7 / 8);
      px = static_cast<double>(d.width) * d.height;
      continue;
    }
    const double next = m.amp_for(budget / px / factor);
    // Lower after an overshoot, higher after an undershoot; always a different amplitude.
    amp = fits ? std::max(next, amp + 1) : std::min(next, amp - 1);
    amp = std::max(0.0, amp);
  }
  if (best.empty())
    throw Error(fmt::format("could not encode a JPEG image of at most {} B in {} tries (libjpeg-turbo encodes larger "
                            "than this build of ioprobe expects)",
                            target, kMaxEncodes),
                kExitFailure);
  f.image_bytes = best.size();
  f.bytes = best.size() == target ? std::move(best) : pad_with_comments(best, target - best.size());
  return f;
}

}  // namespace ioprobe
