#include "report/capacity_report.hpp"

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/calibration_effect_report.hpp"
#include "report/device_io_report.hpp"
#include "report/html_report.hpp"
#include "report/svg_chart.hpp"
#include "report/text_common.hpp"

namespace ioprobe {

using json = nlohmann::json;

namespace {

// The point of `gpus` accelerators, or null when the search did not measure it.
const CapacityPoint* point_at(const CapacitySection& c, uint64_t gpus) {
  const CapacityPoint* found = nullptr;
  for (const auto& p : c.answer.points)
    if (p.gpus == gpus) found = &p;
  return found;
}

// ", client-bound at N" (", client-bound on host X at N") when the answer's own row passed with the
// client at its limit: the table's "fed (client-bound)" row and the headline then agree.
std::string fed_client_bound(const CapacitySection& c, uint64_t n) {
  if (n == 0) return "";
  for (const auto& p : c.answer.points)
    if (p.gpus == n && p.client_bound)
      return fmt::format(", client-bound{} at {}", p.client_host.empty() ? "" : " on host " + p.client_host, n);
  return "";
}

std::string headline(const CapacitySection& c) {
  const std::string& bound = c.answer.bound;
  const uint64_t n = c.answer.gpus_fed;
  const std::string& name = c.in.accelerator_name;
  const std::string client = bound == "client-cpu" ? "" : fed_client_bound(c, n);
  if (bound == "client-cpu") {
    // Across hosts: the host that limited the failing count N+1.
    std::string host;
    for (const auto& p : c.answer.points)
      if (p.gpus == n + 1 && !p.client_host.empty()) host = p.client_host;
    if (n == 0)  // not even one accelerator: "at 0 x" read as an answer about the storage
      return fmt::format("client-bound{}: this client could not emulate even 1 x {} at its rate; use a client with "
                         "more CPUs, or more hosts",
                         host.empty() ? "" : " on host " + host, name);
    return fmt::format("client-bound{} at {} x {}: add hosts", host.empty() ? "" : " on host " + host, n, name);
  }
  if (bound == "workers")
    return fmt::format("worker-bound at {} x {}{}: more --workers (num_workers)", n, name, client);
  // Documents written before bound "interrupted" existed said "budget" with stop_reason "interrupted".
  if (bound == "interrupted" || (bound == "budget" && c.in.stop == CapacityStop::kInterrupted))
    return c.answer.points.empty()
               ? fmt::format("no count of {} measured (the search was interrupted before its first point)", name)
               : fmt::format("at least {} x {} fed{} (the search was interrupted before it finished)", n, name, client);
  if (bound == "budget")
    return fmt::format("at least {} x {} fed{} (the search's time budget ran out)", n, name, client);
  if (bound == "limit")
    return fmt::format("at least {} x {} fed{} (every count up to --max-gpus passed)", n, name, client);
  return fmt::format("{} x {} fed at AU >= {:.0f}%{} ({}-bound at {})", n, name, 100 * c.in.au_target, client, bound,
                     n + 1);
}

// The rule of thumb "CPU cores = 4 x GPUs" beside the CPUs the emulation used at the answer N:
// process CPU time / wall time at the point with N accelerators, per accelerator.
std::string cores_rule_text(const CapacitySection& c, int cpus_allowed) {
  const uint32_t n = c.answer.gpus_fed;
  if (n == 0 || cpus_allowed <= 0) return "";
  for (const auto& p : c.answer.points) {
    if (p.gpus != n) continue;
    const double used = p.cpu_fraction * cpus_allowed;
    return fmt::format(
        "\nRule of thumb \"CPU cores = 4 x GPUs\": {} cores for the {} fed here; this host allows {} and "
        "the loader emulation used {:.2f} CPUs at {} ({:.2f} per accelerator, measured: process CPU "
        "time / wall time, with the per-sample cost as modelled by --cpu-per-sample or --calibration).\n",
        4 * n, n, cpus_allowed, used, n, used / n);
  }
  return "";
}

// The device reads over `delivered` bytes ("1.02x"), "-" when not measured (`io` null or nothing
// counted).
std::string read_ratio_text(const DeviceIo* io, uint64_t delivered) {
  if (io == nullptr) return "-";
  const json d = device_io_json(*io, DeviceRef::kRead, delivered);
  if (!d["read_ratio"].is_number()) return "-";
  return fmt::format("{:.2f}x", d["read_ratio"].get<double>());
}

// The devices' accounting of point `p`, all hosts (`host` < 0) or one host's; null when none.
const DeviceIo* point_device_io(const CapacitySection& c, const CapacityPoint& p, int host = -1) {
  const auto it = c.device_io.find(p.gpus);
  if (it == c.device_io.end()) return nullptr;
  if (host < 0) return &it->second.all;
  const auto h = it->second.hosts.find(host);
  return h == it->second.hosts.end() ? nullptr : &h->second;
}

std::string mpi_ranks_text(const CapacityHostRow& h) {
  std::string ranks;
  for (const int r : h.mpi_ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
  return ranks;
}

// Each host's share of a point measured across hosts, under the point's row.
std::string host_rows_text(const CapacitySection& c, const CapacityPoint& p) {
  std::string o;
  for (const auto& h : p.hosts) {
    const std::string ranks = mpi_ranks_text(h);
    if (h.gpus == 0) {
      o += fmt::format("        {:<14} {:>3} GPUs (MPI rank {}): no accelerator at this point\n", h.hostname, 0, ranks);
      continue;
    }
    o += fmt::format("        {:<14} {:>3} GPUs (MPI rank {}): AU {:.1f}% (min {:.1f}%), {:.0f} samples/s, {}, "
                     "CPU {:.0f}% of {}, device read {}{}\n",
                     h.hostname, h.gpus, ranks, 100 * h.au, 100 * h.au_min, h.samples_per_s, format_rate(h.bytes_per_s),
                     100 * h.cpu_fraction, h.cpus_allowed,
                     read_ratio_text(point_device_io(c, p, h.host_index), h.delivered_bytes),
                     h.client_bound ? "  CLIENT-BOUND: " + h.note : "");
  }
  return o;
}

// Each host's share of a point measured across hosts, as table rows under the point's row (the
// columns of the points table; demand, spread and repeats are the point's, left empty).
std::string host_rows_html(const CapacityPoint& p) {
  std::string o;
  for (const auto& h : p.hosts) {
    const std::string head = fmt::format("<tr class=\"host\" data-host=\"{}\"><th>{}: {} GPUs (MPI rank {})</th>",
                                         html_escape(h.hostname), html_escape(h.hostname), h.gpus,
                                         html_escape(mpi_ranks_text(h)));
    if (h.gpus == 0) {
      o += head + "<td colspan=\"9\">no accelerator at this point</td></tr>\n";
      continue;
    }
    o += head + fmt::format("<td>{:.1f}%</td><td>{:.1f}%</td><td>{:.0f}</td><td></td><td>{:.1f}</td><td></td>"
                            "<td>{:.0f}% of {}</td><td></td><td{}>{}</td></tr>\n",
                            100 * h.au, 100 * h.au_min, h.samples_per_s, h.bytes_per_s / 1e6, 100 * h.cpu_fraction,
                            h.cpus_allowed, h.client_bound ? " class=\"warn\"" : "",
                            h.client_bound ? html_escape("client-bound: " + h.note) : "");
  }
  return o;
}

// The devices' accounting of the points: what was counted, or why nothing could be.
std::string device_note_text(const CapacitySection& c) {
  for (const auto& p : c.answer.points)
    if (const DeviceIo* d = point_device_io(c, p)) {
      if (!d->measured()) return fmt::format("  device I/O not measured: {}\n", d->reason);
      std::string names;
      for (const auto& dev : d->devices)
        if (names.find(dev.name) == std::string::npos) names += (names.empty() ? "" : ", ") + dev.name;
      return fmt::format("  device read: bytes the target's devices read ({}: {}{}) over the bytes the GPU ranks took, "
                         "all repeats of the point{}\n",
                         d->source, names, d->hosts > 1 ? ", every host's own" : "",
                         d->hosts > 1 ? "; per host in its row" : "");
    }
  return "";
}

// "  loader     num_workers=W batch_size=B prefetch_factor=P per GPU rank" (the setting every point
// ran with), and with --calibration "  calibration FILE (CODE:FUNC on HOST, torch V, batch size B)".
std::string capacity_loader_lines(const CapacityDocument& doc) {
  const CapacityLoaderSection& l = doc.loader;
  std::string o = fmt::format("  {:<10} num_workers={} batch_size={} prefetch_factor={} per GPU rank, every point "
                              "(`ioprobe tune` finds the best setting)\n",
                              "loader", l.num_workers, l.batch_size, l.prefetch_factor);
  if (const auto& cal = l.consumer.calibration)
    o += fmt::format("  {:<10} {} ({}:{} on {}, torch {}, batch size {})\n", "calibrated", cal->file, cal->code,
                     cal->function, cal->host, cal->torch_version, cal->batch_size);
  return o;
}

std::string capacity_calibration_effect(const CapacitySection& c) {
  if (!c.calibration_effect) return "";
  // Measured: the point at the GPU ranks the effect is modelled at.
  const CapacityPoint* p = point_at(c, c.calibration_effect->ranks);
  return render_calibration_effect_line(c.calibration_effect, "effect", 10, p ? p->samples_per_s : 0.0,
                                        "that point measured");
}

std::string cluster_hostnames(const CapacityClusterSection& cluster) {
  std::string names;
  for (const auto& n : cluster.hostnames) names += (names.empty() ? "" : ", ") + n;
  return names;
}

// A point's spread over its repeats, "-" with one repeat (it has none), as the tune table.
std::string spread_text(const CapacityPoint& p) { return p.repeats > 1 ? fmt::format("{:.1f}%", 100 * p.spread) : "-"; }

std::string points_table_text(const CapacitySection& c) {
  std::string o = fmt::format("  {:>5} {:>7} {:>7} {:>10} {:>10} {:>10} {:>10} {:>7} {:>5} {:>5} {:>7}  {}\n", "GPUs",
                              "AU", "AU min", "samples/s", "demand", "MB/s", "MiB/s", "spread", "CPU", "runs", "dev rd",
                              "result");
  for (const auto& p : c.answer.points) {
    std::string res = point_passes(p, c.in.au_target) ? "fed" : "NOT fed";
    if (p.client_bound) res += " (client-bound)";
    else if (p.workers_bound) res += " (worker-bound)";
    else if (p.metadata_bound) res += " (metadata-bound)";
    if (!p.steady) res += " (no steady window)";
    if (!p.client_host.empty()) res += " on host " + p.client_host;
    o += fmt::format(
        "  {:>5} {:>6.1f}% {:>6.1f}% {:>10.0f} {:>10.0f} {:>10.1f} {:>10.1f} {:>7} {:>4.0f}% {:>5} {:>7}  {}\n", p.gpus,
        100 * p.au, 100 * p.au_min, p.samples_per_s, c.in.samples_per_s_per_gpu * p.gpus, p.bytes_per_s / 1e6,
        p.bytes_per_s / 1048576.0, spread_text(p), 100 * p.cpu_fraction, p.repeats,
        read_ratio_text(point_device_io(c, p), p.delivered_bytes), res);
    o += host_rows_text(c, p);
  }
  return o;
}

}  // namespace

std::string render_capacity_text(const CapacityDocument& doc) {
  const CapacitySection& c = doc.capacity;
  const HostSection& host = doc.header.host;
  std::string o;
  o += fmt::format("ioprobe {} capacity{}\n\n", doc.header.ioprobe_version,
                   doc.partial ? fmt::format("  [PARTIAL: {}]", to_string(c.in.stop)) : "");
  o += render_target_line(doc.target, doc.dataset);
  o += render_target_rows(doc.targets, "spans", 10);
  o += fmt::format("  host       {} CPUs allowed ({}) of {} online\n", host.cpus_allowed, host.cpu_list,
                   host.cpus_online);
  const std::string& model = c.in.model;  // empty: the user's own rate, no model chosen
  o += fmt::format("  per GPU    1 x {}{}: {:.1f} samples/s = {}; fed at AU >= {:.0f}%\n", c.in.accelerator_name,
                   model.empty() ? "" : " (" + model + ")", c.in.samples_per_s_per_gpu,
                   format_rate(c.in.samples_per_s_per_gpu * c.in.sample_bytes), 100 * c.in.au_target);
  o += capacity_loader_lines(doc);
  o += capacity_calibration_effect(c);
  const size_t points = c.answer.points.size();
  o += fmt::format("  search     doubling then bisection; {} repeat(s) of {} s per point; {} in {} (budget {})\n\n",
                   c.in.repeats, c.in.point_s, points == 1 ? "1 point" : fmt::format("{} points", points),
                   format_seconds(c.in.elapsed_s), format_seconds(c.in.budget_s));
  if (const auto& c = doc.cluster)
    o += fmt::format("  hosts      {} ({}), {} MPI ranks, {}; each point split {}\n", c->hosts, cluster_hostnames(*c),
                     c->mpi_ranks, c->launcher, "evenly over the hosts, then over each host's processes");
  o += points_table_text(c);
  o += "  (AU: median over repeats of the mean over ranks; AU min: the lowest rank of any repeat; samples/s, MB/s\n"
       "   (10^6 B/s) and MiB/s (2^20 B/s): median over repeats, from sample completion times in the steady window;\n"
       "   CPU: process CPU time / wall time / allowed CPUs, all hosts' CPUs together across hosts; dev rd: device\n"
       "   bytes read / bytes delivered)\n";
  o += device_note_text(c) + "\n";
  for (const auto& p : c.answer.points)
    if (p.decode_us_per_sample > 0) {
      std::string per;
      for (const auto& q : c.answer.points)
        per += fmt::format("{}{:.0f} µs at {} GPUs", per.empty() ? "" : ", ", q.decode_us_per_sample, q.gpus);
      o += "  JPEG decode (libjpeg-turbo) CPU per sample on the worker threads, median of the repeats: " + per + "\n\n";
      break;
    }
  o += "Capacity: " + headline(c) + "\n";
  o += "  " + c.answer.text + "\n";
  for (const auto& p : c.answer.points)
    if (!p.note.empty()) o += fmt::format("  note at {}: {}\n", p.gpus, p.note);
  o += cores_rule_text(c, host.cpus_allowed);
  if (!doc.warnings.empty()) {
    o += "\nWarnings\n";
    for (const auto& w : doc.warnings) o += "  - " + w + "\n";
  }
  return o;
}

std::string render_capacity_html(const CapacityDocument& doc) {
  const CapacitySection& c = doc.capacity;
  std::string o = "<div class=\"rec\"><h3>Capacity</h3><pre>" + html_escape(headline(c)) + "</pre><p>" +
                  html_escape(c.answer.text) + "</p></div>\n";
  const double target = c.in.au_target;
  LineChart au;
  au.id = "capacity-au";
  au.title = "AU against emulated accelerators";
  au.x_label = fmt::format("{} accelerators", c.in.accelerator_name);
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
  for (const auto& p : c.answer.points) {
    const double g = p.gpus;
    mean.points.emplace_back(g, 100 * p.au);
    low.points.emplace_back(g, 100 * p.au_min);
    got.points.emplace_back(g, p.samples_per_s);
    need.points.emplace_back(g, c.in.samples_per_s_per_gpu * p.gpus);
  }
  au.series = {mean, low};
  rate.series = {got, need};
  const uint64_t n = c.answer.gpus_fed;
  if (const CapacityPoint* p = n > 0 ? point_at(c, n) : nullptr)
    au.marks.push_back({static_cast<double>(n), 100 * p->au, "fed"});
  o += render_line_chart(au) + render_line_chart(rate);
  if (const auto& c = doc.cluster)
    o +=
        fmt::format("<p class=\"note\">Across {} hosts ({}), {} MPI ranks, started by {}: each point split evenly over "
                    "the hosts, then over each host's processes; each host's share in the rows under the point (CPU: "
                    "of that host's allowed CPUs).</p>\n",
                    c->hosts, html_escape(cluster_hostnames(*c)), c->mpi_ranks, html_escape(c->launcher));
  o += "<table class=\"grid\"><tr><th>GPUs</th><th>AU</th><th>AU min</th><th>samples/s</th><th>demand</th><th>MB/s</th>"
       "<th>spread</th><th>CPU</th><th>repeats</th><th>fed</th></tr>\n";
  for (const auto& p : c.answer.points) {
    o += fmt::format("<tr><td>{}</td><td>{:.1f}%</td><td>{:.1f}%</td><td>{:.0f}</td><td>{:.0f}</td><td>{:.1f}</td>"
                     "<td>{}</td><td>{:.0f}%</td><td>{}</td><td>{}</td></tr>\n",
                     p.gpus, 100 * p.au, 100 * p.au_min, p.samples_per_s, c.in.samples_per_s_per_gpu * p.gpus,
                     p.bytes_per_s / 1e6, spread_text(p), 100 * p.cpu_fraction, p.repeats,
                     html_escape(point_passes(p, c.in.au_target) ? "yes" : "no"));
    o += host_rows_html(p);
  }
  return o + "</table><p class=\"note\">MB/s = 10^6 B/s. Rates from sample completion times in each run's steady "
             "window.</p>\n";
}

}  // namespace ioprobe
