// Text rendering of a "tune" result document (declared in report/tune_document.hpp).
#include <fmt/format.h>

#include "report/calibration_effect_report.hpp"
#include "report/text_common.hpp"

#include "core/units.hpp"
#include "report/tune_document.hpp"

namespace ioprobe {

std::string render_tune_text(const nlohmann::json& doc) {
  std::string o;
  const auto& t = doc.at("tune");
  const auto& d = doc.at("demand");
  const auto& pts = doc.at("points");
  const auto& r = doc.at("recommendation");
  const auto& host = doc.at("host");
  const bool partial = doc.value("partial", false);
  o += fmt::format("ioprobe {} tune{}\n\n", doc.value("ioprobe_version", "?"),
                   partial ? fmt::format("  [PARTIAL: {}]", t.value("stop_reason", "")) : "");
  o += render_target_line(doc);
  o += render_targets(doc, "spans", 10);
  o += fmt::format("  host       {} CPUs allowed ({}) of {} online\n", host.value("cpus_allowed", 0),
                   host.value("cpu_list", ""), host.value("cpus_online", 0));
  const std::string model = d.value("model", "");  // empty: the user's own rate, no model chosen
  o += fmt::format("  demand     {} x {}{}: {:.0f} samples/s = {} at AU >= {:.0f}%\n", d.value("gpus", 1),
                   d.value("accelerator_name", ""), model.empty() ? "" : " (" + model + ")",
                   d.value("required_samples_per_s", 0.0), format_rate(d.value("required_bytes_per_s", 0.0)),
                   100 * d.value("au_target", 0.0));
  if (doc.contains("cluster")) {
    const auto& c = doc.at("cluster");
    o +=
        fmt::format("  across     {} host(s), {} MPI rank(s), {} GPU rank(s), started by {}; dataset {}: every setting "
                    "ran on all of them at once, its figures merged\n",
                    c.value("hosts", 0), c.value("mpi_ranks", 0), c.value("gpu_ranks", 0), c.value("launcher", "?"),
                    c.value("dataset_placement", "?"));
  }
  o += render_calibration_line(doc, "loader", 10, "calibrated by ");
  {  // measured: the recommended setting's rate, the one the effect is modelled at
    const size_t i = r.value("point", size_t{0});
    const double rate = r.value("valid", false) && i < pts.size() &&
                                pts[i].value("samples_per_s", nlohmann::json()).is_number()
                            ? pts[i]["samples_per_s"].get<double>()
                            : 0;
    o += render_calibration_effect_line(t.value("calibration_effect", nlohmann::json()), "effect", 10, rate,
                                        "the recommended setting measured");
  }
  o += fmt::format("  sweep      {} runs of {} s ({} repeats per setting) in {}; NUMA: {}\n", t.value("runs_done", 0),
                   t.value("run_s", 0.0), t.value("repeats", 0), format_seconds(t.value("elapsed_s", 0.0)),
                   t.value("placements_reason", ""));
  {  // Settings whose runs were lengthened past run_s for long GPU steps (sweep.hpp lengthen_runs).
    std::string longer;
    for (const auto& p : pts)
      if (p.value("run_s", 0.0) > t.value("run_s", 0.0) + 1e-9 &&
          longer.find(fmt::format("num_workers={}:", p.value("num_workers", 0))) == std::string::npos)
        longer += fmt::format("{}num_workers={}: {} s", longer.empty() ? "" : ", ", p.value("num_workers", 0),
                              p.value("run_s", 0.0));
    if (!longer.empty())
      o += fmt::format("  lengthened {} per run, so that the steady window holds {} batches per worker at the GPU "
                       "step of {:.3f} s (after {:.0f} s of warm-up)\n",
                       longer, kSteadyBatchesPerWorker,
                       doc.value("loader", nlohmann::json::object()).value("step_time_s", 0.0), kMinWarmupS);
  }
  if (doc.contains("best_run") && doc["best_run"].contains("decode")) {  // --decode jpeg
    const auto& dc = doc["best_run"]["decode"];
    o += fmt::format(
        "  decode     JPEG (libjpeg-turbo) on the worker threads: {:.1f} µs CPU per sample, measured in the "
        "fastest run ({:.1f} µs per megapixel)\n",
        dc.value("cpu_us_per_sample", 0.0), dc.value("us_per_megapixel", 0.0));
  }
  o += "\n";

  o += fmt::format("  {:>7} {:>8} {:<7} {:>10} {:>8} {:>10} {:>6} {:>9} {:>5}\n", "workers", "prefetch", "numa",
                   "samples/s", "spread", "MB/s", "AU", "CPU used", "runs");
  const size_t knee = r.value("knee", size_t{0}), rec = r.value("point", size_t{0});
  // A sweep that stopped early (interrupted, budget): the recommendation is from what it measured.
  size_t measured = 0;
  for (const auto& p : pts) measured += tune_point_measured(p);
  const bool cut_short = measured < pts.size();
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto& p = pts[i];
    if (!tune_point_measured(p)) continue;  // counted below
    std::string mark = r.value("valid", false) ? (i == rec ? "  <- recommended" : i == knee ? "  <- knee" : "") : "";
    if (r.value("valid", false) && i == rec && i == knee) mark = "  <- recommended (knee)";
    if (cut_short && r.value("valid", false) && i == rec)
      mark += fmt::format(", of the {} of {} settings measured", measured, pts.size());
    if (p.value("steady_runs", 1) == 0) mark = "  (no steady state: not used)";
    // One run has no spread to show: "-", not a measured 0.0%.
    const std::string spread = p.value("repeats", 0) > 1 ? fmt::format("{:.1f}%", 100 * p.value("spread", 0.0)) : "-";
    o += fmt::format("  {:>7} {:>8} {:<7} {:>10.0f} {:>8} {:>10.1f} {:>5.1f}% {:>9.2f} {:>5}{}\n",
                     p.value("num_workers", 0), p.value("prefetch_factor", 0), p.value("numa", ""),
                     p.value("samples_per_s", 0.0), spread, p.value("bytes_per_s", 0.0) / 1e6, 100 * p.value("au", 0.0),
                     p.value("cpu_used", 0.0), p.value("repeats", 0), mark);
  }
  size_t unmeasured = 0;
  std::string which;
  for (const auto& p : pts) {
    if (tune_point_measured(p)) continue;
    if (++unmeasured <= 4)
      which += fmt::format("{}workers={} prefetch={} numa={}", which.empty() ? "" : "; ", p.value("num_workers", 0),
                           p.value("prefetch_factor", 0), p.value("numa", ""));
  }
  if (unmeasured)
    o += fmt::format("  NOT MEASURED: {} of {} settings ({}{}): the sweep stopped ({}) before they ran; they are left\n"
                     "  out of the table and marked \"not measured\" (no figures) in the JSON and CSV\n",
                     unmeasured, pts.size(), which, unmeasured > 4 ? "; ..." : "", t.value("stop_reason", "?"));
  o += "  (samples/s and MB/s (10^6 B/s): median of the repeats in steady state, from sample completion times;\n"
       "   spread = (max - min) / median, \"-\" with one run;\n"
       "   AU = GPU compute / (compute + wait for data); CPU used = CPUs busy on average)\n\n";

