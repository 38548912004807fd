#include "checkpoint/save_series.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "core/clock.hpp"
#include "core/interrupt.hpp"

namespace ioprobe::checkpoint {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

const char* to_string(SeriesStop s) {
  switch (s) {
    case SeriesStop::kRepeat:
      return "repeat";
    case SeriesStop::kDuration:
      return "duration";
    case SeriesStop::kInterrupted:
      return "interrupted";
    case SeriesStop::kSaveFailed:
      return "save failed";
    case SeriesStop::kRestoreFailed:
      return "restore failed";
    case SeriesStop::kNone:
      break;
  }
  return "";
}

std::optional<SeriesStop> series_stop_from_string(std::string_view text) {
  for (const SeriesStop s : {SeriesStop::kNone, SeriesStop::kRepeat, SeriesStop::kDuration, SeriesStop::kInterrupted,
                             SeriesStop::kSaveFailed, SeriesStop::kRestoreFailed})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

SeriesResult run_save_series(std::vector<ResidentState>& states, const std::string& dir, const SaveOptions& opts,
                             bool async, TrainingEmulator* emulator, const SeriesLimits& limits,
                             const std::function<void(const SeriesSave&)>& on_save) {
  SeriesResult out;
  const int64_t t0 = now_ns();
  // Files this series published and has not removed yet (exact paths from the saver).
  std::vector<std::string> published;
  auto remove_published = [&] {
    for (const auto& p : published) ::unlink(p.c_str());
    published.clear();
  };
  try {
    for (uint64_t i = 1;; ++i) {
      if (limits.repeat && i > limits.repeat) {
        out.stopped_by = SeriesStop::kRepeat;
        break;
      }
      if (i > 1 && limits.duration_s > 0 && (now_ns() - t0) / 1e9 >= limits.duration_s) {
        out.stopped_by = SeriesStop::kDuration;
        break;
      }
      if (interrupted()) {
        out.stopped_by = SeriesStop::kInterrupted;
        break;
      }
      remove_published();  // the previous save's files, before this save writes
      if (limits.mark) limits.mark(0);
      out.last = save_checkpoint(states, dir, opts, async, emulator);
      if (limits.mark) limits.mark(1);
      out.last_file_bytes.clear();
      out.last_restore.reset();
      if (!out.last.ok) {
        out.stopped_by = out.last.interrupted ? SeriesStop::kInterrupted : SeriesStop::kSaveFailed;
        break;
      }
      published = out.last.final_paths;
      SeriesSave s;
      s.index = i;
      for (const auto& r : out.last.ranks) s.logical_bytes += r.logical_bytes;
      for (const auto& p : out.last.final_paths) {
        struct stat st {};
        uint64_t b = ::stat(p.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
        out.last_file_bytes.push_back(b);
        s.bytes_on_disk += b;
      }
      s.time_to_durable_s = out.last.durable_ns / 1e9;
      s.write_bytes_per_s = out.last.durable_ns > 0 ? s.logical_bytes * 1e9 / out.last.durable_ns : 0;
      s.user_cpu_s = out.last.user_cpu_s;
      s.sys_cpu_s = out.last.sys_cpu_s;
      if (limits.restore && !interrupted()) {
        out.last_restore = restore_checkpoint(out.last.final_paths, limits.read_block_bytes, limits.restore_threads,
                                              limits.restore_cold);
        if (limits.mark) limits.mark(2);
        const RestoreResult& r = *out.last_restore;
        if (!r.ok) {
          out.stopped_by = r.interrupted || interrupted() ? SeriesStop::kInterrupted : SeriesStop::kRestoreFailed;
          break;
        }
        // As the report's restore section: logical bytes over the slowest rank's duration.
        uint64_t rb = 0;
        int64_t slowest = 0;
        for (const auto& x : r.ranks) {
          rb += x.logical_bytes;
          slowest = std::max(slowest, x.total_ns);
        }
        if (slowest > 0) s.restore_bytes_per_s = rb * 1e9 / slowest;
      }
      out.saves.push_back(s);
      if (on_save) on_save(s);
    }
  } catch (...) {
    remove_published();  // ours: published by this series
    throw;
  }
  out.elapsed_s = (now_ns() - t0) / 1e9;
  return out;
}

}  // namespace ioprobe::checkpoint
