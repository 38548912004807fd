#include "report/html_report.hpp"
#include "report/device_io_report.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <kainjow/mustache.hpp>

#include "core/error.hpp"
#include "core/units.hpp"
#include "report/calibration_effect_report.hpp"
#include "report/capacity_document.hpp"
#include "report/capacity_report.hpp"
#include "report/checkpoint_document.hpp"
#include "report/checkpoint_readback.hpp"
#include "report/checkpoint_report.hpp"
#include "report/compare_text.hpp"
#include "report/document_text.hpp"
#include "report/html_template.hpp"  // generated from reports/report.html.mustache
#include "report/probe_text.hpp"
#include "report/raw_document.hpp"
#include "report/raw_report.hpp"
#include "report/replay_report.hpp"
#include "report/run_document.hpp"
#include "report/scaling_report.hpp"
#include "report/svg_chart.hpp"
#include "report/tune_document.hpp"
#include "stats/latency_json.hpp"

namespace ioprobe {

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  return o;
}

namespace {

using json = nlohmann::json;

std::string row(const std::string& k, const std::string& v) {
  return "<tr><th>" + html_escape(k) + "</th><td>" + html_escape(v) + "</td></tr>\n";
}

// The scalar figures of one section as a table.
std::string scalars_table(const std::string& title, const json& sec) {
  if (!sec.is_object()) return "";
  std::string o = "<h3>" + html_escape(title) + "</h3><table class=\"kv\">\n";
  for (const auto& [k, v] : sec.items())
    if (v.is_primitive()) o += row(k, v.is_string() ? v.get<std::string>() : v.dump());
  return o + "</table>\n";
}

// Each interval's rate is its samples over its own length: the last one, cut short by the run's
// end (`elapsed_s`), is not divided by the whole interval.
std::string timeline_chart(const Timeline& timeline, double elapsed_s, double gpus, const std::string& title) {
  if (timeline.points().empty()) return "<p>No timeline recorded.</p>\n";
  LineChart c;
  c.id = "timeline";
  c.title = title;
  c.x_label = "time since start (s)";
  c.y_label = "samples/s";
  c.x_unit = "s";
  c.y_unit = "samples/s";
  SvgSeries s{"delivered samples/s", {}, false};
  bool first = true;
  for (size_t i = 0; i < timeline.points().size(); ++i) {
    const TimelinePoint& p = timeline.points()[i];
    const double t = p.t_s;
    const double iv = timeline.interval_length_s(i, elapsed_s);
    const double rate = static_cast<double>(p.samples) / iv;
    s.points.emplace_back(t, rate);
    s.points.emplace_back(t + iv, rate);
    if (first) c.shades.push_back({t, t + iv, "warm-up (first interval)", "#999"});
    else if (p.wait_s > 0.5 * iv * std::max(1.0, gpus))
      c.shades.push_back({t, t + iv, "stall: GPUs waited > half the interval", "#d62728"});
    first = false;
  }
  c.series.push_back(s);
  return render_line_chart(c) +
         "<p class=\"note\">Grey: warm-up interval. Red: stalls, intervals where the GPUs waited for "
         "data more than half the time.</p>\n";
}

// The latency figures as the document has them, in µs (stats/latency_json.hpp latency_us_json).
std::string latency_chart(const LatencyHistogram& h, const std::string& title, const std::string& what = "") {
  auto us = [](double ns) { return ns / 1e3; };
  BarChart b;
  b.id = "latency";
  b.title = title;
  b.y_label = "latency (µs, log scale)";
  b.log_y = true;
  b.value_unit = " µs";
  for (const auto& [label, p] : {std::pair{"p50", 50.0}, {"p90", 90.0}, {"p99", 99.0}, {"p99.9", 99.9}})
    b.bars.emplace_back(label, us(static_cast<double>(h.percentile(p))));
  b.bars.emplace_back("max", us(static_cast<double>(h.max())));
  if (!what.empty())
    return render_bar_chart(b) +
           fmt::format("<p class=\"note\">{}; mean {:.1f} µs.</p>\n", html_escape(what), us(h.mean()));
  return render_bar_chart(b) +
         fmt::format("<p class=\"note\">Per-file open+read+close latency over {} files; mean {:.1f} µs.</p>\n",
                     h.count(), us(h.mean()));
}

// A multi-host document's hosts as the HTML shows them: the cluster's line and one row per host.
struct HostsChart {
  int hosts = 0;
  int mpi_ranks = 0;
  std::string launcher = "?";
  double start_skew_s = 0;
  std::string merge;
  struct Row {
    std::string name;
    size_t mpi_ranks = 0;
    double value = 0;  // the charted metric
    double bytes_per_s = 0, first_done_s = 0, last_done_s = 0;
    bool straggler = false;
  };
  std::vector<Row> rows;
};

// The chart's head from a document's cluster section (raw's or run's: the same fields).
template <class Cluster>
HostsChart hosts_chart_head(const std::optional<Cluster>& c) {
  HostsChart hc;
  if (c) {
    hc.hosts = c->hosts;
    hc.mpi_ranks = c->mpi_ranks;
    hc.launcher = c->launcher;
    hc.start_skew_s = c->start_skew_s;
    hc.merge = c->merge;
  }
  return hc;
}

// A raw document's cluster and host rows, IOPS charted.
HostsChart raw_hosts_chart(const RawDocument& d) {
  HostsChart hc = hosts_chart_head(d.cluster);
  for (const auto& h : d.hosts)
    hc.rows.push_back({.name = h.hostname,
                       .mpi_ranks = h.mpi_ranks.size(),
                       .value = h.iops,
                       .bytes_per_s = h.bytes_per_s,
                       .first_done_s = h.first_done_s,
                       .last_done_s = h.last_done_s,
                       .straggler = h.straggler});
  return hc;
}

// A run document's cluster and host rows, samples/s charted.
HostsChart run_hosts_chart(const RunDocument& d) {
  HostsChart hc = hosts_chart_head(d.cluster);
  if (!d.hosts) return hc;
  for (const auto& h : *d.hosts)
    hc.rows.push_back({.name = h.hostname,
                       .mpi_ranks = h.mpi_ranks.size(),
                       .value = h.results.samples_per_s,
                       .bytes_per_s = h.results.bytes_per_s,
                       .first_done_s = h.results.first_done_s,
                       .last_done_s = h.results.last_done_s,
                       .straggler = h.straggler});
  return hc;
}

// Multi-host documents (run and raw): one bar per host of the chart's metric (`label`),
// stragglers in red, and the host rows as a table. "" for a single-host document.
std::string hosts_section(const HostsChart& hc, const std::string& label) {
  if (hc.rows.empty()) return "";
  BarChart b;
  b.id = "hosts";
  b.title = "Per host: " + label + " (stragglers in red)";
  b.y_label = label;
  b.marked_label = "straggler";
  b.value_unit = " " + label;
  std::string rows;
  for (const auto& h : hc.rows) {
    b.bars.emplace_back(h.name, h.value);
    b.marked.push_back(h.straggler);
    rows += fmt::format(
        "<tr{}><th>{}</th><td>{}</td><td>{:.1f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td></tr>\n",
        h.straggler ? " class=\"warn\"" : "", html_escape(h.name), h.mpi_ranks, h.value, h.bytes_per_s / 1e6,
        h.first_done_s, h.last_done_s, h.straggler ? "STRAGGLER" : "");
  }
  std::string o =
      fmt::format("<h3>Hosts</h3><p class=\"note\">{} host(s), {} MPI rank(s), started by {}; start skew &lt;= "
                  "{:.3f} ms. Merged figures: {}.</p>\n",
                  hc.hosts, hc.mpi_ranks, html_escape(hc.launcher), 1e3 * hc.start_skew_s, html_escape(hc.merge));
  o += render_bar_chart(b);
  o += "<table class=\"grid hosts\"><tr><th>host</th><th>MPI ranks</th><th>" + html_escape(label) +
       "</th><th>MB/s (10^6 B/s)</th><th>first done s</th><th>last done s</th><th></th></tr>\n" + rows + "</table>\n";
  return o;
}

std::string run_section(const RunDocument& d) {
  std::string o;
  const LoaderResult& r = d.results.loader;
  const ResultRates x = result_rates(r);
  o += "<table class=\"kv\">\n";
  o += row("target", fmt::format("{} ({}), {}", d.target.path, d.target.fs_type,
                                 d.target.reading ? d.target.reading->cache_detail : ""));
  o += row("dataset",
           fmt::format("{}: {} files, {}", d.dataset.preset, d.dataset.files, format_bytes(d.dataset.bytes)));
  o += row("DataLoader",
           fmt::format("num_workers={} batch_size={} prefetch_factor={}, {} GPU rank(s)", d.loader.num_workers,
                       d.loader.batch_size, d.loader.prefetch_factor, d.loader.gpus));
  o += row("throughput", fmt::format("{:.0f} samples/s, {}", x.samples_per_s, format_rate(x.bytes_per_s)));
  if (d.results.device_io) {
    o += row("device I/O", device_io_summary(*d.results.device_io, "delivered"));
    const std::vector<RunEpoch> epochs = d.results.epochs.value_or(std::vector<RunEpoch>{});
    for (size_t i = 0; i < epochs.size(); ++i) {
      if (epochs.size() > kMaxEpochRows && i == kMaxEpochRows - 1 && i + 1 < epochs.size()) {
        o += row("", omitted_epochs_text(epochs, i, epochs.size() - 1));
        i = epochs.size() - 1;
      }
      const RunEpoch& e = epochs[i];
      o += row(fmt::format("epoch {}{}", e.epoch,
                           e.partial ? " (cut short: " +
                                           (e.cut_by.kind == LoaderStopKind::kNone ? std::string("stopped")
                                                                                   : to_string(e.cut_by)) +
                                           ")"
                                     : ""),
               device_io_summary(e.device_io, "delivered"));
    }
  }
  const RunIngestSection& in = d.ingest;
  const std::string from = in.bytes_source ? "; bytes from: " + *in.bytes_source : "";
  if (in.result) {
    const Demand& dm = in.result->demand;
    o += row("demand", fmt::format("{:.0f} samples/s ({} x {})", in.result->required_samples_per_s, dm.gpus,
                                   dm.accelerator_name));
    o += row("AU", fmt::format("{:.1f}% (target {:.0f}%){}", 100 * in.result->accelerator_utilization,
                               100 * dm.au_target, from));
    o += row("verdict", in.result->verdict + ": " + in.result->verdict_text);
  } else {  // a merged document: no ingest result, and why (as the text report says it)
    o += row("GPU ingest", "not available: " + in.unavailable_reason);
    if (in.bytes_source) o += row("bytes from", *in.bytes_source);
  }
  // As the text report's line: a model, labelled so, beside the run's measured rate.
  if (const std::string effect = calibration_effect_text(in.calibration_effect,
                                                         in.result ? in.result->delivered_samples_per_s : 0);
      !effect.empty())
    o += row("calibration effect", effect);
  o += "</table>\n";
  o += timeline_chart(r.timeline, static_cast<double>(r.elapsed_ns) / 1e9, static_cast<double>(d.loader.gpus),
                      "Throughput over time");
  o += latency_chart(r.file_latency, "Per-file latency distribution");
  o += hosts_section(run_hosts_chart(d), "samples/s");
  return o;
}

std::string tune_section(const TuneDocument& d) {
  std::string o;
  const std::vector<TunePointEntry>& pts = d.points;
  const Recommendation& rec = d.recommendation;
  const double demand = d.demand.required_samples_per_s;
  o += "<div class=\"rec\"><h3>Recommendation (per GPU rank)</h3>\n";
  if (rec.valid) {
    o += "<pre>" + html_escape(rec.dataloader) + (rec.numactl.empty() ? "" : "\n" + html_escape(rec.numactl)) +
         "</pre>\n";
    o += "<p>" +
         html_escape(rec.meets_demand ? "Meets the GPUs' demand: the smallest such setting."
                                      : fmt::format("Demand not met: short by {:.0f} samples/s of {:.0f}.",
                                                    rec.shortfall_samples_per_s, demand)) +
         "</p>\n";
    if (!rec.pin_memory_note.empty()) o += "<p>pin_memory: " + html_escape(rec.pin_memory_note) + "</p>\n";
    o += "<p>NUMA: " + html_escape(rec.numa_reason) + "</p>\n";
    for (const auto& n : rec.notes) o += "<p class=\"warn\">" + html_escape(n) + "</p>\n";
  } else {
    o += "<p>No setting was measured.</p>\n";
  }
  o += "</div>\n";
  // Samples/s against num_workers, one line per (prefetch_factor, numa).
  LineChart c;
  c.id = "workers";
  c.title = "samples/s against num_workers";
  c.x_label = "num_workers per rank (log2)";
  c.y_label = "samples/s (median of repeats)";
  c.x_unit = "num_workers";
  c.y_unit = "samples/s";
  c.log2_x = true;
  c.hline = demand;
  c.hline_label = fmt::format("GPU demand {:.0f} samples/s", demand);
  std::map<std::string, size_t> idx;
  for (const auto& e : pts) {
    if (!tune_point_measured(e)) continue;
    const TunePoint& p = e.point;
    std::string key = fmt::format("prefetch_factor={} numa={}", p.prefetch_factor, p.numa);
    if (!idx.count(key)) idx[key] = c.series.size(), c.series.push_back({key, {}, true});
    c.series[idx[key]].points.emplace_back(p.num_workers, p.samples_per_s);
  }
  if (rec.valid) {  // the codec checked the indexes of a valid recommendation
    const TunePoint& k = pts[rec.knee].point;
    c.marks.push_back({static_cast<double>(k.num_workers), k.samples_per_s, "knee"});
    if (rec.point != rec.knee) {
      const TunePoint& r = pts[rec.point].point;
      c.marks.push_back({static_cast<double>(r.num_workers), r.samples_per_s, "recommended"});
    }
  }
  o += render_line_chart(c);
  o += "<table "
       "class=\"grid\"><tr><th>num_workers</th><th>prefetch_factor</th><th>numa</th><th>samples/s</th><th>spread</th>"
       "<th>MB/s</th><th>AU</th><th>CPU used</th><th>repeats</th></tr>\n";
  for (const auto& e : pts) {
    const TunePoint& p = e.point;
    if (!tune_point_measured(e))  // the sweep stopped before this setting ran
      o += fmt::format("<tr class=\"not-measured\"><td>{}</td><td>{}</td><td>{}</td><td colspan=\"5\">not measured "
                       "(the sweep stopped before it ran)</td><td>0</td></tr>\n",
                       p.num_workers, p.prefetch_factor, html_escape(p.numa));
    else
      o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.0f}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}%</"
                       "td><td>{:.2f}</td><td>{}</td></tr>\n",
                       p.num_workers, p.prefetch_factor, html_escape(p.numa), p.samples_per_s,
                       p.runs.size() > 1 ? fmt::format("{:.1f}%", 100 * p.spread) : "-",  // one repeat: no spread
                       p.bytes_per_s / 1e6, 100 * p.au, p.cpu_used, p.runs.size());
  }
  o += "</table><p class=\"note\">MB/s = 10^6 B/s. Spread = (max - min) / median of the repeats.</p>\n";
  if (d.best_run) {
    o += timeline_chart(d.best_run->timeline, static_cast<double>(d.best_run->elapsed_ns) / 1e9, d.loader.gpus,
                        "Throughput over time (fastest run)");
    o += latency_chart(d.best_run->file_latency, "Per-file latency distribution (fastest run)");
  }
  return o;
}

