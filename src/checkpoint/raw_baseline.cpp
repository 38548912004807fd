#include "checkpoint/raw_baseline.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/free_space.hpp"
#include "core/interrupt.hpp"
#include "core/rng.hpp"
#include "core/threads.hpp"
#include "engine/engine_choice.hpp"

namespace ioprobe::checkpoint {

RawWriteResult measure_raw_write(const std::string& dir, const std::vector<uint64_t>& bytes_per_rank,
                                 const UringWriterOptions& io) {
  RawWriteResult res;
  const size_t n = bytes_per_rank.size();
  res.rank_ns.assign(n, 0);
  std::vector<std::string> paths(n);
  std::vector<int> errs(n, 0);
  std::vector<std::string> ops(n), details(n);
  std::vector<char> direct(n, 0);
  // The bytes written: random (incompressible, not zeros), like fio's default buffers, so that a
  // target that compresses, deduplicates or skips zero blocks (ZFS with compression, a VM disk
  // with detect-zeroes, a deduplicating array) writes every byte. Generated before the clock,
  // `depth` requests' worth, written from where they lie (zero-copy, as the save's tensors).
  const size_t src_bytes = io.io_size * std::max(1u, io.depth);
  IoMemory src = alloc_io_memory(src_bytes, io.huge_pages);
  Xoshiro256 rng(0x7261772d77726974ULL);
  for (size_t i = 0; i + 8 <= src_bytes; i += 8) {
    uint64_t v = rng.next();
    std::memcpy(src.get() + i, &v, 8);
  }
  std::vector<char> created(n, 0);
  // One thread per rank; an exception (std::bad_alloc, a thread that cannot start) reaches the
  // caller once every rank ended and the files this run created are removed.
  auto remove_created = [&] {
    for (size_t r = 0; r < n; ++r)
      if (created[r]) ::unlink(paths[r].c_str());  // only files this run created
  };
  try {
    run_threads(n, [&](size_t r) {
      int64_t t0 = now_ns();
      try {
        // A name of our own: the writer creates with O_EXCL, so a file already there (not ours)
        // is never opened, written or removed; the next name is tried instead.
        std::unique_ptr<UringFileWriter> wp;
        for (int attempt = 0; !wp; ++attempt) {
          paths[r] = attempt == 0 ? fmt::format("{}/.ioprobe-raw.{}.{}", dir, r, getpid())
                                  : fmt::format("{}/.ioprobe-raw.{}.{}.{}", dir, r, getpid(), attempt);
          try {
            wp = std::make_unique<UringFileWriter>(paths[r], io);
          } catch (const IoError& e) {
            if (e.err() != EEXIST || attempt >= 99) throw;
          }
        }
        created[r] = 1;
        UringFileWriter& w = *wp;
        direct[r] = w.direct();
        uint64_t left = bytes_per_rank[r];
        int rc = 0;
        for (size_t i = 0; left > 0 && rc == 0 && !interrupted(); ++i) {
          size_t k = static_cast<size_t>(std::min<uint64_t>(io.io_size, left));
          rc = w.append_stable(src.get() + (i % std::max(1u, io.depth)) * io.io_size, k);
          left -= k;
        }
        if (rc == 0) rc = w.finish();
        if (rc == 0) rc = w.fsync();
        if (rc != 0) {
          errs[r] = -rc;
          ops[r] = w.last_error_op();
        }
      } catch (const IoError& e) {
        errs[r] = e.err();
        ops[r] = e.op();  // "create", or "io_uring_queue_init" (the file was removed again)
      }
      res.rank_ns[r] = now_ns() - t0;
    });
  } catch (...) {
    remove_created();
    throw;
  }
  remove_created();
  for (size_t r = 0; r < n; ++r)
    if (errs[r])
      throw IoError(errs[r], ops[r] + " (raw write baseline)", paths[r],
                    ops[r] == "io_uring_queue_init"
                        ? "io_uring could not be set up: " + io_uring_setup_hint(errs[r]) + "; see ioprobe probe"
                    : errs[r] == ENOSPC || errs[r] == EDQUOT
                        ? "the baseline writes as many bytes as the checkpoint; free space or use --raw-baseline off"
                        : "or use --raw-baseline off");
  res.interrupted = interrupted();
  for (size_t r = 0; r < n; ++r) {
    res.bytes += bytes_per_rank[r];
    res.max_ns = std::max(res.max_ns, res.rank_ns[r]);
    res.direct = direct[r];
  }
  return res;
}

void settle(const RawWriteResult& raw) {
  ::sync();
  const double s = std::max(1.0, raw.max_ns / 1e9);
  sleep_until_ns(now_ns() + static_cast<int64_t>(s * 1e9));
}

uint64_t free_bytes_now(const std::string& dir) {
  const std::optional<FreeSpace> fs = free_space(dir);
  if (!fs) return 0;
  return fs->reported ? fs->bytes : UINT64_MAX;
}

}  // namespace ioprobe::checkpoint
