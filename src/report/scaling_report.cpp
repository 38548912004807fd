#include "report/scaling_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/engine_kind.hpp"
#include "report/document.hpp"

namespace ioprobe {

namespace {

using json = nlohmann::json;

json scaling_or_null(double v) { return v > 0 ? json(v) : json(nullptr); }

// A figure written as null when unknown: 0 then.
double scaling_nullable(const json& j, const char* key, const std::string& w) {
  const json& v = json_at(j, key, w);
  return v.is_null() ? 0 : json_as<double>(v, json_path(w, key));
}

std::string scaling_nullable_text(const json& j, const char* key, const std::string& w) {
  const json& v = json_at(j, key, w);
  return v.is_null() ? std::string() : json_as<std::string>(v, json_path(w, key));
}

json scaling_point_json(const ScalingPoint& p) {
  return {{"path", p.path},
          {"iops", p.iops},
          {"bytes_per_s", p.bytes_per_s},
          {"p50_us", p.p50_us},
          {"p99_us", p.p99_us},
          {"ios", p.ios},
          {"bytes", p.bytes},
          {"elapsed_s", p.elapsed_s},
          {"engine", to_string_or_empty(p.engine)},
          {"error", p.error.empty() ? json(nullptr) : json(p.error)}};
}

ScalingPoint scaling_point_from_json(const json& j, const std::string& w) {
  ScalingPoint p;
  p.path = json_field<std::string>(j, "path", w);
  p.iops = json_field<double>(j, "iops", w);
  p.bytes_per_s = json_field<double>(j, "bytes_per_s", w);
  p.p50_us = json_field<double>(j, "p50_us", w);
  p.p99_us = json_field<double>(j, "p99_us", w);
  p.ios = json_field<uint64_t>(j, "ios", w);
  p.bytes = json_field<uint64_t>(j, "bytes", w);
  p.elapsed_s = json_field<double>(j, "elapsed_s", w);
  p.engine = engine_kind_or_none_field(j, "engine", w);  // "": not measured
  p.error = scaling_nullable_text(j, "error", w);
  return p;
}

json scaling_section_json(const ScalingSection& s) {
  const ScalingResult& r = s.result;
  json members = json::array();
  for (const auto& m : r.members) {
    json j = scaling_point_json(m);
    j["device"] = m.name;
    j["nominal"] = {{"device_class", m.nominal.device_class},
                    {"bytes_per_s", scaling_or_null(m.nominal.bytes_per_s)},
                    {"basis", m.nominal.basis},
                    {"label", "nominal"}};
    members.push_back(j);
  }
  return {{"dir", s.dir},
          {"file", r.array.path},
          {"file_created", r.array_file_created},
          {"rw", s.rw},
          {"bs", s.bs},
          {"iodepth", s.iodepth},
          {"runtime_s", s.runtime_s},
          {"direct", true},
          {"raid_kind", r.raid_kind.empty() ? json(nullptr) : json(r.raid_kind)},
          {"level", r.level.empty() ? json(nullptr) : json(r.level)},
          {"members", members},
          {"array", scaling_point_json(r.array)},
          {"sum_bytes_per_s", r.sum_bytes_per_s},
          {"sum_iops", r.sum_iops},
          {"array_bytes_per_s", r.array.bytes_per_s},
          {"efficiency", scaling_or_null(r.efficiency)},
          {"expectation",
           {{"factor", scaling_or_null(r.expectation.factor)},
            {"rule", r.expectation.rule},
            {"expected_bytes_per_s", scaling_or_null(r.expected_bytes_per_s)}}},
          {"interrupted", r.interrupted},
          {"notes", r.notes}};
}

ScalingSection scaling_section_from_json(const json& j, const std::string& w) {
  ScalingSection s;
  ScalingResult& r = s.result;
  s.dir = json_field<std::string>(j, "dir", w);
  s.rw = json_field<std::string>(j, "rw", w);
  s.bs = json_field<uint32_t>(j, "bs", w);
  s.iodepth = json_field<unsigned>(j, "iodepth", w);
  s.runtime_s = json_field<double>(j, "runtime_s", w);
  if (!json_field<bool>(j, "direct", w))
    throw UsageError(fmt::format("{}: false, but scaling reads only with O_DIRECT", json_path(w, "direct")));
  r.raid_kind = scaling_nullable_text(j, "raid_kind", w);
  r.level = scaling_nullable_text(j, "level", w);
  const json& members = json_array_at(j, "members", w);
  const std::string mw = json_path(w, "members");
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string pw = json_path(mw, i);
    ScalingPoint m = scaling_point_from_json(members[i], pw);
    m.name = json_field<std::string>(members[i], "device", pw);
    const json& n = json_at(members[i], "nominal", pw);
    const std::string nw = json_path(pw, "nominal");
    m.nominal.device_class = json_field<std::string>(n, "device_class", nw);
    m.nominal.bytes_per_s = scaling_nullable(n, "bytes_per_s", nw);
    m.nominal.basis = json_field<std::string>(n, "basis", nw);
    r.members.push_back(m);
  }
  r.array = scaling_point_from_json(json_at(j, "array", w), json_path(w, "array"));
  r.array.name = "array";
  if (const auto file = json_field<std::string>(j, "file", w); file != r.array.path)
    throw UsageError(fmt::format("{}: '{}' is not the array's path '{}'; the document was edited", json_path(w, "file"),
                                 escape_bytes(file), escape_bytes(r.array.path)));
  r.array_file_created = json_field<bool>(j, "file_created", w);
  r.sum_bytes_per_s = json_field<double>(j, "sum_bytes_per_s", w);
  r.sum_iops = json_field<double>(j, "sum_iops", w);
  // The array's bytes_per_s written a second time: not kept, so it must agree with the first.
  if (const auto again = json_field<double>(j, "array_bytes_per_s", w); again != r.array.bytes_per_s)
    throw UsageError(fmt::format("{}: {} B/s is not the array's bytes_per_s {} B/s; the document was edited",
                                 json_path(w, "array_bytes_per_s"), again, r.array.bytes_per_s));
  r.efficiency = scaling_nullable(j, "efficiency", w);
  const json& e = json_at(j, "expectation", w);
  const std::string ew = json_path(w, "expectation");
  r.expectation.factor = scaling_nullable(e, "factor", ew);
  r.expectation.rule = json_field<std::string>(e, "rule", ew);
  r.expected_bytes_per_s = scaling_nullable(e, "expected_bytes_per_s", ew);
  r.interrupted = json_field<bool>(j, "interrupted", w);
  r.notes = json_field<std::vector<std::string>>(j, "notes", w);
  return s;
}

std::string scaling_row(const std::string& name, const ScalingPoint& p) {
  if (!p.error.empty()) return fmt::format("  {:<10} error: {}\n", name, p.error);
  return fmt::format("  {:<10} {:>10} IOPS  {:>32}  p50 {:>9}  p99 {:>9}\n", name,
                     format_count(static_cast<uint64_t>(std::llround(p.iops))), format_rate(p.bytes_per_s),
                     format_ns(p.p50_us * 1e3), format_ns(p.p99_us * 1e3));
}

}  // namespace