// The chart's words for the phases of checkpoint.save.phases_max_over_ranks_s (their JSON keys
// are stage, compress, write_wait, fsync; report/checkpoint_json.cpp).
std::string phase_label(const std::string& key) {
  if (key == "stage") return "staging copy";
  if (key == "compress") return "compression";
  if (key == "write_wait") return "waiting for writes";
  if (key == "fsync") return "fsync";
  return key;
}

// Key figures of a raw result (IOPS, MB/s, latency, CPU), its latency chart and the text report.
std::string raw_section(const RawDocument& d) {
  const RawSection& raw = d.raw;
  const RawResultsSection& r = raw.results;
  auto per_s = [&](double v) { return r.elapsed_s > 0 ? v / r.elapsed_s : 0.0; };
  auto us = [&](double p) { return static_cast<double>(r.latency.percentile(p)) / 1e3; };
  std::string o = "<table class=\"kv\">\n";
  o += row("pattern", fmt::format("{} {}, iodepth {}, numjobs {}, {}", raw.rw, format_bytes(raw.bs), raw.iodepth,
                                  raw.numjobs, raw.direct ? "O_DIRECT" : "buffered"));
  o += row("IOPS", fmt::format("{:.0f}", per_s(static_cast<double>(r.ios))));
  o += row("throughput", format_rate(per_s(static_cast<double>(r.bytes))));
  o += row("latency", fmt::format("p50 {:.1f} µs, p99 {:.1f} µs, p99.9 {:.1f} µs, max {:.1f} µs", us(50), us(99),
                                  us(99.9), static_cast<double>(r.latency.max()) / 1e3));
  o += row("CPU", fmt::format("user {:.2f} s, sys {:.2f} s, {:.2f} µs per I/O", r.cpu_user_s, r.cpu_sys_s,
                              r.ios ? (r.cpu_user_s + r.cpu_sys_s) * 1e6 / static_cast<double>(r.ios) : 0.0));
  o += row("engine", std::string(to_string(raw.engine.name)) + " (" + raw.engine.reason + ")");
  o += "</table>\n";
  o += latency_chart(r.latency, "Per-I/O latency distribution",
                     fmt::format("Per-I/O completion latency over {:.0f} I/Os", static_cast<double>(r.ios)));
  o += hosts_section(raw_hosts_chart(d), "IOPS");
  o += "<pre class=\"text\">" + html_escape(render_raw_text(d)) + "</pre>\n";
  return o;
}

