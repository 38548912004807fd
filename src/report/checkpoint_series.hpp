// The "series" part of a checkpoint result document (`ioprobe checkpoint --repeat N` or
// `--duration T`: repeated saves into one directory) and its renderings: one short progress line
// per save and a summary (count, min / median / max MB/s).
//
// JSON keys (inside "checkpoint"):
//   series { saves_completed, repeat_requested (null: no count limit), duration_limit_s (null),
//            elapsed_s, stopped_by, durable, saves [{index, logical_bytes, bytes_on_disk,
//            time_to_durable_s, write_bytes_per_s, user_cpu_s, sys_cpu_s, restore_bytes_per_s}],
//            write_bytes_per_s {min, median, max} (null when no save completed),
//            restore_bytes_per_s {min, median, max} (null without --restore) }
// Rates are B/s (logical bytes / time to durable; restore: logical bytes / restore wall time);
// text prints them as MB/s (10^6 B/s).
#pragma once

#include <string>

#include "checkpoint/save_series.hpp"
#include "report/checkpoint_document.hpp"

namespace ioprobe {

/// Builds the "series" section. `repeat` 0 and `duration_s` 0 mean "no such limit".
CheckpointSeriesSection checkpoint_series_section(const checkpoint::SeriesResult& s, uint64_t repeat, double duration_s,
                                                  bool durable);

/// One progress line for a completed save, e.g.
/// "save 3: 268.44 MB in 0.123 s = 2182.4 MB/s (to durable); restore 2500.1 MB/s".
std::string series_save_line(const checkpoint::SeriesSave& s, uint64_t repeat, bool durable);

/// The summary block of a document's series section ("" when absent).
std::string render_series_text(const CheckpointDocument& doc);

}  // namespace ioprobe
