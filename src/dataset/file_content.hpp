// Writing one generated file: its bytes from the seed alone (pseudo-random, or a real JPEG image
// of the drawn size), so that any process writes the same file for the same number.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataset/spec.hpp"

namespace ioprobe {

/// Writes one file of `size` bytes at `path` (created or truncated); JPEG content: a real JPEG
/// image of that size (dataset/jpeg_content.hpp). `buf` is scratch memory reused between calls.
/// Returns the JPEG padding bytes (0 for synthetic content). Throws IoError naming `path`.
uint64_t write_one(const std::string& path, uint64_t size, uint64_t seed, ContentKind content, std::vector<char>& buf);

/// Writes a shard or token file: records [first, first + count) of `sizes` back to back, each
/// filled from its own seed, in writes of up to 4 MiB so that files of any size need bounded
/// memory. Throws IoError naming `path`.
void write_records(const std::string& path, const std::vector<uint64_t>& sizes, uint64_t first, uint64_t count,
                   uint64_t seed, std::vector<char>& buf);

}  // namespace ioprobe
