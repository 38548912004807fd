// Text rendering of a "tune" result document (declared in report/tune_document.hpp).
#include <fmt/format.h>

#include "report/calibration_effect_report.hpp"
#include "report/text_common.hpp"

#include "core/units.hpp"
#include "report/tune_document.hpp"

namespace ioprobe {

namespace {

// The rule's num_workers was in the sweep's plan: from the document, the rule's in_sweep.
std::string tune_rule_line(const TuneRule& rule, int cpus_allowed, const std::string& stop_reason) {
  std::string o = fmt::format("\nRule of thumb \"{}\": {} workers here ({} CPUs); ", rule.rule, rule.value,
                              cpus_allowed);
  if (!rule.measured || !rule.best_samples_per_s || !rule.samples_per_s || !rule.best_num_workers)
    o += rule.swept ? "swept, but its runs reached no steady state, so no figure is claimed (raise --point-time).\n"
         : rule.in_sweep
             ? fmt::format("in the sweep but not measured (the sweep stopped before it: {}).\n", stop_reason)
             : "not in the sweep, so not measured (add it with --workers).\n";
  else
    o += fmt::format("measured {:.0f} samples/s there against {:.0f} at the best setting (num_workers={}): {}.\n",
                     *rule.samples_per_s, *rule.best_samples_per_s, *rule.best_num_workers,
                     rule.holds ? "the rule's setting is as good, within the noise" : "the rule's setting is slower");
  return o;
}

}  // namespace

std::string render_tune_text(const TuneDocument& doc) {
  std::string o;
  const TuneSweepSection& t = doc.tune;
  const TuneDemandSection& d = doc.demand;
  const std::vector<TunePointEntry>& pts = doc.points;
  const Recommendation& r = doc.recommendation;
  const HostSection& host = doc.header.host;
  const int cpus_allowed = host.cpus_allowed;
  o += fmt::format("ioprobe {} tune{}\n\n", doc.header.ioprobe_version,
                   doc.partial ? fmt::format("  [PARTIAL: {}]", to_string(t.stop)) : "");
  o += render_target_line(doc.target, doc.dataset);
  o += render_target_rows(doc.targets, "spans", 10);
  o += fmt::format("  host       {} CPUs allowed ({}) of {} online\n", cpus_allowed, host.cpu_list, host.cpus_online);
  const std::string& model = d.demand.model;  // empty: the user's own rate, no model chosen
  o += fmt::format("  demand     {} x {}{}: {:.0f} samples/s = {} at AU >= {:.0f}%\n", d.demand.gpus,
                   d.demand.accelerator_name, model.empty() ? "" : " (" + model + ")", d.required_samples_per_s,
                   format_rate(d.required_bytes_per_s), 100 * d.demand.au_target);
  if (const auto& c = doc.cluster)
    o +=
        fmt::format("  across     {} host(s), {} MPI rank(s), {} GPU rank(s), started by {}; dataset {}: every setting "
                    "ran on all of them at once, its figures merged\n",
                    c->hosts, c->mpi_ranks, c->gpu_ranks, c->launcher, c->dataset_placement);
  if (const auto& cal = doc.loader.consumer.calibration)
    o += fmt::format("  {:<{}} {}{} ({}:{} on {}, torch {}, batch size {})\n", "loader", 10, "calibrated by ",
                     cal->file, cal->code, cal->function, cal->host, cal->torch_version, cal->batch_size);
  if (t.calibration_effect) {  // measured: the recommended setting's rate, the one the effect is modelled at
    const size_t i = r.point;
    const double rate = r.valid && i < pts.size() && tune_point_measured(pts[i]) ? pts[i].point.samples_per_s : 0;
    o += render_calibration_effect_line(t.calibration_effect, "effect", 10, rate, "the recommended setting measured");
  }
  o += fmt::format("  sweep      {} runs of {} s ({} repeat(s) per setting) in {}; NUMA: {}\n", t.runs_done, t.run_s,
                   t.repeats, format_seconds(t.elapsed_s), t.placements_reason);
  {  // Settings whose runs were lengthened past run_s for long GPU steps (sweep.hpp lengthen_runs).
    std::string longer;
    for (const auto& e : pts)
      if (e.point.run_s > t.run_s + 1e-9 &&
          longer.find(fmt::format("num_workers={}:", e.point.num_workers)) == std::string::npos)
        longer += fmt::format("{}num_workers={}: {} s", longer.empty() ? "" : ", ", e.point.num_workers, e.point.run_s);
    if (!longer.empty())
      o += fmt::format("  lengthened {} per run, so that the steady window holds {} batches per worker at the GPU "
                       "step of {:.3f} s (after {:.0f} s of warm-up)\n",
                       longer, kSteadyBatchesPerWorker, doc.loader.step_time_s, kMinWarmupS);
  }
  if (doc.best_run) {
    if (const auto dc = decode_totals(*doc.best_run))  // --decode jpeg
      o += fmt::format(
          "  decode     JPEG (libjpeg-turbo) on the worker threads: {:.1f} µs CPU per sample, measured in the "
          "fastest run ({:.1f} µs per megapixel)\n",
          dc->cpu_us_per_sample, dc->us_per_megapixel);
  }
  o += "\n";

  o += fmt::format("  {:>7} {:>8} {:<7} {:>10} {:>8} {:>10} {:>10} {:>6} {:>9} {:>5}\n", "workers", "prefetch", "numa",
                   "samples/s", "spread", "MB/s", "MiB/s", "AU", "CPU used", "runs");
  const size_t knee = r.knee, rec = r.point;
  // A sweep that stopped early (interrupted, budget): the recommendation is from what it measured.
  size_t measured = 0;
  for (const auto& e : pts) measured += tune_point_measured(e);
  const bool cut_short = measured < pts.size();
  for (size_t i = 0; i < pts.size(); ++i) {
    if (!tune_point_measured(pts[i])) continue;  // counted below
    const TunePoint& p = pts[i].point;
    std::string mark = r.valid ? (i == rec ? "  <- recommended" : i == knee ? "  <- knee" : "") : "";
    if (r.valid && i == rec && i == knee) mark = "  <- recommended (knee)";
    if (cut_short && r.valid && i == rec)
      mark += fmt::format(", of the {} of {} settings measured", measured, pts.size());
    if (p.steady_runs == 0) mark = "  (no steady state: not used)";
    // One run has no spread to show: "-", not a measured 0.0%.
    const std::string spread = p.runs.size() > 1 ? fmt::format("{:.1f}%", 100 * p.spread) : "-";
    o += fmt::format("  {:>7} {:>8} {:<7} {:>10.0f} {:>8} {:>10.1f} {:>10.1f} {:>5.1f}% {:>9.2f} {:>5}{}\n",
                     p.num_workers, p.prefetch_factor, p.numa, p.samples_per_s, spread, p.bytes_per_s / 1e6,
                     p.bytes_per_s / 1048576.0, 100 * p.au, p.cpu_used, p.runs.size(), mark);
  }
  size_t unmeasured = 0;
  std::string which;
  for (const auto& e : pts) {
    if (tune_point_measured(e)) continue;
    if (++unmeasured <= 4)
      which += fmt::format("{}workers={} prefetch={} numa={}", which.empty() ? "" : "; ", e.point.num_workers,
                           e.point.prefetch_factor, e.point.numa);
  }
  if (unmeasured)
    o += fmt::format("  NOT MEASURED: {} of {} settings ({}{}): the sweep stopped ({}) before they ran; they are left\n"
                     "  out of the table and marked \"not measured\" (no figures) in the JSON and CSV\n",
                     unmeasured, pts.size(), which, unmeasured > 4 ? "; ..." : "", to_string(t.stop));
  o += "  (samples/s, MB/s (10^6 B/s) and MiB/s (2^20 B/s): median of the repeats in steady state, from sample "
       "completion times;\n"
       "   spread = (max - min) / median, \"-\" with one run;\n"
       "   AU = GPU compute / (compute + wait for data); CPU used = CPUs busy on average)\n\n";

  if (!r.valid) {
    o += measured == 0 && cut_short
             ? fmt::format("Recommendation: none (the sweep stopped ({}) before any setting was measured)\n",
                           to_string(t.stop))
             : std::string(
                   "Recommendation: none (no setting reached a steady state: raise --point-time or --budget)\n");
    for (const auto& n : r.notes) o += "  WARNING: " + n + "\n";
  } else {
    const TunePoint& kp = pts[knee].point;
    const TunePoint& bp = pts[r.best].point;
    o += fmt::format("Knee: num_workers={} prefetch_factor={} ({:.0f} samples/s, within {:.0f}% of the best {:.0f})\n",
                     kp.num_workers, kp.prefetch_factor, kp.samples_per_s, 100 * r.tolerance, bp.samples_per_s);
    if (r.meets_demand)
      o += fmt::format("Demand met: the smallest setting that feeds the GPUs (AU >= {:.0f}%) is below.\n",
                       100 * d.demand.au_target);
    else
      o += fmt::format(
          "Demand NOT met: best {:.0f} samples/s ({}) vs {:.0f} needed: short by {:.0f} samples/s ({:.0f}%).\n",
          bp.samples_per_s, format_rate(bp.bytes_per_s), d.required_samples_per_s, r.shortfall_samples_per_s,
          d.required_samples_per_s > 0 ? 100 * r.shortfall_samples_per_s / d.required_samples_per_s : 0.0);
    o += cut_short
             ? fmt::format("\nRecommendation (per GPU rank), from the {} of {} settings measured before the sweep "
                           "stopped ({}); the others were not run and may be better:\n",
                           measured, pts.size(), to_string(t.stop))
             : std::string("\nRecommendation (per GPU rank):\n");
    o += "  " + r.dataloader + "\n";
    if (!r.pin_memory_note.empty()) o += "  pin_memory: " + r.pin_memory_note + "\n";
    if (!r.numactl.empty()) o += "  " + r.numactl + "\n";
    o += "  NUMA: " + r.numa_reason + "\n";
    for (const auto& n : r.notes) o += "  WARNING: " + n + "\n";
  }
  for (const auto& rule : doc.rules) o += tune_rule_line(rule, cpus_allowed, to_string(t.stop));
  if (!doc.warnings.empty()) {
    o += "\nWarnings\n";
    for (const auto& w : doc.warnings) o += "  - " + w + "\n";
  }
  return o;
}

TuneClusterSection tune_cluster_section(const std::string& launcher, int hosts, int mpi_ranks, uint32_t gpu_ranks,
                                        const std::string& placement, const std::string& placement_how) {
  return {.launcher = launcher,
          .hosts = hosts,
          .mpi_ranks = mpi_ranks,
          .gpu_ranks = gpu_ranks,
          .dataset_placement = placement,
          .dataset_placement_how = placement_how,
          .merge = "each setting's run on every process at once from a common start barrier; samples and bytes "
                   "summed, timelines added interval by interval, latency histograms added bucket by bucket"};
}

}  // namespace ioprobe
