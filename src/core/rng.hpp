// xoshiro256** (Blackman & Vigna, https://prng.di.unimi.it/xoshiro256starstar.c), seeded with
// splitmix64: the one fast, deterministic generator for synthetic data (checkpoint tensors,
// text-like and random state, the sampler's permutations, raw's layout bytes). Output is the same on
// every platform and standard library. Two older generators stay on purpose because their output
// is on users' disks: a synthetic dataset's file sizes (dataset/spec.cpp, mt19937_64 + Box-Muller)
// and file bytes (dataset/generator.cpp, splitmix64) are a function of the options and --seed, and
// ensure_dataset reuses a dataset on disk by those alone: a new generator would make a reused
// dataset differ from a fresh one of the same options.
#pragma once

#include <cstdint>

namespace ioprobe {

struct Xoshiro256 {
  uint64_t s[4];
  explicit Xoshiro256(uint64_t seed) {
    for (auto& x : s) {  // splitmix64 seeding
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      x = z ^ (z >> 31);
    }
  }
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  /// The next 64 uniformly distributed bits.
  uint64_t next() {
    const uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
  }
};

}  // namespace ioprobe
