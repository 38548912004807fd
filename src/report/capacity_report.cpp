#include "report/capacity_report.hpp"

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/calibration_effect_report.hpp"
#include "report/html_report.hpp"
#include "report/svg_chart.hpp"
#include "report/text_common.hpp"

namespace ioprobe {

using json = nlohmann::json;

namespace {
json host_rows_json(const std::vector<CapacityHostRow>& rows) {
  json out = json::array();
  for (const auto& h : rows)
    out.push_back({{"hostname", h.hostname},
                   {"host_index", h.host_index},
                   {"mpi_ranks", h.mpi_ranks},
                   {"gpus", h.gpus},
                   {"cpus_allowed", h.cpus_allowed},
                   {"au", h.au},
                   {"au_min", h.au_min},
                   {"samples_per_s", h.samples_per_s},
                   {"bytes_per_s", h.bytes_per_s},
                   {"delivered_bytes", h.delivered_bytes},
                   {"cpu_fraction", h.cpu_fraction},
                   {"consumer_lag", h.consumer_lag},
                   {"client_bound", h.client_bound},
                   {"note", h.note}});
  return out;
}
}  // namespace

json capacity_json(const CapacityAnswer& a, const CapacitySectionInputs& in) {
  json pts = json::array();
  for (const auto& p : a.points) {
    pts.push_back({{"gpus", p.gpus},
                   {"au", p.au},
                   {"au_min", p.au_min},
                   {"samples_per_s", p.samples_per_s},
                   {"bytes_per_s", p.bytes_per_s},
                   {"repeats", p.repeats},
                   {"spread", p.spread},
                   {"demand_samples_per_s", in.samples_per_s_per_gpu * p.gpus},
                   {"cpu_fraction", p.cpu_fraction},
                   {"consumer_lag", p.consumer_lag},
                   {"worker_runq_share", p.worker_runq_share < 0 ? json(nullptr) : json(p.worker_runq_share)},
                   {"client_bound", p.client_bound},
                   {"workers_bound", p.workers_bound},
                   {"metadata_bound", p.metadata_bound},
                   {"steady", p.steady},
                   {"passed", point_passes(p, in.au_target)},
                   {"delivered_bytes", p.delivered_bytes},
                   {"note", p.note}});
    if (!p.hosts.empty()) {
      pts.back()["hosts"] = host_rows_json(p.hosts);
      pts.back()["client_host"] = p.client_host.empty() ? json(nullptr) : json(p.client_host);
    }
    if (p.decode_us_per_sample > 0) pts.back()["decode_us_per_sample"] = p.decode_us_per_sample;  // --decode jpeg
  }
  return {{"accelerator", in.accelerator},
          {"accelerator_name", in.accelerator_name},
          {"model", in.model},
          {"au_target", in.au_target},
          {"gpus_fed", a.gpus_fed},
          {"bound", a.bound},
          {"boundary_measured", a.boundary_measured},
          {"answer", a.text},
          {"samples_per_s_per_gpu", in.samples_per_s_per_gpu},
          {"sample_bytes", in.sample_bytes},
          {"point_s", in.point_s},
          {"repeats", in.repeats},
          {"budget_s", in.budget_s},
          {"elapsed_s", in.elapsed_s},
          {"max_gpus", in.max_gpus},
          {"stop_reason", in.stop_reason},
          {"points", pts}};
}

namespace {
// ", client-bound at N" (", client-bound on host X at N") when the answer's own row passed with the
// client at its limit: the table's "fed (client-bound)" row and the headline then agree.
std::string fed_client_bound(const json& c, uint64_t n) {
  if (n == 0) return "";
  for (const auto& p : c.at("points"))
    if (p.value("gpus", 0ULL) == n && p.value("client_bound", false))
      return fmt::format(", client-bound{} at {}",
                         p.contains("client_host") && p["client_host"].is_string()
                             ? " on host " + p["client_host"].get<std::string>()
                             : "",
                         n);
  return "";
}

std::string headline(const json& c) {
  const std::string bound = c.at("bound").get<std::string>();
  const uint64_t n = c.at("gpus_fed").get<uint64_t>();
  const std::string name = c.value("accelerator_name", "");
  const std::string client = bound == "client-cpu" ? "" : fed_client_bound(c, n);
  if (bound == "client-cpu") {
    // Across hosts: the host that limited the failing count N+1.
    std::string host;
    for (const auto& p : c.at("points"))
      if (p.value("gpus", 0ULL) == n + 1 && p.contains("client_host") && p["client_host"].is_string())
        host = p["client_host"].get<std::string>();
    if (n == 0)  // not even one accelerator: "at 0 x" read as an answer about the storage
      return fmt::format("client-bound{}: this client could not emulate even 1 x {} at its rate; use a client with "
                         "more CPUs, or more hosts",
                         host.empty() ? "" : " on host " + host, name);
    return fmt::format("client-bound{} at {} x {}: add hosts", host.empty() ? "" : " on host " + host, n, name);
  }
  if (bound == "workers")
    return fmt::format("worker-bound at {} x {}{}: more --workers (num_workers)", n, name, client);
  // Documents written before bound "interrupted" existed said "budget" with stop_reason "interrupted".
  if (bound == "interrupted" || (bound == "budget" && c.value("stop_reason", "") == "interrupted"))
    return c.at("points").empty()
               ? fmt::format("no count of {} measured (the search was interrupted before its first point)", name)
               : fmt::format("at least {} x {} fed{} (the search was interrupted before it finished)", n, name, client);
  if (bound == "budget")
    return fmt::format("at least {} x {} fed{} (the search's time budget ran out)", n, name, client);
  if (bound == "limit")
    return fmt::format("at least {} x {} fed{} (every count up to --max-gpus passed)", n, name, client);
  return fmt::format("{} x {} fed at AU >= {:.0f}%{} ({}-bound at {})", n, name, 100 * c.at("au_target").get<double>(),
                     client, bound, n + 1);
}
// The rule of thumb "CPU cores = 4 x GPUs" beside the CPUs the emulation used at the answer N:
// process CPU time / wall time at the point with N accelerators, per accelerator.
std::string cores_rule_text(const json& c, int cpus_allowed) {
  const uint32_t n = c.value("gpus_fed", 0u);
  if (n == 0 || cpus_allowed <= 0) return "";
  for (const auto& p : c.at("points")) {
    if (p.value("gpus", 0u) != n) continue;
    const double used = p.value("cpu_fraction", 0.0) * cpus_allowed;
    return fmt::format(
        "\nRule of thumb \"CPU cores = 4 x GPUs\": {} cores for the {} fed here; this host allows {} and "
        "the loader emulation used {:.2f} CPUs at {} ({:.2f} per accelerator, measured: process CPU "
        "time / wall time, with the per-sample cost as modelled by --cpu-per-sample or --calibration).\n",
        4 * n, n, cpus_allowed, used, n, used / n);
  }
  return "";
}

// The device reads over the bytes delivered ("1.02x"), "-" when not measured.
std::string read_ratio_text(const json& p) {
  if (!p.contains("device_io") || !p["device_io"].contains("read_ratio") || !p["device_io"]["read_ratio"].is_number())
    return "-";
  return fmt::format("{:.2f}x", p["device_io"]["read_ratio"].get<double>());
}

// Each host's share of a point measured across hosts, under the point's row.
std::string host_rows_text(const json& p) {
  std::string o;
  if (!p.contains("hosts")) return o;
  for (const auto& h : p.at("hosts")) {
    std::string ranks;
    for (const auto& r : h.at("mpi_ranks")) ranks += (ranks.empty() ? "" : ",") + std::to_string(r.get<int>());
    if (h.value("gpus", 0) == 0) {
      o += fmt::format("        {:<14} {:>3} GPUs (MPI rank {}): no accelerator at this point\n",
                       h.value("hostname", "?"), 0, ranks);
      continue;
    }
    o +=
        fmt::format("        {:<14} {:>3} GPUs (MPI rank {}): AU {:.1f}% (min {:.1f}%), {:.0f} samples/s, {:.1f} MB/s, "
                    "CPU {:.0f}% of {}, device read {}{}\n",
                    h.value("hostname", "?"), h.value("gpus", 0), ranks, 100 * h.value("au", 0.0),
                    100 * h.value("au_min", 0.0), h.value("samples_per_s", 0.0), h.value("bytes_per_s", 0.0) / 1e6,
                    100 * h.value("cpu_fraction", 0.0), h.value("cpus_allowed", 0), read_ratio_text(h),
                    h.value("client_bound", false) ? "  CLIENT-BOUND: " + h.value("note", "") : "");
  }
  return o;
}

// Each host's share of a point measured across hosts, as table rows under the point's row (the
// columns of the points table; demand, spread and repeats are the point's, left empty).
std::string host_rows_html(const json& p) {
  std::string o;
  if (!p.contains("hosts") || !p["hosts"].is_array()) return o;
  for (const auto& h : p["hosts"]) {
    std::string ranks;
    for (const auto& r : h.value("mpi_ranks", json::array()))
      if (r.is_number_integer()) ranks += (ranks.empty() ? "" : ",") + std::to_string(r.get<int>());
    const std::string name = h.value("hostname", "?");
    const std::string head = fmt::format("<tr class=\"host\" data-host=\"{}\"><th>{}: {} GPUs (MPI rank {})</th>",
                                         html_escape(name), html_escape(name), h.value("gpus", 0), html_escape(ranks));
    if (h.value("gpus", 0) == 0) {
      o += head + "<td colspan=\"9\">no accelerator at this point</td></tr>\n";
      continue;
    }
    const bool client = h.value("client_bound", false);
    o += head + fmt::format("<td>{:.1f}%</td><td>{:.1f}%</td><td>{:.0f}</td><td></td><td>{:.1f}</td><td></td>"
                            "<td>{:.0f}% of {}</td><td></td><td{}>{}</td></tr>\n",
                            100 * h.value("au", 0.0), 100 * h.value("au_min", 0.0), h.value("samples_per_s", 0.0),
                            h.value("bytes_per_s", 0.0) / 1e6, 100 * h.value("cpu_fraction", 0.0),
                            h.value("cpus_allowed", 0), client ? " class=\"warn\"" : "",
                            client ? html_escape("client-bound: " + h.value("note", "")) : "");
  }
  return o;
}

// The devices' accounting of the points: what was counted, or why nothing could be.
std::string device_note_text(const json& c) {
  for (const auto& p : c.at("points"))
    if (p.contains("device_io")) {
      const json& d = p["device_io"];
      if (d.value("source", "none") == "none")
        return fmt::format("  device I/O not measured: {}\n", d.value("reason", "?"));
      std::string names;
      for (const auto& dev : d.value("devices", json::array()))
        if (names.find(dev.value("name", "")) == std::string::npos)
          names += (names.empty() ? "" : ", ") + dev.value("name", "");
      return fmt::format("  device read: bytes the target's devices read ({}: {}{}) over the bytes the GPU ranks took, "
                         "all repeats of the point{}\n",
                         d.value("source", ""), names, d.value("hosts", 1ULL) > 1 ? ", every host's own" : "",
                         d.value("hosts", 1ULL) > 1 ? "; per host in its row" : "");
    }
  return "";
}

}  // namespace

std::string render_capacity_text(const json& doc) {
  const json& c = doc.at("capacity");
  const json& host = doc.at("host");
  std::string o;
  o += fmt::format("ioprobe {} capacity{}\n\n", doc.value("ioprobe_version", "?"),
                   doc.value("partial", false) ? fmt::format("  [PARTIAL: {}]", c.value("stop_reason", "")) : "");
  o += render_target_line(doc);
  o += render_targets(doc, "spans", 10);
  o += fmt::format("  host       {} CPUs allowed ({}) of {} online\n", host.value("cpus_allowed", 0),
                   host.value("cpu_list", ""), host.value("cpus_online", 0));
  const std::string model = c.value("model", "");  // empty: the user's own rate, no model chosen
  o += fmt::format("  per GPU    1 x {}{}: {:.1f} samples/s = {}; fed at AU >= {:.0f}%\n",
                   c.value("accelerator_name", ""), model.empty() ? "" : " (" + model + ")",
                   c.value("samples_per_s_per_gpu", 0.0),
                   format_rate(c.value("samples_per_s_per_gpu", 0.0) * c.value("sample_bytes", 0.0)),
                   100 * c.at("au_target").get<double>());
  o += render_calibration_line(doc, "loader", 10, "calibrated by ");
  if (c.contains("calibration_effect")) {  // measured: the point at the GPU ranks the effect is modelled at
    const json& eff = c["calibration_effect"];
    double rate = 0;
    for (const auto& p : c.at("points"))
      if (eff.contains("setting") && p.value("gpus", 0U) == eff["setting"].value("ranks", 0U))
        rate = p.value("samples_per_s", 0.0);
    o += render_calibration_effect_line(eff, "effect", 10, rate, "that point measured");
  }
  o += fmt::format("  search     doubling then bisection; {} repeat(s) of {} s per point; {} in {} (budget {})\n\n",
                   c.value("repeats", 0), c.value("point_s", 0.0),
                   c.at("points").size() == 1 ? "1 point" : fmt::format("{} points", c.at("points").size()),
                   format_seconds(c.value("elapsed_s", 0.0)), format_seconds(c.value("budget_s", 0.0)));
  if (doc.contains("cluster") && doc["cluster"].is_object()) {
    const json& cl = doc["cluster"];
    std::string names;
    for (const auto& n : cl.value("hostnames", json::array()))
      names += (names.empty() ? "" : ", ") + n.get<std::string>();
    o += fmt::format("  hosts      {} ({}), {} MPI ranks, {}; each point split {}\n", cl.value("hosts", 0), names,
                     cl.value("mpi_ranks", 0), cl.value("launcher", ""),
                     "evenly over the hosts, then over each host's processes");
  }
  o += fmt::format("  {:>5} {:>7} {:>7} {:>10} {:>10} {:>10} {:>7} {:>5} {:>5} {:>7}  {}\n", "GPUs", "AU", "AU min",
                   "samples/s", "demand", "MB/s", "spread", "CPU", "runs", "dev rd", "result");
  for (const auto& p : c.at("points")) {
    std::string res = p.value("passed", false) ? "fed" : "NOT fed";
    if (p.value("client_bound", false)) res += " (client-bound)";
    else if (p.value("workers_bound", false)) res += " (worker-bound)";
    else if (p.value("metadata_bound", false)) res += " (metadata-bound)";
    if (!p.value("steady", true)) res += " (no steady window)";
    if (p.contains("client_host") && p["client_host"].is_string())
      res += " on host " + p["client_host"].get<std::string>();
    o += fmt::format("  {:>5} {:>6.1f}% {:>6.1f}% {:>10.0f} {:>10.0f} {:>10.1f} {:>6.1f}% {:>4.0f}% {:>5} {:>7}  {}\n",
                     p.value("gpus", 0), 100 * p.value("au", 0.0), 100 * p.value("au_min", 0.0),
                     p.value("samples_per_s", 0.0), p.value("demand_samples_per_s", 0.0),
                     p.value("bytes_per_s", 0.0) / 1e6, 100 * p.value("spread", 0.0),
                     100 * p.value("cpu_fraction", 0.0), p.value("repeats", 0), read_ratio_text(p), res);
    o += host_rows_text(p);
  }
  o +=
      "  (AU: median over repeats of the mean over ranks; AU min: the lowest rank of any repeat; samples/s and MB/s\n"
      "   (10^6 B/s): median over repeats, from sample completion times in the steady window; CPU: process CPU time /\n"
      "   wall time / allowed CPUs, all hosts' CPUs together across hosts; dev rd: device bytes read / bytes "
      "delivered)\n";
  o += device_note_text(c) + "\n";
  for (const auto& p : c.at("points"))
    if (p.contains("decode_us_per_sample")) {
      std::string per;
      for (const auto& q : c.at("points"))
        per += fmt::format("{}{:.0f} µs at {} GPUs", per.empty() ? "" : ", ", q.value("decode_us_per_sample", 0.0),
                           q.value("gpus", 0));
      o += "  JPEG decode (libjpeg-turbo) CPU per sample on the worker threads, median of the repeats: " + per + "\n\n";
      break;
    }
  o += "Capacity: " + headline(c) + "\n";
  o += "  " + c.value("answer", "") + "\n";
  for (const auto& p : c.at("points"))
    if (!p.value("note", "").empty()) o += fmt::format("  note at {}: {}\n", p.value("gpus", 0), p.value("note", ""));
  o += cores_rule_text(c, host.value("cpus_allowed", 0));
  o += render_warnings(doc);
  return o;
}

std::string render_capacity_html(const json& doc) {
  const json& c = doc.at("capacity");
  std::string o = "<div class=\"rec\"><h3>Capacity</h3><pre>" + html_escape(headline(c)) + "</pre><p>" +
                  html_escape(c.value("answer", "")) + "</p></div>\n";
  const double target = c.at("au_target").get<double>();
  LineChart au;
  au.id = "capacity-au";
  au.title = "AU against emulated accelerators";
  au.x_label = fmt::format("{} accelerators", c.value("accelerator_name", ""));
  au.y_label = "AU % (median of repeats)";
  au.x_unit = "accelerators";
  au.y_unit = "%";
  au.hline = 100 * target;
  au.hline_label = fmt::format("AU floor {:.0f}%", 100 * target);
  SvgSeries mean{"AU (mean over ranks)", {}, true}, low{"AU (lowest rank)", {}, true};
  LineChart rate;
  rate.id = "capacity-rate";
  rate.title = "samples/s against emulated accelerators";
  rate.x_label = au.x_label;
  rate.y_label = "samples/s";
  rate.x_unit = "accelerators";
  rate.y_unit = "samples/s";
  SvgSeries got{"delivered (median of repeats)", {}, true},
      need{"demand (accelerators x per-accelerator rate)", {}, false};
  for (const auto& p : c.at("points")) {
    const double g = p.value("gpus", 0.0);
    mean.points.emplace_back(g, 100 * p.value("au", 0.0));
    low.points.emplace_back(g, 100 * p.value("au_min", 0.0));
    got.points.emplace_back(g, p.value("samples_per_s", 0.0));
    need.points.emplace_back(g, p.value("demand_samples_per_s", 0.0));
  }
  au.series = {mean, low};
  rate.series = {got, need};
  const uint64_t n = c.at("gpus_fed").get<uint64_t>();
  for (const auto& p : c.at("points"))
    if (p.value("gpus", 0ULL) == n && n > 0)
      au.marks.push_back({static_cast<double>(n), 100 * p.value("au", 0.0), "fed"});
  o += render_line_chart(au) + render_line_chart(rate);
  if (doc.contains("cluster") && doc["cluster"].is_object()) {
    const json& cl = doc["cluster"];
    std::string names;
    for (const auto& n : cl.value("hostnames", json::array()))
      if (n.is_string()) names += (names.empty() ? "" : ", ") + n.get<std::string>();
    o += fmt::format(
        "<p class=\"note\">Across {} hosts ({}), {} MPI ranks, started by {}: each point split evenly over "
        "the hosts, then over each host's processes; each host's share in the rows under the point (CPU: "
        "of that host's allowed CPUs).</p>\n",
        cl.value("hosts", 0), html_escape(names), cl.value("mpi_ranks", 0), html_escape(cl.value("launcher", "")));
  }
  o += "<table class=\"grid\"><tr><th>GPUs</th><th>AU</th><th>AU min</th><th>samples/s</th><th>demand</th><th>MB/s</th>"
       "<th>spread</th><th>CPU</th><th>repeats</th><th>fed</th></tr>\n";
  for (const auto& p : c.at("points")) {
    o += fmt::format("<tr><td>{}</td><td>{:.1f}%</td><td>{:.1f}%</td><td>{:.0f}</td><td>{:.0f}</td><td>{:.1f}</td>"
                     "<td>{:.1f}%</td><td>{:.0f}%</td><td>{}</td><td>{}</td></tr>\n",
                     p.value("gpus", 0), 100 * p.value("au", 0.0), 100 * p.value("au_min", 0.0),
                     p.value("samples_per_s", 0.0), p.value("demand_samples_per_s", 0.0),
                     p.value("bytes_per_s", 0.0) / 1e6, 100 * p.value("spread", 0.0),
                     100 * p.value("cpu_fraction", 0.0), p.value("repeats", 0),
                     html_escape(p.value("passed", false) ? "yes" : "no"));
    o += host_rows_html(p);
  }
  return o + "</table><p class=\"note\">MB/s = 10^6 B/s. Rates from sample completion times in each run's steady "
             "window.</p>\n";
}

}  // namespace ioprobe
