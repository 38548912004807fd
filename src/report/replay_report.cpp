#include "report/replay_report.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/error_record.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/engine_kind.hpp"
#include "report/device_io_report.hpp"
#include "report/document.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

std::string pct(double f) { return fmt::format("{:.0f}%", f * 100); }

// "1.8x longer", "0.6x as long (1.7x faster)", "as long (within 2%)".
std::string ratio_words(double r) {
  if (r <= 0) return "an unknown time";
  if (r >= 0.98 && r <= 1.02) return "about as long (within 2%)";
  if (r > 1) return fmt::format("{:.2f}x longer", r);
  return fmt::format("{:.2f}x as long ({:.2f}x faster)", r, 1 / r);
}

bool main_waits_on_workers(const replay::ReplayResult& r) {
  for (const auto& s : r.streams)
    if (s.dependency_wait_ns > 0) return true;
  return std::count_if(r.streams.begin(), r.streams.end(), [](const auto& s) { return s.reads > 0; }) > 1;
}

json trace_json(const ReplayTraceInfo& t) {
  return {{"path", escape_bytes(t.path)},
          {"source", t.source},
          {"host", t.host},
          {"command", t.command},
          {"anonymized", t.anonymized},
          {"duration_ns", t.duration_ns},
          {"limits", t.limits},
          {"streams", t.streams},
          {"ops", t.ops},
          {"read_bytes", t.read_bytes},
          {"mapped_bytes", t.mapped_bytes},
          {"mapped_sampled", t.mapped_sampled},
          {"ranks", t.ranks}};
}

ReplayTraceInfo trace_from_json(const json& j, const std::string& p) {
  ReplayTraceInfo t;
  t.path = unescape_bytes(json_field<std::string>(j, "path", p));
  t.source = json_field<std::string>(j, "source", p);
  t.host = json_field<std::string>(j, "host", p);
  t.command = json_field<std::vector<std::string>>(j, "command", p);
  t.anonymized = json_field<bool>(j, "anonymized", p);
  t.duration_ns = json_field<int64_t>(j, "duration_ns", p);
  t.limits = json_field<std::vector<std::string>>(j, "limits", p);
  t.streams = json_field<uint64_t>(j, "streams", p);
  t.ops = json_field<uint64_t>(j, "ops", p);
  t.read_bytes = json_field<uint64_t>(j, "read_bytes", p);
  t.mapped_bytes = json_field<uint64_t>(j, "mapped_bytes", p);
  t.mapped_sampled = json_field<bool>(j, "mapped_sampled", p);
  t.ranks = json_field<std::vector<int32_t>>(j, "ranks", p);
  return t;
}

json settings_json(const ReplaySettings& s) {
  json maps = json::array();
  for (const auto& m : s.maps) maps.push_back(escape_bytes(m));
  return {{"gaps", s.gaps},
          {"as_fast_as_possible", s.as_fast_as_possible},
          {"cache", s.cache},
          {"direct", s.direct},
          {"engine", to_string(s.engine)},
          {"engine_reason", s.engine_reason},
          {"maps", maps},
          {"dir", escape_bytes(s.dir)},
          {"files_mapped", s.files_mapped},
          {"files_reused", s.files_reused},
          {"files_created", s.files_created},
          {"bytes_laid_out", s.bytes_laid_out},
          {"gaps_total", s.gaps_total},
          {"gaps_without_cpu", s.gaps_without_cpu},
          {"rank_rule", s.rank_rule}};
}

ReplaySettings settings_from_json(const json& j, const std::string& p) {
  ReplaySettings s;
  s.gaps = json_field<std::string>(j, "gaps", p);
  s.as_fast_as_possible = json_field<bool>(j, "as_fast_as_possible", p);
  s.cache = json_field<std::string>(j, "cache", p);
  s.direct = json_field<bool>(j, "direct", p);
  s.engine = engine_kind_field(j, "engine", p);
  s.engine_reason = json_field<std::string>(j, "engine_reason", p);
  for (const auto& m : json_field<std::vector<std::string>>(j, "maps", p)) s.maps.push_back(unescape_bytes(m));
  s.dir = unescape_bytes(json_field<std::string>(j, "dir", p));
  s.files_mapped = json_field<uint64_t>(j, "files_mapped", p);
  s.files_reused = json_field<uint64_t>(j, "files_reused", p);
  s.files_created = json_field<uint64_t>(j, "files_created", p);
  s.bytes_laid_out = json_field<uint64_t>(j, "bytes_laid_out", p);
  s.gaps_total = json_field<uint64_t>(j, "gaps_total", p);
  s.gaps_without_cpu = json_field<uint64_t>(j, "gaps_without_cpu", p);
  s.rank_rule = json_field<std::string>(j, "rank_rule", p);
  return s;
}

