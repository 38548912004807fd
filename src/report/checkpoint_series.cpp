#include "report/checkpoint_series.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.hpp"

namespace ioprobe {

using namespace checkpoint;

namespace {

std::optional<CheckpointSpread> spread(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  return CheckpointSpread{*std::min_element(v.begin(), v.end()), median_of(v), *std::max_element(v.begin(), v.end())};
}

std::string mbs(double v) { return fmt::format("{:.1f}", v / kMB); }

}  // namespace

CheckpointSeriesSection checkpoint_series_section(const SeriesResult& s, uint64_t repeat, double duration_s,
                                                  bool durable) {
  CheckpointSeriesSection o;
  std::vector<double> w, r;
  for (const auto& x : s.saves) {
    o.saves.push_back({x.index, x.logical_bytes, x.bytes_on_disk, x.time_to_durable_s, x.write_bytes_per_s,
                       x.user_cpu_s, x.sys_cpu_s, x.restore_bytes_per_s});
    w.push_back(x.write_bytes_per_s);
    if (x.restore_bytes_per_s) r.push_back(*x.restore_bytes_per_s);
  }
  o.saves_completed = s.saves.size();
  if (repeat) o.repeat_requested = repeat;
  if (duration_s > 0) o.duration_limit_s = duration_s;
  o.elapsed_s = s.elapsed_s;
  o.stopped_by = s.stopped_by;
  o.durable = durable;
  o.files = "each save published atomically, then removed by ioprobe before the next";
  o.write_bytes_per_s = spread(w);
  o.restore_bytes_per_s = spread(r);
  return o;
}

std::string series_save_line(const SeriesSave& s, uint64_t repeat, bool durable) {
  std::string o = fmt::format("save {}{}: {:.2f} MB in {:.3f} s = {:.1f} MB/s ({})", s.index,
                              repeat ? fmt::format("/{}", repeat) : std::string(), s.logical_bytes / kMB,
                              s.time_to_durable_s, s.write_bytes_per_s / kMB,
                              durable ? "to durable" : "to published, NOT durable: page cache");
  if (s.restore_bytes_per_s) o += fmt::format("; restore {:.1f} MB/s", *s.restore_bytes_per_s / kMB);
  return o;
}

std::string render_series_text(const CheckpointDocument& doc) {
  if (doc.readback || !doc.section.series) return "";
  const CheckpointSeriesSection& s = *doc.section.series;
  const SeriesStop by = s.stopped_by;
  std::string o = fmt::format("\nrepeated saves: {} completed in {:.1f} s (stopped: {}{}{}); each published, then "
                              "removed before the next\n",
                              s.saves_completed, s.elapsed_s,
                              by == SeriesStop::kRepeat     ? "count reached"
                              : by == SeriesStop::kDuration ? "time limit reached"
                              : by == SeriesStop::kNone ? "before the first save began"  // e.g. Ctrl-C while preparing
                                                        : to_string(by),
                              s.repeat_requested ? fmt::format("; --repeat {}", *s.repeat_requested) : "",
                              s.duration_limit_s ? fmt::format("; --duration {:.0f} s", *s.duration_limit_s) : "");
  if (!s.write_bytes_per_s) {
    o += "  no save completed: no rate is claimed\n";
  } else {
    const CheckpointSpread& w = *s.write_bytes_per_s;
    o += fmt::format("  save MB/s (10^6 B/s, logical bytes / time to {}): min {}  median {}  max {}{}\n",
                     s.durable ? "durable" : "published", mbs(w.min), mbs(w.median), mbs(w.max),
                     s.durable ? "" : "  -- NOT DURABLE (page cache)");
  }
  if (const auto& r = s.restore_bytes_per_s)
    o += fmt::format("  restore MB/s (10^6 B/s, {}, verified): min {}  median {}  max {}\n",
                     // --restore-cache warm reads what the page cache holds: never call it cold
                     doc.section.restore && doc.section.restore->cache.rfind("warm", 0) == 0 ? "warm" : "cold",
                     mbs(r->min), mbs(r->median), mbs(r->max));
  o += "  (the save section above shows the last save attempted)\n";
  return o;
}

}  // namespace ioprobe
