#include "engine/engine.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/io_memory.hpp"

namespace ioprobe {

Engine::~Engine() { free_slots(); }

void Engine::allocate_slots(unsigned depth, uint32_t buffer_bytes, const char* path_for_errors) {
  free_slots();
  if (depth == 0) depth = 1;
  stride_ = (static_cast<size_t>(buffer_bytes) + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
  size_t total = stride_ * depth;
  // One region for all slots on transparent huge pages: fewer TLB misses in the kernel's copy,
  // io_uring pins (registers) it as a few large pages, and O_DIRECT requests stay whole.
  mapped_bytes_ = (total + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  try {
    mem_ = alloc_io_memory(mapped_bytes_);
    buffers_ = mem_.get();
  } catch (const std::bad_alloc&) {
    throw IoError(ENOMEM, "allocate I/O buffers for", path_for_errors,
                  fmt::format("{} slots of {} B; lower --iodepth or --bs", depth, buffer_bytes));
  }
  // Fill with a non-repeating pattern so writes are not trivially compressible or all zeros.
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  auto* words = static_cast<uint64_t*>(buffers_);
  for (size_t i = 0; i < mapped_bytes_ / sizeof(uint64_t); ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    words[i] = x;
  }
  slots_.assign(depth, IoSlot{});
  for (unsigned i = 0; i < depth; ++i) slots_[i].buf = static_cast<char*>(buffers_) + stride_ * i;
  in_flight_ = 0;
}

void Engine::free_slots() {
  slots_.clear();
  mem_.reset();
  buffers_ = nullptr;
  mapped_bytes_ = 0;
  in_flight_ = 0;
}

int Engine::prep(unsigned i, IoDir dir, uint64_t offset, uint32_t len) {
  IoSlot& s = slots_[i];
  if (s.in_flight) return -EBUSY;
  if (len > stride_ || len == 0) return -EINVAL;
  if (options_.direct && ((offset | len) & (kDirectAlign - 1)) != 0) return -EINVAL;
  s.dir = dir;
  s.offset = offset;
  s.len = len;
  s.res = 0;
  return 0;
}

int Engine::commit_and_reap(IoCompletion* out, unsigned max, unsigned min_complete) {
  int r = commit();
  if (r < 0) return r;
  return reap(out, max, min_complete);
}

std::string Engine::misalignment(uint64_t offset, uint32_t len) const {
  if (len == 0) return "length is 0 B";
  if (len > stride_) return fmt::format("length {} B exceeds the slot buffer of {} B", len, stride_);
  if (!options_.direct) return "";
  if (offset % kDirectAlign)
    return fmt::format("O_DIRECT needs offsets in multiples of {} B; offset {} B is not", kDirectAlign, offset);
  if (len % kDirectAlign)
    return fmt::format("O_DIRECT needs lengths in multiples of {} B; length {} B is not", kDirectAlign, len);
  return "";
}

std::unique_ptr<Engine> make_engine(EngineKind kind) {
  return kind == EngineKind::kIoUring ? make_uring_engine() : make_pread_engine();
}

}  // namespace ioprobe