ScalingSection scaling_section(const ScalingConfig& cfg, const ScalingResult& r) {
  ScalingSection s;
  s.dir = escape_bytes(cfg.dir);
  s.rw = pattern_name(cfg.rw);
  s.bs = cfg.bs;
  s.iodepth = cfg.iodepth;
  s.runtime_s = cfg.runtime_s;
  s.result = r;
  s.result.array.path = escape_bytes(r.array.path);
  for (auto& m : s.result.members) m.path = escape_bytes(m.path);
  return s;
}

json scaling_document_json(const ScalingDocument& doc) {
  nlohmann::json j = {{"target", target_section_json(doc.target)},
                      {"partial", doc.partial},
                      {"warnings", doc.warnings},
                      {"scaling", scaling_section_json(doc.scaling)}};
  j.update(header_json(doc.header, "scaling"));
  return j;
}

ScalingDocument scaling_document_from_json(const json& j, const std::string& where) {
  ScalingDocument d;
  d.header = header_from_json(j, "scaling", where);
  d.target = target_section_from_json(json_at(j, "target", where), json_path(where, "target"));
  d.partial = json_field<bool>(j, "partial", where);
  d.warnings = json_field<std::vector<std::string>>(j, "warnings", where);
  d.scaling = scaling_section_from_json(json_at(j, "scaling", where), json_path(where, "scaling"));
  return d;
}

void write_scaling_document(const std::string& path, const ScalingDocument& doc) {
  write_json_file(path, scaling_document_json(doc));
}

std::string render_scaling_text(const ScalingDocument& doc) {
  const ScalingSection& s = doc.scaling;
  const ScalingResult& r = s.result;
  std::string out = fmt::format("ioprobe scaling: {} {}, iodepth {}, O_DIRECT, {:g} s each, on {}{}\n", s.rw,
                                format_bytes(s.bs), s.iodepth, s.runtime_s, s.dir,
                                r.interrupted ? "  [PARTIAL: interrupted]" : "");
  out += fmt::format("  array       {}\n",
                     r.level.empty() ? "one device (no RAID)"
                                     : fmt::format("{} {} over {} members", r.raid_kind, r.level, r.members.size()));
  out += "  each member alone (read-only, the device node):\n";
  for (const auto& m : r.members) out += scaling_row(m.name, m);
  if (r.members.size() > 1)
    out += fmt::format("  {:<10} {:>10} IOPS  {:>32}\n", "sum",
                       format_count(static_cast<uint64_t>(std::llround(r.sum_iops))), format_rate(r.sum_bytes_per_s));
  out += fmt::format("  the array, through {}{}:\n", r.array.path,
                     r.array_file_created ? " (created by ioprobe, removed after)" : " (read-only)");
  out += scaling_row("array", r.array);
  if (r.efficiency > 0) {
    out += fmt::format("  efficiency  {:.2f} (array / sum of members)", r.efficiency);
    if (r.expected_bytes_per_s > 0)
      out += fmt::format("; expected at best {:.2f} ({}): {}", r.expectation.factor,
                         format_rate(r.expected_bytes_per_s),
                         r.efficiency > 1.05 ? "above 1: a cache served reads (see the note)"
                         : r.array.bytes_per_s >= 0.9 * r.expected_bytes_per_s ? "the rule holds here"
                                                                               : "the rule does NOT hold here");
    out += "\n";
  }
  out += fmt::format("  rule        {}\n", r.expectation.rule);
  for (const auto& m : r.members)
    out += fmt::format("  nominal     {}: {} ({}){}\n", m.name, m.nominal.device_class, m.nominal.basis,
                       m.nominal.bytes_per_s <= 0 || !m.error.empty()
                           ? ""
                           : fmt::format("; measured {:.0f} % of it", 100 * m.bytes_per_s / m.nominal.bytes_per_s));
  for (const auto& n : r.notes) out += "  note        " + n + "\n";
  for (const auto& w : doc.warnings) out += "  warning     " + w + "\n";
  return out;
}

}  // namespace ioprobe