std::string checkpoint_section(const CheckpointDocument& d) {
  // A read-back (--restore-only, --verify-only) has no save to chart: its text alone.
  if (d.readback) return "<pre class=\"text\">" + html_escape(render_checkpoint_readback_text(d)) + "</pre>\n";
  std::string o;
  // The per-phase seconds, max over ranks (checkpoint.save.phases_max_over_ranks_s), in the
  // chart's order: compress, fsync, stage, write_wait.
  const CheckpointPhases& p = d.section.save.phases_max_over_ranks_s;
  const std::vector<std::pair<std::string, double>> parts = {{phase_label("compress"), p.compress},
                                                             {phase_label("fsync"), p.fsync},
                                                             {phase_label("stage"), p.stage},
                                                             {phase_label("write_wait"), p.write_wait}};
  o += render_stacked_bar("checkpoint", "Checkpoint phases (max over ranks; phases overlap when double-buffered)",
                          parts, "s");
  // The figures with their units, as `ioprobe report FILE` prints them (save, raw write,
  // comparison, restore); the JSON keeps every raw value.
  o += "<pre class=\"text\">" + html_escape(render_checkpoint_text(d)) + "</pre>\n";
  return o;
}

// A run's or tune's figures as the HTML comparison shows them: a run's results, a tune's fastest
// run and its sweep's elapsed time. None where the document has no such figure (a tune's AU and
// num_workers, a merged run's AU, a tune without a finished run).
struct ComparedFiguresHtml {
  std::optional<double> samples_per_s, bytes_per_s, au, p50_us, p99_us, num_workers, elapsed_s;
};

