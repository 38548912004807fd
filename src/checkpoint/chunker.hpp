// Cutting a rank's logical stream into chunks (one zstd frame and one index entry each) and
// chunks into pieces that never cross a region (tensor kind) boundary. The pieces are the unit
// of byte grouping, so the writer and the restorer must cut them identically: they both call
// for_each_piece with the same arguments (recorded in the shard trailer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "checkpoint/state_spec.hpp"

namespace ioprobe::checkpoint {

/// Byte range [offset, offset+len) of a rank's logical stream.
struct Chunk {
  uint64_t offset = 0;
  uint64_t len = 0;
};

/// Chunks of `chunk_size` bytes (any size >= 1; the last one shorter) covering `bytes`.
std::vector<Chunk> make_chunks(uint64_t bytes, uint64_t chunk_size);

/// Default piece size: 4 MiB.
constexpr size_t kPieceBytes = 4u << 20;

/// Calls fn(offset, len, elem_bytes) for consecutive pieces of [offset, offset+len), each at
/// most `max_piece` bytes and within one region of `rank`.
void for_each_piece(const RankState& rank, uint64_t offset, uint64_t len, size_t max_piece,
                    const std::function<void(uint64_t, size_t, uint32_t)>& fn);

}  // namespace ioprobe::checkpoint
