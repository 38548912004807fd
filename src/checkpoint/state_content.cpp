#include "checkpoint/state_content.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/rng.hpp"

namespace ioprobe::checkpoint {

namespace {

using Rng = Xoshiro256;

// 4,096 pseudo-words of 1-10 lowercase letters, letters drawn with English-like frequencies.
std::vector<std::string> vocabulary(uint64_t seed) {
  static const char kLetters[] =
      "eeeeeeeeeeeetttttttttaaaaaaaaoooooooiiiiiiinnnnnnnssssssrrrrrrhhhhhhlllldddcccuuummfwwyyggppbbvk";
  Rng rng(seed ^ 0x7465787456);
  std::vector<std::string> v(4096);
  for (auto& w : v) {
    size_t len = 1 + rng.next() % 4 + rng.next() % 4 + rng.next() % 3;  // 1..10, mostly 3-6
    for (size_t i = 0; i < len; ++i) w += kLetters[rng.next() % (sizeof(kLetters) - 1)];
  }
  return v;
}

void fill_text(uint64_t seed, uint8_t* dst, size_t len) {
  const std::vector<std::string> words = vocabulary(seed);
  Rng rng(seed);
  size_t pos = 0, in_sentence = 0, in_line = 0;
  while (pos < len) {
    // Skewed choice: the product of two uniforms favours low indices (frequent words), as in prose.
    const uint64_t r = rng.next();
    const size_t idx = static_cast<size_t>(((r & 0xFFF) * ((r >> 12) & 0xFFF)) >> 12);
    std::string w = words[idx];
    if (in_sentence == 0 && !w.empty()) w[0] = static_cast<char>(w[0] - 'a' + 'A');
    ++in_sentence;
    const uint64_t p = rng.next() % 100;
    if (in_sentence > 6 && p < 12) {
      w += p < 9 ? ". " : p < 11 ? "? " : "! ";
      in_sentence = 0;
    } else {
      w += p < 6 ? ", " : " ";
    }
    in_line += w.size();
    if (in_line > 72) {
      w.back() = '\n';
      in_line = 0;
    }
    const size_t n = std::min(w.size(), len - pos);
    std::memcpy(dst + pos, w.data(), n);  // NOLINT(bugprone-not-null-terminated-result): bytes, not a C string
    pos += n;
  }
}

void fill_random(uint64_t seed, uint8_t* dst, size_t len) {
  Rng rng(seed);
  size_t pos = 0;
  for (; pos + 8 <= len; pos += 8) {
    const uint64_t x = rng.next();
    std::memcpy(dst + pos, &x, 8);
  }
  const uint64_t x = rng.next();
  std::memcpy(dst + pos, &x, len - pos);
}

}  // namespace

const char* state_content_name(StateContent c) {
  switch (c) {
    case StateContent::tensors:
      return "tensors";
    case StateContent::text:
      return "text";
    case StateContent::random:
      return "random";
  }
  return "?";
}

void fill_state_content(StateContent c, uint64_t seed, uint8_t* dst, size_t len) {
  if (c == StateContent::text) fill_text(seed, dst, len);
  else if (c == StateContent::random) fill_random(seed, dst, len);
}

}  // namespace ioprobe::checkpoint