ComparedFiguresHtml result_figures(const LoaderResult& r) {
  const ResultRates x = result_rates(r);
  auto us = [&](double p) { return static_cast<double>(r.file_latency.percentile(p)) / 1e3; };
  return {.samples_per_s = x.samples_per_s,
          .bytes_per_s = x.bytes_per_s,
          .p50_us = us(50),
          .p99_us = us(99),
          .elapsed_s = x.elapsed_s};
}

// Figures compared across documents: label, the figure, its scale.
std::string comparison(const std::vector<json>& docs) {
  struct Fig {
    const char* label;
    std::optional<double> ComparedFiguresHtml::*value;
    double scale;
    std::optional<LatencyMeasure> measure;  // a latency row: only the documents that measured it so
  };
  using F = ComparedFiguresHtml;
  const Fig figs[] = {{"samples/s", &F::samples_per_s, 1},
                      {"MB/s (10^6 B/s)", &F::bytes_per_s, 1e-6},
                      {"AU %", &F::au, 100},
                      {"file latency p50 µs", &F::p50_us, 1, LatencyMeasure::kPerFile},
                      {"file latency p99 µs", &F::p99_us, 1, LatencyMeasure::kPerFile},
                      {"read latency p50 µs", &F::p50_us, 1, LatencyMeasure::kPerRead},
                      {"read latency p99 µs", &F::p99_us, 1, LatencyMeasure::kPerRead},
                      {"num_workers", &F::num_workers, 1},
                      {"elapsed s", &F::elapsed_s, 1}};
  // The documents typed (run or tune: report refuses to compare any other kind).
  std::vector<ComparedDocument> typed;
  std::vector<ComparedFiguresHtml> figures;
  for (size_t i = 0; i < docs.size(); ++i) {
    const json& d = docs[i];
    const std::string where = fmt::format("document {}", static_cast<char>('A' + i % 26));
    if (d.contains("kind") && d["kind"] == "run") {
      const RunDocument r = run_document_from_json(d, where);
      ComparedFiguresHtml f = result_figures(r.results.loader);
      if (r.ingest.result) f.au = r.ingest.result->accelerator_utilization;
      f.num_workers = r.loader.num_workers;
      typed.push_back(compared_document(r));
      figures.push_back(f);
    } else if (d.contains("kind") && d["kind"] == "tune") {
      const TuneDocument t = tune_document_from_json(d, where);
      ComparedFiguresHtml f = t.best_run ? result_figures(*t.best_run) : ComparedFiguresHtml{};
      f.elapsed_s = t.tune.elapsed_s;
      typed.push_back(compared_document(t));
      figures.push_back(f);
    } else {
      typed.push_back(compared_document_from_json(d, where));  // refuses the kind
      figures.emplace_back();
    }
  }
  std::string o = "<h2>Comparison</h2><table class=\"grid\"><tr><th>figure</th>";
  for (size_t i = 0; i < docs.size(); ++i)
    o += fmt::format("<th>{} ({})</th>", static_cast<char>('A' + i % 26), html_escape(typed[i].kind));
  if (docs.size() == 2) o += "<th>B / A</th>";
  o += "</tr>\n";
  // What each was measured under, beside the numbers (report/compare_text.hpp).
  const MeasurementConditions cond = measurement_conditions(typed);
  for (const auto& [label, values] : {std::pair{"cache", &cond.cache}, std::pair{"target", &cond.target}}) {
    o += "<tr><th>" + std::string(label) + "</th>";
    for (const auto& v : *values) o += "<td>" + html_escape(v) + "</td>";
    o += docs.size() == 2 ? "<td></td></tr>\n" : "</tr>\n";
  }
  for (const auto& f : figs) {
    // A latency row only for the documents that measured latency so, and only if one did.
    auto measured = [&](size_t i) { return !f.measure || latency_measure(typed[i]) == *f.measure; };
    bool any = false;
    for (size_t i = 0; i < docs.size(); ++i) any = any || measured(i);
    if (!any) continue;
    std::vector<double> v;
    std::string cells;
    for (size_t i = 0; i < docs.size(); ++i) {
      const std::optional<double> x = measured(i) ? figures[i].*f.value : std::nullopt;
      v.push_back(x ? *x * f.scale : -1);
      cells += x ? fmt::format("<td>{:.1f}</td>", v.back()) : "<td>-</td>";
    }
    o += "<tr><th>" + html_escape(f.label) + "</th>" + cells;
    if (docs.size() == 2) o += v[0] > 0 && v[1] >= 0 ? fmt::format("<td>{:.2f}x</td>", v[1] / v[0]) : "<td>-</td>";
    o += "</tr>\n";
  }
  o += "</table>\n";
  if (const std::string note = latency_measure_note(typed); !note.empty())
    o += "<p class=\"note\">" + html_escape(note) + "</p>\n";
  for (const auto& w : cond.warnings) o += "<p class=\"warn\">" + html_escape(w) + "</p>\n";
  return o;
}

}  // namespace

