// Owners of the C libraries' state objects the checkpoint code uses: a zstd decompression
// context (libzstd) and an XXH3 streaming state (libxxhash). Each frees its object
// when it goes out of scope, on every path out of a function, errors and exceptions included.
#pragma once

#include <zstd.h>

#include <memory>
#include <new>

#include "core/xxh3.hpp"

namespace ioprobe::checkpoint {

struct ZstdDCtxFree {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
struct Xxh3StateFree {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};

using ZstdDCtx = std::unique_ptr<ZSTD_DCtx, ZstdDCtxFree>;
using Xxh3State = std::unique_ptr<XXH3_state_t, Xxh3StateFree>;

/// A new zstd decompression context. Throws std::bad_alloc when zstd cannot allocate one.
inline ZstdDCtx make_zstd_dctx() {
  ZstdDCtx c(ZSTD_createDCtx());
  if (!c) throw std::bad_alloc();
  return c;
}

/// A new XXH3 streaming state, reset for XXH3-64 with seed 0. Throws std::bad_alloc when
/// libxxhash cannot allocate one.
inline Xxh3State make_xxh3_state() {
  Xxh3State s(XXH3_createState());
  if (!s) throw std::bad_alloc();
  XXH3_64bits_reset(s.get());
  return s;
}

}  // namespace ioprobe::checkpoint
