#include "report/scaling_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"

namespace ioprobe {

namespace {

using json = nlohmann::json;

json point_json(const ScalingPoint& p) {
  json j = {{"path", escape_bytes(p.path)},
            {"iops", p.iops},
            {"bytes_per_s", p.bytes_per_s},
            {"p50_us", p.p50_us},
            {"p99_us", p.p99_us},
            {"ios", p.ios},
            {"bytes", p.bytes},
            {"elapsed_s", p.elapsed_s},
            {"engine", p.engine},
            {"error", p.error.empty() ? json(nullptr) : json(p.error)}};
  return j;
}

json or_null(double v) { return v > 0 ? json(v) : json(nullptr); }

std::string row(const std::string& name, const json& p) {
  if (!p.value("error", json(nullptr)).is_null())
    return fmt::format("  {:<10} error: {}\n", name, p.at("error").get<std::string>());
  return fmt::format("  {:<10} {:>10} IOPS  {:>32}  p50 {:>9}  p99 {:>9}\n", name,
                     format_count(static_cast<uint64_t>(std::llround(p.at("iops").get<double>()))),
                     format_rate(p.at("bytes_per_s").get<double>()), format_ns(p.at("p50_us").get<double>() * 1e3),
                     format_ns(p.at("p99_us").get<double>() * 1e3));
}

}  // namespace

json scaling_json(const ScalingConfig& cfg, const ScalingResult& r) {
  json members = json::array();
  for (const auto& m : r.members) {
    json j = point_json(m);
    j["device"] = m.name;
    j["nominal"] = {{"device_class", m.nominal.device_class},
                    {"bytes_per_s", or_null(m.nominal.bytes_per_s)},
                    {"basis", m.nominal.basis},
                    {"label", "nominal"}};
    members.push_back(j);
  }
  return {{"dir", escape_bytes(cfg.dir)},
          {"file", escape_bytes(r.array.path)},
          {"file_created", r.array_file_created},
          {"rw", pattern_name(cfg.rw)},
          {"bs", cfg.bs},
          {"iodepth", cfg.iodepth},
          {"runtime_s", cfg.runtime_s},
          {"direct", true},
          {"raid_kind", r.raid_kind.empty() ? json(nullptr) : json(r.raid_kind)},
          {"level", r.level.empty() ? json(nullptr) : json(r.level)},
          {"members", members},
          {"array", point_json(r.array)},
          {"sum_bytes_per_s", r.sum_bytes_per_s},
          {"sum_iops", r.sum_iops},
          {"array_bytes_per_s", r.array.bytes_per_s},
          {"efficiency", or_null(r.efficiency)},
          {"expectation",
           {{"factor", or_null(r.expectation.factor)},
            {"rule", r.expectation.rule},
            {"expected_bytes_per_s", or_null(r.expected_bytes_per_s)}}},
          {"interrupted", r.interrupted},
          {"notes", r.notes}};
}

std::string render_scaling_text(const json& doc) {
  const json& s = doc.at("scaling");
  const json& members = s.at("members");
  std::string out = fmt::format("ioprobe scaling: {} {} B, iodepth {}, O_DIRECT, {:g} s each, on {}{}\n",
                                s.at("rw").get<std::string>(), s.at("bs").get<uint64_t>(), s.at("iodepth").get<int>(),
                                s.at("runtime_s").get<double>(), s.at("dir").get<std::string>(),
                                s.value("interrupted", false) ? "  [PARTIAL: interrupted]" : "");
  const std::string level = s.value("level", json(nullptr)).is_null() ? "" : s.at("level").get<std::string>();
  out += fmt::format("  array       {}\n",
                     level.empty()
                         ? "one device (no RAID)"
                         : fmt::format("{} {} over {} members", s.value("raid_kind", ""), level, members.size()));
  out += "  each member alone (read-only, the device node):\n";
  for (const auto& m : members) out += row(m.at("device").get<std::string>(), m);
  if (members.size() > 1)
    out += fmt::format("  {:<10} {:>10} IOPS  {:>32}\n", "sum",
                       format_count(static_cast<uint64_t>(std::llround(s.at("sum_iops").get<double>()))),
                       format_rate(s.at("sum_bytes_per_s").get<double>()));
  out += fmt::format("  the array, through {}{}:\n", s.at("file").get<std::string>(),
                     s.value("file_created", false) ? " (created by ioprobe, removed after)" : " (read-only)");
  out += row("array", s.at("array"));
  const json& e = s.at("expectation");
  if (!s.at("efficiency").is_null()) {
    out += fmt::format("  efficiency  {:.2f} (array / sum of members)", s.at("efficiency").get<double>());
    if (!e.at("expected_bytes_per_s").is_null())
      out += fmt::format("; expected at best {:.2f} ({}): {}", e.at("factor").get<double>(),
                         format_rate(e.at("expected_bytes_per_s").get<double>()),
                         s.at("efficiency").get<double>() > 1.05 ? "above 1: a cache served reads (see the note)"
                         : s.at("array_bytes_per_s").get<double>() >= 0.9 * e.at("expected_bytes_per_s").get<double>()
                             ? "the rule holds here"
                             : "the rule does NOT hold here");
    out += "\n";
  }
  out += fmt::format("  rule        {}\n", e.at("rule").get<std::string>());
  for (const auto& m : members) {
    const json& n = m.at("nominal");
    out += fmt::format("  nominal     {}: {} ({}){}\n", m.at("device").get<std::string>(),
                       n.at("device_class").get<std::string>(), n.at("basis").get<std::string>(),
                       n.at("bytes_per_s").is_null() || !m.value("error", json(nullptr)).is_null()
                           ? ""
                           : fmt::format("; measured {:.0f} % of it",
                                         100 * m.at("bytes_per_s").get<double>() / n.at("bytes_per_s").get<double>()));
  }
  for (const auto& n : s.value("notes", json::array())) out += "  note        " + n.get<std::string>() + "\n";
  for (const auto& w : doc.value("warnings", json::array()))
    if (w.is_string()) out += "  warning     " + w.get<std::string>() + "\n";
  return out;
}

}  // namespace ioprobe
