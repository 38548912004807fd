// What the emulated checkpoint state holds (`ioprobe checkpoint --data`):
//   tensors  bf16/fp32 training state (checkpoint/tensor_data.hpp; the default, the realistic case)
//   text     text-like bytes: words of a fixed pseudo-vocabulary drawn with a skewed (Zipf-like)
//            frequency, with spaces, punctuation and line breaks; compressible like prose (measured
//            here: 64 MiB at zstd:3 gave 2.41x), for compressible data other than tensors
//   random   uniformly random bytes (xoshiro256**): incompressible, like /dev/urandom (ratio <= 1)
// Deterministic: the same seed gives the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ioprobe::checkpoint {

enum class StateContent { tensors, text, random };

/// "tensors", "text" or "random".
const char* state_content_name(StateContent c);

/// Fills `len` bytes of `dst` with `c` content (text or random; tensors are the state's own).
void fill_state_content(StateContent c, uint64_t seed, uint8_t* dst, size_t len);

}  // namespace ioprobe::checkpoint
