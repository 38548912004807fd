// A self-contained HTML page (inline CSS and SVG, no scripts, no external resources) rendered from
// one or more result documents. Dispatches on doc["kind"]:
//   run         key figures; throughput over time (samples/s per timeline interval, the warm-up
//               interval and stalls, where the consumer waited > half the interval, shaded);
//               per-file latency percentiles (log scale)
//   tune        the points table; samples/s against num_workers per (prefetch_factor, numa) with the
//               GPUs' demand line, knee and recommendation marked; the recommendation; the best run's
//               throughput and latency charts
//   checkpoint  phases as one stacked bar, from checkpoint.phases {stage_s, compress_s, write_s, fsync_s}
//               (any subset; other numeric keys of "phases" are drawn too), and the scalar figures of
//               "checkpoint" and "results" (e.g. time_to_staged_s, time_to_durable_s, bytes_per_s)
//   raw         IOPS, MB/s, latency percentiles and CPU per I/O; the per-I/O latency chart; the text report
//   probe       the text report (target, NUMA, io_uring, engine)
//   other kinds the scalar figures of each section
// Two or more documents get a side-by-side comparison table first (B/A ratios with two), with the
// cache state and target of each beside the numbers and a warning where they differ.
// The page skeleton (head, style, one <section> per document, its command line and warnings) is the
// Mustache template reports/report.html.mustache (kainjow::mustache, Debian libkainjow-mustache-dev),
// compiled into the binary by CMake; the sections' tables and SVG charts are drawn in code.
// Every string from a document goes through html_escape(). Each chart is an <svg class="chart"
// data-chart="timeline|latency|workers|checkpoint"> so tests can find it in the DOM.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// Escapes & < > " ' for HTML text and attribute values.
std::string html_escape(std::string_view s);

/// The page for `docs` (at least one). Never throws for missing optional keys; a section whose
/// required keys are absent is left out with a note. Throws std::logic_error only if the compiled-in
/// template is malformed (a build defect, caught by the unit tests).
std::string render_html_report(const std::vector<nlohmann::json>& docs);

}  // namespace ioprobe