std::string latency_line(const LatencyHistogram& h) {
  if (!h.count()) return "none";
  return fmt::format("p50 {}  p90 {}  p99 {}  max {}  ({} requests)", format_ns(h.percentile(50)),
                     format_ns(h.percentile(90)), format_ns(h.percentile(99)), format_ns(h.max()),
                     format_count(h.count()));
}

}  // namespace

void set_replay_header(ReplayDocument& doc, const std::vector<std::string>& argv, const HostInfo& host,
                       const TargetInfo& target) {
  doc.header = document_header("replay", argv, host);
  doc.target = target_section(target);
}

void write_replay_document(const std::string& path, const ReplayDocument& doc) {
  write_json_file(path, replay_document_json(doc));
}

std::string encode_replay_part(const replay::ReplayResult& r) { return json(r).dump(); }

replay::ReplayResult decode_replay_part(const std::string& text, const std::string& where) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: the replay result is not JSON ({})", where, json_error_text(e)));
  }
  return replay::replay_result_from_json(j, where);
}

ReplayAnalysis analyse_replay(const ReplayDocument& doc) {
  ReplayAnalysis a;
  const replay::ReplayResult& r = doc.result;
  const replay::BatchTimeline& t = r.timeline;
  if (t.batches > 0 && t.recorded_step_ns + t.recorded_wait_ns > 0) {
    a.from_batches = true;
    a.recorded_au = t.recorded_au();
    a.replayed_au = t.replayed_au();
    // The training loop's time here: the recorded step (compute) plus the waits on this storage.
    const double here = static_cast<double>(t.recorded_step_ns + t.replayed_wait_ns);
    a.elapsed_ratio = here / static_cast<double>(t.recorded_step_ns + t.recorded_wait_ns);
    a.wait_share = here > 0 ? static_cast<double>(t.replayed_wait_ns) / here : 0;
  } else {
    a.elapsed_ratio = r.recorded_elapsed_ns > 0 ? static_cast<double>(r.elapsed_ns) / r.recorded_elapsed_ns : 0;
    a.wait_share = r.read_share();
  }
  if (r.partial) {
    a.elapsed_ratio = 0;
    a.verdict = fmt::format("interrupted after {} ({} read) of a recording that spans {}: a partial replay gives no "
                            "verdict",
                            format_ns(r.elapsed_ns), format_bytes(r.bytes), format_ns(r.recorded_elapsed_ns));
    return a;
  }
  if (doc.settings.as_fast_as_possible) {
    a.verdict = fmt::format(
        "storage ceiling of this access pattern: {} in {} ({}), every gap dropped; the job with its "
        "compute took {} as recorded",
        format_bytes(r.bytes), format_ns(r.elapsed_ns), format_rate(r.bytes_per_s()), format_ns(r.recorded_elapsed_ns));
  } else if (a.from_batches) {
    // The training loop waits for batches; how much of that is the storage shows in how long the
    // streams that produce them were blocked in reads, said beside it rather than assumed.
    a.verdict = fmt::format("on this target your job would have run {}; {} of it waiting for batches {}, whose "
                            "streams were blocked in reads {} of their time here (AU {} here, {} as recorded)",
                            ratio_words(a.elapsed_ratio), pct(a.wait_share),
                            main_waits_on_workers(r) ? "from worker processes" : "in the training process",
                            pct(r.read_share()), pct(a.replayed_au), pct(a.recorded_au));
  } else {
    a.verdict = fmt::format("on this target the recorded I/O ran {}; its streams spent {} of their time blocked in "
                            "reads (no batch marks in the trace: no training-step timeline)",
                            ratio_words(a.elapsed_ratio), pct(a.wait_share));
  }
  if (r.errors)
    a.verdict += fmt::format("; {} op(s) failed here that had not failed in the recording (first: {})",
                             format_count(r.errors), error_line(r.first_error));
  return a;
}

