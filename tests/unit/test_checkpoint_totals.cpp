#include <catch2/catch.hpp>

#include "checkpoint/rank_totals.hpp"

using namespace ioprobe::checkpoint;

namespace {
RankSaveResult save_rank(uint64_t bytes, int64_t ns, bool direct, int64_t fsync_ns) {
  RankSaveResult r;
  r.logical_bytes = bytes;
  r.stored_bytes = bytes / 2;
  r.written_bytes = bytes / 2;
  r.total_ns = ns;
  r.direct = direct;
  r.fsync_ns = fsync_ns;
  return r;
}
}  // namespace

TEST_CASE("SaveTotals: MLPerf-style duration max, slowest-rank rate min, bytes summed", "[checkpoint][totals]") {
  SaveTotals t;
  t.add_rank(save_rank(1000, 2'000'000'000, true, 5), 500, true);   // 500 B/s
  t.add_rank(save_rank(3000, 1'000'000'000, true, 9), 1500, true);  // 3000 B/s
  t.add_rank(save_rank(0, 4'000'000'000, true, 1), 0, false);       // no state: bounds no rate
  CHECK(t.ranks == 3);
  CHECK(t.logical_bytes == 4000);
  CHECK(t.bytes_on_disk == 2000);
  CHECK(t.duration_max_ns == 4'000'000'000);
  CHECK(t.have_min_rate);
  CHECK(t.min_rank_bytes_per_s == Approx(500));
  CHECK(t.fsync_ns == 9);
  CHECK(t.direct());
  CHECK(t.ratio() == Approx(2.0));
  CHECK(SaveTotals{}.direct() == false);
}

TEST_CASE("SaveTotals/RestoreTotals: merging two hosts' totals equals adding all ranks to one",
          "[checkpoint][totals]") {
  const RankSaveResult a = save_rank(1000, 3'000'000'000, true, 5), b = save_rank(7000, 1'000'000'000, false, 2),
                       c = save_rank(2000, 2'000'000'000, true, 8);
  SaveTotals all, h1, h2;
  all.add_rank(a, 100, true);
  all.add_rank(b, 200, true);
  all.add_rank(c, 300, true);
  h1.add_rank(a, 100, true);
  h2.add_rank(b, 200, true);
  h2.add_rank(c, 300, true);
  h1.merge(h2);
  CHECK(h1.logical_bytes == all.logical_bytes);
  CHECK(h1.bytes_on_disk == all.bytes_on_disk);
  CHECK(h1.duration_max_ns == all.duration_max_ns);
  CHECK(h1.min_rank_bytes_per_s == all.min_rank_bytes_per_s);
  CHECK(h1.direct() == all.direct());
  CHECK_FALSE(h1.direct());
  CHECK(h1.fsync_ns == 8);

  RankRestoreResult x, y;
  x.logical_bytes = 4000;
  x.total_ns = 2'000'000'000;
  x.direct = true;
  y.logical_bytes = 2000;
  y.total_ns = 4'000'000'000;
  y.direct = true;
  y.error = {.path = "y", .detail = "chunk 3 of 4: checksum mismatch"};
  RestoreTotals r1, r2;
  r1.add_rank(x, true);
  r2.add_rank(y, true);
  r1.merge(r2);
  CHECK(r1.logical_bytes == 6000);
  CHECK(r1.duration_max_ns == 4'000'000'000);
  CHECK(r1.bytes_per_s() == Approx(1500));  // total bytes / the slowest rank's duration
  CHECK(r1.min_rank_bytes_per_s == Approx(500));
  CHECK(r1.direct());
  CHECK(r1.first_error.same_failure(y.error));
}
