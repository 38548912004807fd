// Typed configuration of `ioprobe raw`, a fio-like raw file / block device benchmark.
// Built once by cli/raw_command.cpp from the command line; read-only afterwards.
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine_kind.hpp"

namespace ioprobe {

/// Access pattern, as fio's rw=.
enum class RawPattern { read, randread, write, randwrite };

const char* pattern_name(RawPattern p);
inline bool pattern_is_write(RawPattern p) { return p == RawPattern::write || p == RawPattern::randwrite; }
inline bool pattern_is_random(RawPattern p) { return p == RawPattern::randread || p == RawPattern::randwrite; }

struct RawConfig {
  std::string filename;  // file or block device path, used verbatim (never split on ':')
  RawPattern rw = RawPattern::read;
  uint32_t bs = 4096;                               // bytes per request
  unsigned iodepth = 1;                             // requests in flight per job (io_uring); psync is 1
  unsigned numjobs = 1;                             // threads, each with its own fd and engine
  uint64_t size = 0;                                // bytes of the file each job covers; 0 = the whole existing file
  bool direct = false;                              // O_DIRECT (bypass the page cache)
  EngineSelection engine = EngineSelection::kAuto;  // auto: chosen per target
  double runtime_s = 0;          // > 0: run this long, wrapping over the region (fio time_based); 0: one pass
  bool fixed_buffers = true;     // register the buffers with io_uring (off when RLIMIT_MEMLOCK is too low)
  bool sqpoll = false;           // ask io_uring for a submission-queue polling thread
  bool allow_overwrite = false;  // permit writes to a file or device ioprobe did not create
  uint64_t seed = 0x10b50be;     // random-offset generator seed (job j uses seed + j)
  bool cold = true;              // buffered reads: evict the region's pages before the run (fio's invalidate=1),
                                 // so that they measure the device; false keeps what is cached (--cache warm)
  bool progress = true;          // progress lines on a terminal while laying out and running (false: --quiet)
};

/// Whether the run evicts the target's pages before it starts: buffered reads with cfg.cold.
inline bool raw_evicts(const RawConfig& c) { return c.cold && !c.direct && !pattern_is_write(c.rw); }

}  // namespace ioprobe