json replay_document_json(const ReplayDocument& doc) {
  json j = doc.header;
  j["kind"] = "replay";
  j["target"] = target_section_json(doc.target);
  j["trace"] = trace_json(doc.trace);
  j["settings"] = settings_json(doc.settings);
  j["replay"] = doc.result;
  j["device_io"] = device_io_json(doc.device_io, DeviceRef::kRead, doc.result.bytes);
  const ReplayAnalysis a = analyse_replay(doc);
  j["analysis"] = {{"elapsed_ratio", a.elapsed_ratio}, {"recorded_au", a.recorded_au},   {"replayed_au", a.replayed_au},
                   {"wait_share", a.wait_share},       {"from_batches", a.from_batches}, {"verdict", a.verdict}};
  j["partial"] = doc.result.partial;
  j["warnings"] = doc.warnings;
  if (!doc.sources.empty()) {
    json src = json::array();
    for (const auto& s : doc.sources) src.push_back(escape_bytes(s));
    j["merged_from"] = src;
  }
  return j;
}

ReplayDocument replay_document_from_json(const json& j, const std::string& where) {
  ReplayDocument d;
  const std::string kind = json_field<std::string>(j, "kind", where);
  if (kind != "replay") throw UsageError(fmt::format("{}: kind '{}' is not a replay", where, kind));
  auto object_at = [&](const char* key) -> const json& {
    const json& v = json_at(j, key, where);
    if (!v.is_object()) json_detail::throw_mistyped(v, json_path(where, key), "an object");
    return v;
  };
  d.header = json::object();
  for (const char* k : {"schema", "ioprobe_version", "kind", "command", "created_utc", "host"})
    d.header[k] = json_at(j, k, where);
  d.target = target_section_from_json(json_at(j, "target", where), json_path(where, "target"));
  d.trace = trace_from_json(json_at(j, "trace", where), json_path(where, "trace"));
  d.settings = settings_from_json(json_at(j, "settings", where), json_path(where, "settings"));
  d.result = replay::replay_result_from_json(json_at(j, "replay", where), json_path(where, "replay"));
  d.device_io = device_io_from_json(object_at("device_io"));
  d.warnings = json_field<std::vector<std::string>>(j, "warnings", where);
  if (j.contains("merged_from"))
    for (const auto& s : json_field<std::vector<std::string>>(j, "merged_from", where))
      d.sources.push_back(unescape_bytes(s));
  return d;
}

std::string render_replay_text(const ReplayDocument& doc) {
  const replay::ReplayResult& r = doc.result;
  const ReplayAnalysis a = analyse_replay(doc);
  std::string o;
  o += fmt::format("REPLAY  {} ({} recorded on {}, {} stream(s), {} ops, {} read)\n", escape_bytes(doc.trace.path),
                   doc.trace.source, doc.trace.host.empty() ? "an unknown host" : doc.trace.host,
                   format_count(doc.trace.streams), format_count(doc.trace.ops), format_bytes(doc.trace.read_bytes));
  if (!doc.sources.empty()) {
    std::vector<std::string> names;
    for (const auto& s : doc.sources) names.push_back(escape_bytes(s));
    o += fmt::format("  merged      {} document(s): {}\n", names.size(), fmt::join(names, ", "));
  }
  const ReplaySettings& s = doc.settings;
  o += fmt::format("  settings    gaps {}{}, cache {}{}, engine {} ({})\n", s.gaps,
                   s.as_fast_as_possible ? " (--as-fast-as-possible)" : "", s.cache, s.direct ? " O_DIRECT" : "",
                   to_string(s.engine), s.engine_reason);
  o += fmt::format("  files       {} mapped, {} reused, {} laid out ({}){}\n", s.files_mapped, s.files_reused,
                   s.files_created, format_bytes(s.bytes_laid_out),
                   s.dir.empty() ? "" : fmt::format(" under {}", escape_bytes(s.dir)));
  if (s.gaps_without_cpu)
    o += fmt::format("  gaps        {} of {} gaps had no recorded thread CPU (source: {}): slept, not burned\n",
                     format_count(s.gaps_without_cpu), format_count(s.gaps_total), doc.trace.source);
  if (!s.rank_rule.empty()) o += fmt::format("  ranks       {}\n", s.rank_rule);
  o += fmt::format("  elapsed     {} here vs {} recorded (the replayed streams' span); {} in {} process(es)\n",
                   format_ns(r.elapsed_ns), format_ns(r.recorded_elapsed_ns),
                   format_count(r.streams.size()) + " stream(s)", r.processes);
  o += fmt::format("  read        {} in {} ops, {}\n", format_bytes(r.bytes), format_count(r.ops),
                   format_rate(r.bytes_per_s()));
  if (r.bytes)
    o += fmt::format("  mapped      {} ({} of the bytes) replayed as reads of the mapped ranges: estimated, the trace "
                     "cannot see which pages the job touched\n",
                     format_bytes(r.mapped_bytes), pct(static_cast<double>(r.mapped_bytes) / r.bytes));
  o += "  device I/O  " + device_io_summary(device_io_json(doc.device_io, DeviceRef::kRead, r.bytes), "requested") +
       "\n";
  o += "  read lat    " + latency_line(r.read_latency) + "\n";
  if (r.open_latency.count()) o += "  open lat    " + latency_line(r.open_latency) + "\n";
  const replay::BatchTimeline& t = r.timeline;
  if (t.batches) {
    o += fmt::format("  batches     {}: step {} recorded; wait {} recorded, {} here (per batch p50 {}, p99 {})\n",
                     format_count(t.batches), format_ns(t.recorded_step_ns), format_ns(t.recorded_wait_ns),
                     format_ns(t.replayed_wait_ns), format_ns(t.replayed_wait.percentile(50)),
                     format_ns(t.replayed_wait.percentile(99)));
    o += fmt::format("  AU          {} here vs {} recorded (compute / (compute + wait), MLPerf Storage's)\n",
                     pct(a.replayed_au), pct(a.recorded_au));
  }
  o += "  streams     proc  rank  pid/tid         role         ops      read        blocked   stall     elapsed\n";
  for (const auto& st : r.streams)
    o += fmt::format("              {:<5} {:<5} {:<15} {:<12} {:<8} {:<11} {:<9} {:<9} {}\n", st.replay_rank, st.rank,
                     fmt::format("{}/{}", st.pid, st.tid), st.role.empty() ? "-" : escape_bytes(st.role),
                     format_count(st.ops), format_bytes(st.bytes), format_ns(st.read_ns), format_ns(st.stall_ns),
                     format_ns(st.elapsed_ns));
  o += "              (proc: the replay process; rank: the recorded rank it replayed; blocked: time in reads; stall: "
       "read time beyond the recorded)\n";
  for (const auto& l : doc.trace.limits) o += "  trace       cannot see: " + l + "\n";
  if (doc.trace.mapped_bytes && !doc.trace.mapped_sampled)
    o += fmt::format("  trace       {} of data files were mapped; which pages were read was not observed\n",
                     format_bytes(doc.trace.mapped_bytes));
  o += "  verdict     " + a.verdict + "\n";
  for (const auto& w : doc.warnings) o += "  warning     " + w + "\n";
  return o;
}