  if (!r.value("valid", false)) {
    o += measured == 0 && cut_short
             ? fmt::format("Recommendation: none (the sweep stopped ({}) before any setting was measured)\n",
                           t.value("stop_reason", "?"))
             : std::string(
                   "Recommendation: none (no setting reached a steady state: raise --point-time or --budget)\n");
    for (const auto& n : r.at("notes")) o += "  WARNING: " + n.get<std::string>() + "\n";
  } else {
    const auto& kp = pts[knee];
    const auto& bp = pts[r.value("best", size_t{0})];
    o += fmt::format("Knee: num_workers={} prefetch_factor={} ({:.0f} samples/s, within {:.0f}% of the best {:.0f})\n",
                     kp.value("num_workers", 0), kp.value("prefetch_factor", 0), kp.value("samples_per_s", 0.0),
                     100 * r.value("tolerance", 0.0), bp.value("samples_per_s", 0.0));
    if (r.value("meets_demand", false))
      o += fmt::format("Demand met: the smallest setting that feeds the GPUs (AU >= {:.0f}%) is below.\n",
                       100 * d.value("au_target", 0.0));
    else
      o += fmt::format(
          "Demand NOT met: best {:.0f} samples/s ({}) vs {:.0f} needed: short by {:.0f} samples/s ({:.0f}%).\n",
          bp.value("samples_per_s", 0.0), format_rate(bp.value("bytes_per_s", 0.0)),
          d.value("required_samples_per_s", 0.0), r.value("shortfall_samples_per_s", 0.0),
          d.value("required_samples_per_s", 0.0) > 0
              ? 100 * r.value("shortfall_samples_per_s", 0.0) / d.value("required_samples_per_s", 1.0)
              : 0.0);
    o += cut_short
             ? fmt::format("\nRecommendation (per GPU rank), from the {} of {} settings measured before the sweep "
                           "stopped ({}); the others were not run and may be better:\n",
                           measured, pts.size(), t.value("stop_reason", "?"))
             : std::string("\nRecommendation (per GPU rank):\n");
    o += "  " + r.value("dataloader", "") + "\n";
    if (!r.value("pin_memory_note", "").empty()) o += "  pin_memory: " + r.value("pin_memory_note", "") + "\n";
    if (!r.value("numactl", "").empty()) o += "  " + r.value("numactl", "") + "\n";
    o += "  NUMA: " + r.value("numa_reason", "") + "\n";
    for (const auto& n : r.at("notes")) o += "  WARNING: " + n.get<std::string>() + "\n";
  }
  for (const auto& rule : doc.value("rules", nlohmann::json::array())) {
    o += fmt::format("\nRule of thumb \"{}\": {} workers here ({} CPUs); ", rule.value("rule", ""),
                     rule.value("value", 0), host.value("cpus_allowed", 0));
    // In the sweep's plan: from the document, or (older documents) from its points.
    bool in_sweep = false;
    for (const auto& p : pts) in_sweep = in_sweep || p.value("num_workers", 0) == rule.value("value", 0);
    in_sweep = rule.value("in_sweep", in_sweep);
    if (!rule.value("measured", false) || rule.at("best_samples_per_s").is_null())
      o += rule.value("swept", false)
               ? "swept, but its runs reached no steady state, so no figure is claimed (raise --point-time).\n"
           : in_sweep ? fmt::format("in the sweep but not measured (the sweep stopped before it: {}).\n",
                                    t.value("stop_reason", "?"))
                      : "not in the sweep, so not measured (add it with --workers).\n";
    else
      o += fmt::format("measured {:.0f} samples/s there against {:.0f} at the best setting (num_workers={}): {}.\n",
                       rule.at("samples_per_s").get<double>(), rule.at("best_samples_per_s").get<double>(),
                       rule.at("best_num_workers").get<int>(),
                       rule.value("holds", false) ? "the rule's setting is as good, within the noise"
                                                  : "the rule's setting is slower");
  }
  o += render_warnings(doc);
  return o;
}

nlohmann::json sweep_cluster_json(const std::string& launcher, int hosts, int mpi_ranks, uint32_t gpu_ranks,
                                  const std::string& placement, const std::string& placement_how) {
  return {{"launcher", launcher},
          {"hosts", hosts},
          {"mpi_ranks", mpi_ranks},
          {"gpu_ranks", gpu_ranks},
          {"dataset_placement", placement},
          {"dataset_placement_how", placement_how},
          {"merge", "each setting's run on every process at once from a common start barrier; samples and bytes "
                    "summed, timelines added interval by interval, latency histograms added bucket by bucket"}};
}

}  // namespace ioprobe