std::string render_html_report(const std::vector<json>& docs) {
  // The page skeleton is the template reports/report.html.mustache (compiled in by CMake); the
  // sections' tables and SVG charts are drawn above and inserted unescaped ({{{ }}}), every other
  // value is escaped by the template engine.
  using kainjow::mustache::data;
  data page;
  page.set("comparison", docs.size() > 1 ? comparison(docs) : std::string());
  data documents{data::type::list};
  for (size_t i = 0; i < docs.size(); ++i) {
    const json& d = docs[i];
    // The page's header, read strictly: a missing or mistyped field is refused naming its path.
    const std::string where = docs.size() > 1 ? fmt::format("document {}", static_cast<char>('A' + i % 26))
                                              : "document";
    const std::string kind = json_field<std::string>(d, "kind", where);
    const RunHeader header = header_from_json(d, kind.c_str(), where);
    const auto partial = json_field<bool>(d, "partial", where);
    const auto warning_texts = json_field<std::vector<std::string>>(d, "warnings", where);
    std::string cmd;
    for (const auto& a : header.command) cmd += (cmd.empty() ? "" : " ") + a;
    std::string body;
    try {
      if (kind == "run") body = run_section(run_document_from_json(d, "run document"));
      else if (kind == "tune") body = tune_section(tune_document_from_json(d, "tune document"));
      else if (kind == "capacity") body = render_capacity_html(capacity_document_from_json(d, "capacity document"));
      else if (kind == "checkpoint") body = checkpoint_section(checkpoint_document_from_json(d, "checkpoint document"));
      else if (kind == "raw") body = raw_section(raw_document_from_json(d, "raw document"));
      else if (kind == "probe")
        body = "<pre class=\"text\">" + html_escape(render_probe_text(probe_document_from_json(d, "probe document"))) +
               "</pre>\n";
      else if (kind == "scaling")
        body = "<pre class=\"text\">" +
               html_escape(render_scaling_text(scaling_document_from_json(d, "scaling document"))) + "</pre>\n";
      else if (kind == "replay")
        body = "<pre class=\"text\">" +
               html_escape(render_replay_text(replay_document_from_json(d, "replay document"))) + "</pre>\n";
      else
        for (const auto& [k, v] : d.items())
          if (v.is_object() && k != "host") body += scalars_table(k, v);
    } catch (const json::exception& e) {
      body = "<p class=\"warn\">This document lacks fields the " + html_escape(kind) +
             " section needs: " + html_escape(e.what()) + "</p>\n";
    } catch (const UsageError& e) {  // a typed document (run, capacity, checkpoint) refused, naming the field
      body = "<p class=\"warn\">This document lacks fields the " + html_escape(kind) +
             " section needs: " + html_escape(e.what()) + "</p>\n";
    }
    data doc;
    doc.set("kind", kind);
    doc.set("letter", docs.size() > 1 ? fmt::format("{}: ", static_cast<char>('A' + i % 26)) : std::string());
    doc.set("partial", data(partial));
    doc.set("command", cmd);
    doc.set("version", header.ioprobe_version);
    doc.set("created_utc", header.created_utc);
    doc.set("hostname", header.host.hostname);
    doc.set("body", body);
    data warnings{data::type::list};
    for (const auto& w : warning_texts) {
      data item;
      item.set("text", w);
      warnings.push_back(item);
    }
    doc.set("has_warnings", data(!warning_texts.empty()));
    doc.set("warnings", warnings);
    documents.push_back(doc);
  }
  page.set("documents", documents);
  kainjow::mustache::mustache tmpl{std::string(kHtmlReportTemplate)};
  if (!tmpl.is_valid()) throw std::logic_error("reports/report.html.mustache: " + tmpl.error_message());
  return tmpl.render(page);
}

}  // namespace ioprobe
