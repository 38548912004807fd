#include "checkpoint/raw_baseline.hpp"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"

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
  std::vector<std::thread> threads;
  for (size_t r = 0; r < n; ++r) {
    paths[r] = fmt::format("{}/.ioprobe-raw.{}.{}", dir, r, getpid());
    threads.emplace_back([&, r] {
      int64_t t0 = now_ns();
      try {
        UringFileWriter w(paths[r], io);
        direct[r] = w.direct();
        uint64_t left = bytes_per_rank[r];
        int rc = 0;
        while (left > 0 && rc == 0 && !interrupted()) {
          size_t avail = 0;
          uint8_t* p = w.reserve(avail, rc);
          if (!p) break;
          size_t k = static_cast<size_t>(std::min<uint64_t>(avail, left));
          rc = w.commit(k);  // buffer contents were set once by the writer; the disk does not care
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
        ops[r] = "create";
      }
      res.rank_ns[r] = now_ns() - t0;
    });
  }
  for (auto& t : threads) t.join();
  for (size_t r = 0; r < n; ++r) ::unlink(paths[r].c_str());
  for (size_t r = 0; r < n; ++r)
    if (errs[r])
      throw IoError(errs[r], ops[r] + " (raw write baseline)", paths[r],
                    "the baseline writes as many bytes as the checkpoint; free space or use --raw-baseline off");
  res.interrupted = interrupted();
  for (size_t r = 0; r < n; ++r) {
    res.bytes += bytes_per_rank[r];
    res.max_ns = std::max(res.max_ns, res.rank_ns[r]);
    res.direct = direct[r];
  }
  return res;
}

}  // namespace ioprobe::checkpoint
