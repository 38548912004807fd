#include "report/checkpoint_series.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.hpp"

namespace ioprobe {

using nlohmann::json;
using namespace checkpoint;

namespace {

json spread(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  return {{"min", *std::min_element(v.begin(), v.end())},
          {"median", median_of(v)},
          {"max", *std::max_element(v.begin(), v.end())}};
}

std::string mbs(const json& v) { return fmt::format("{:.1f}", v.get<double>() / kMB); }

}  // namespace

json checkpoint_series_json(const SeriesResult& s, uint64_t repeat, double duration_s, bool durable) {
  json saves = json::array();
  std::vector<double> w, r;
  for (const auto& x : s.saves) {
    saves.push_back({{"index", x.index},
                     {"logical_bytes", x.logical_bytes},
                     {"bytes_on_disk", x.bytes_on_disk},
                     {"time_to_durable_s", x.time_to_durable_s},
                     {"write_bytes_per_s", x.write_bytes_per_s},
                     {"user_cpu_s", x.user_cpu_s},
                     {"sys_cpu_s", x.sys_cpu_s},
                     {"restore_bytes_per_s", x.restore_bytes_per_s ? json(*x.restore_bytes_per_s) : json(nullptr)}});
    w.push_back(x.write_bytes_per_s);
    if (x.restore_bytes_per_s) r.push_back(*x.restore_bytes_per_s);
  }
  return {{"saves_completed", s.saves.size()},
          {"repeat_requested", repeat ? json(repeat) : json(nullptr)},
          {"duration_limit_s", duration_s > 0 ? json(duration_s) : json(nullptr)},
          {"elapsed_s", s.elapsed_s},
          {"stopped_by", s.stopped_by},
          {"durable", durable},
          {"files", "each save published atomically, then removed by ioprobe before the next"},
          {"saves", saves},
          {"write_bytes_per_s", spread(w)},
          {"restore_bytes_per_s", spread(r)}};
}

std::string series_save_line(const SeriesSave& s, uint64_t repeat, bool durable) {
  std::string o = fmt::format("save {}{}: {:.2f} MB in {:.3f} s = {:.1f} MB/s ({})", s.index,
                              repeat ? fmt::format("/{}", repeat) : std::string(), s.logical_bytes / kMB,
                              s.time_to_durable_s, s.write_bytes_per_s / kMB,
                              durable ? "to durable" : "to published, NOT durable: page cache");
  if (s.restore_bytes_per_s) o += fmt::format("; restore {:.1f} MB/s", *s.restore_bytes_per_s / kMB);
  return o;
}

std::string render_series_text(const json& doc) {
  const json& c = doc.value("checkpoint", json::object());
  if (!c.contains("series")) return "";
  const json& s = c.at("series");
  const std::string by = s.at("stopped_by").get<std::string>();
  std::string o = fmt::format("\nrepeated saves: {} completed in {:.1f} s (stopped: {}{}{}); each published, then "
                              "removed before the next\n",
                              s.at("saves_completed").get<uint64_t>(), s.at("elapsed_s").get<double>(),
                              by == "repeat"     ? "count reached"
                              : by == "duration" ? "time limit reached"
                              : by.empty()       ? "before the first save began"  // e.g. Ctrl-C while preparing
                                                 : by,
                              s.at("repeat_requested").is_null()
                                  ? ""
                                  : fmt::format("; --repeat {}", s.at("repeat_requested").get<uint64_t>()),
                              s.at("duration_limit_s").is_null()
                                  ? ""
                                  : fmt::format("; --duration {:.0f} s", s.at("duration_limit_s").get<double>()));
  const json& w = s.at("write_bytes_per_s");
  if (w.is_null()) {
    o += "  no save completed: no rate is claimed\n";
  } else {
    const bool durable = s.value("durable", true);
    o += fmt::format("  save MB/s (10^6 B/s, logical bytes / time to {}): min {}  median {}  max {}{}\n",
                     durable ? "durable" : "published", mbs(w.at("min")), mbs(w.at("median")), mbs(w.at("max")),
                     durable ? "" : "  -- NOT DURABLE (page cache)");
  }
  const json& r = s.at("restore_bytes_per_s");
  if (!r.is_null())
    o += fmt::format("  restore MB/s (10^6 B/s, {}, verified): min {}  median {}  max {}\n",
                     // --restore-cache warm reads what the page cache holds: never call it cold
                     c.contains("restore") && c.at("restore").is_object() &&
                             c.at("restore").value("cache", "").rfind("warm", 0) == 0
                         ? "warm"
                         : "cold",
                     mbs(r.at("min")), mbs(r.at("median")), mbs(r.at("max")));
  o += "  (the save section above shows the last save attempted)\n";
  return o;
}

}  // namespace ioprobe
