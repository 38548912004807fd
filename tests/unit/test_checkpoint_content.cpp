#include <zstd.h>

#include <vector>

#include <catch2/catch.hpp>

#include "checkpoint/state_content.hpp"

using namespace ioprobe;

namespace {
double zstd3_ratio(const std::vector<uint8_t>& v) {
  std::vector<uint8_t> out(ZSTD_compressBound(v.size()));
  size_t n = ZSTD_compress(out.data(), out.size(), v.data(), v.size(), 3);
  REQUIRE_FALSE(ZSTD_isError(n));
  return static_cast<double>(v.size()) / n;
}
}  // namespace

TEST_CASE("checkpoint --data text is text-like and compressible, --data random is not, both deterministic",
          "[checkpoint]") {
  const size_t len = 4 << 20;
  std::vector<uint8_t> text(len), text2(len), rnd(len);
  checkpoint::fill_state_content(checkpoint::StateContent::text, 7, text.data(), len);
  checkpoint::fill_state_content(checkpoint::StateContent::text, 7, text2.data(), len);
  checkpoint::fill_state_content(checkpoint::StateContent::random, 7, rnd.data(), len);
  CHECK(text == text2);
  size_t printable = 0, spaces = 0, newlines = 0;
  for (uint8_t c : text) {
    printable += (c >= 32 && c < 127) || c == '\n';
    spaces += c == ' ';
    newlines += c == '\n';
  }
  CHECK(printable == len);      // only printable ASCII and line breaks
  CHECK(spaces > len / 12);     // words of a few letters
  CHECK(newlines > len / 100);  // lines of about 72 characters
  const double rt = zstd3_ratio(text), rr = zstd3_ratio(rnd);
  INFO("zstd -3 ratios: text " << rt << ", random " << rr);
  CHECK(rt > 2.0);
  CHECK(rr <= 1.0);
  std::vector<uint8_t> odd(13);
  checkpoint::fill_state_content(checkpoint::StateContent::random, 1, odd.data(), odd.size());  // a partial last word
  checkpoint::fill_state_content(checkpoint::StateContent::text, 1, odd.data(), odd.size());
}