ReplayDocument merge_replay_documents(const std::vector<ReplayDocument>& docs, const std::vector<std::string>& names) {
  if (docs.empty()) throw UsageError("--merge: no replay documents");
  ReplayDocument m = docs.front();
  for (size_t i = 1; i < docs.size(); ++i) {
    const ReplayDocument& d = docs[i];
    if (d.trace.path != m.trace.path || d.trace.ops != m.trace.ops || d.trace.duration_ns != m.trace.duration_ns)
      throw UsageError(fmt::format("--merge: {} replayed {} ({} ops) but {} replayed {} ({} ops): merge replays of one "
                                   "trace",
                                   names.at(i), escape_bytes(d.trace.path), d.trace.ops, names.front(),
                                   escape_bytes(m.trace.path), m.trace.ops));
    // The same replay given twice (one path twice, a copy) would count its bytes twice.
    for (size_t k = 0; k < i; ++k) {
      const auto same = [&](const char* key) {
        return docs[k].header.contains(key) && d.header.contains(key) && docs[k].header.at(key) == d.header.at(key);
      };
      if (same("created_utc") && same("host") && same("command"))
        throw UsageError(fmt::format("--merge: '{}' and '{}' are the same result (created {}); merging it twice would "
                                     "count its bytes twice: give each replay once",
                                     names.at(k), names.at(i), d.header.value("created_utc", "?")));
    }
    // Each document's processes keep their own numbers after the ones before (proc column).
    replay::ReplayResult part = d.result;
    for (auto& st : part.streams) st.replay_rank += static_cast<int32_t>(m.result.processes);
    m.result.merge(part);
    m.device_io.merge(d.device_io);
    const auto target_path = [](const TargetSection& t) { return t.path + " (" + t.fs_type + ")"; };
    if (target_path(d.target) != target_path(m.target))
      m.warnings.push_back(fmt::format("{} replayed on {}, {} on {}: the header shows the first target only",
                                       names.at(i), target_path(d.target), names.front(), target_path(m.target)));
    for (const auto& w : d.warnings)
      if (std::find(m.warnings.begin(), m.warnings.end(), w) == m.warnings.end()) m.warnings.push_back(w);
  }
  m.sources = names;
  return m;
}

}  // namespace ioprobe
