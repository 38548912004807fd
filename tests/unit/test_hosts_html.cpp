// report/: per-host rows of multi-host documents in HTML (bars, stragglers marked) and CSV.
#include <catch2/catch.hpp>

#include <tuple>

#include <nlohmann/json.hpp>

#include "report/document_sections.hpp"
#include "report/document_text.hpp"
#include "report/html_report.hpp"
#include "report/raw_document.hpp"
#include "report/run_document.hpp"

using namespace ioprobe;
using json = nlohmann::json;

namespace {

json host(const std::string& name, double rate, bool straggler, const char* metric) {
  return {{"hostname", name},
          {"mpi_ranks", {0, 1}},
          {"straggler", straggler},
          {"results", {{metric, rate}, {"bytes_per_s", rate * 4096}, {"first_done_s", 1.0}, {"last_done_s", 1.5}}}};
}

// A run document of three hosts, h2 the straggler, as `ioprobe run` writes its typed sections.
json run_hosts_document() {
  RunDocument r;  // every section the typed reader requires, empty, besides cluster and hosts
  r.target.reading.emplace();
  r.target.run.emplace();
  r.cluster = RunClusterSection{.launcher = "OpenMPI mpirun", .hosts = 3, .mpi_ranks = 6, .start_skew_s = 0.0002};
  r.hosts.emplace();
  for (const auto& [name, rate, straggler] :
       {std::tuple{"h1", 1000.0, false}, std::tuple{"h2", 400.0, true}, std::tuple{"h3", 990.0, false}}) {
    RunHostRow h{.hostname = name, .mpi_ranks = {0, 1}};
    h.straggler = straggler;
    h.results = {.samples_per_s = rate, .bytes_per_s = rate * 4096, .first_done_s = 1.0, .last_done_s = 1.5};
    r.hosts->push_back(h);
  }
  return run_document_json(r);
}

// A raw document of three hosts, h2 the straggler, as `ioprobe raw` writes it across hosts.
json raw_hosts_document() {
  RawDocument r;  // every section the typed reader requires, besides the figures charted
  r.raw.rw = "randread";
  r.raw.bs = 4096;
  r.raw.results.ios = 2390;
  r.raw.results.bytes = 2390ULL * 4096;
  r.raw.results.elapsed_s = 1.0;
  r.cluster = RawClusterSection{.launcher = "OpenMPI mpirun", .hosts = 3, .mpi_ranks = 6, .start_skew_s = 0.0002};
  for (const auto& [name, rate, straggler] :
       {std::tuple{"h1", 1000.0, false}, std::tuple{"h2", 400.0, true}, std::tuple{"h3", 990.0, false}}) {
    RawHostSection h{.hostname = name, .mpi_ranks = {0, 1}};
    h.straggler = straggler;
    h.iops = rate;
    h.bytes_per_s = rate * 4096;
    h.first_done_s = 1.0;
    h.last_done_s = 1.5;
    r.hosts.push_back(h);
  }
  return raw_document_json(r);
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("HTML: one bar per host, the straggler in red and named", "[report][hosts]") {
  for (const char* kind : {"run", "raw"}) {
    const json d = std::string(kind) == "run" ? run_hosts_document() : raw_hosts_document();
    const std::string html = render_html_report({d});
    INFO(kind);
    CHECK(count(html, "<rect class=\"bar") >= 3);
    CHECK(count(html, "<rect class=\"bar marked\"") == 1);
    CHECK(html.find("h2 (straggler)") != std::string::npos);
    CHECK(html.find("h1 (straggler)") == std::string::npos);
    CHECK(html.find("STRAGGLER") != std::string::npos);
    CHECK(html.find("6 MPI rank(s)") != std::string::npos);
  }
}

TEST_CASE("HTML and CSV of a single-host document have no host rows", "[report][hosts]") {
  json d = raw_hosts_document();
  d.erase("cluster");  // one host: neither the cluster section nor host rows
  d.erase("hosts");
  const std::string html = render_html_report({d});
  CHECK(html.find("Per-I/O latency distribution") != std::string::npos);  // the raw section rendered, not refused
  CHECK(html.find("lacks fields") == std::string::npos);
  CHECK(html.find("Per host") == std::string::npos);
  CHECK(render_document_csv(d).find("/hosts/") == std::string::npos);
}

TEST_CASE("CSV of a multi-host document: every host's figures, one row each", "[report][hosts]") {
  const json d = {{"kind", "raw"}, {"hosts", {host("h1", 1000, false, "iops"), host("h2", 400, true, "iops")}}};
  const std::string csv = render_document_csv(d);
  CHECK(csv.find("/hosts/0/hostname,h1\n") != std::string::npos);
  CHECK(csv.find("/hosts/1/hostname,h2\n") != std::string::npos);
  CHECK(csv.find("/hosts/1/results/iops,400.0\n") != std::string::npos);
  CHECK(csv.find("/hosts/1/straggler,true\n") != std::string::npos);
}

// A capacity document as a 2-host run writes it (mpirun over nodeA and nodeB, one process each):
// point 2 fed, point 4 not fed with nodeA client-bound. The note carries markup to be escaped.
const char* const kTwoHostCapacity = R"json({
  "schema": "ioprobe.result/1", "kind": "capacity", "ioprobe_version": "t", "created_utc": "2026-12-07T06:00:00Z",
  "command": ["ioprobe", "capacity", "--gpu", "h100", "--data", "/mnt/d"], "partial": false, "warnings": [],
  "targets": [],
  "loader": {"num_workers": 4, "batch_size": 4, "prefetch_factor": 2, "engine": "psync", "direct": false,
    "shuffle": true, "cpu_per_sample_us": 0, "step_time_s": 0.4, "decode": "none", "main_cpu_per_batch_us": 0,
    "own_read_cpu_per_file_us": 0, "worker_startup_cpu_us": 0, "worker_put_cpu_per_sample_us": 0,
    "worker_other_cpu_per_sample_us": 0, "tensors_per_batch": 0, "main_startup_cpu_us": 0, "pin_memory": false,
    "pin_bytes_per_batch": 0},
  "demand": {"accelerator": "h100", "accelerator_name": "H100", "model": "unet3d", "rate_family": "training",
    "samples_per_s_per_gpu": 10.0, "source": "t", "sample_bytes": 150000, "au_target": 0.9},
  "cluster": {"launcher": "OpenMPI mpirun", "hosts": 2, "hostnames": ["nodeA", "nodeB"], "mpi_ranks": 2,
    "dataset_placement": "shared", "dataset_placement_how": "one directory", "split": "even", "merge": "summed"},
  "capacity": {"accelerator": "h100", "accelerator_name": "H100", "model": "unet3d", "au_target": 0.9,
    "gpus_fed": 2, "bound": "client-cpu", "boundary_measured": true, "answer": "2 x H100 fed",
    "samples_per_s_per_gpu": 10.0, "sample_bytes": 150000, "point_s": 10, "repeats": 2, "budget_s": 600,
    "elapsed_s": 80, "max_gpus": 64, "stop_reason": "completed",
    "points": [
      {"gpus": 2, "au": 0.97, "au_min": 0.95, "samples_per_s": 20.0, "bytes_per_s": 3000000, "repeats": 2,
       "spread": 0.01, "demand_samples_per_s": 20.0, "cpu_fraction": 0.2, "consumer_lag": 0,
       "worker_runq_share": null, "client_bound": false,
       "workers_bound": false, "metadata_bound": false, "steady": true, "passed": true, "delivered_bytes": 60000000,
       "note": "", "client_host": null,
       "hosts": [
         {"hostname": "nodeA", "host_index": 0, "mpi_ranks": [0], "gpus": 1, "cpus_allowed": 8, "au": 0.98,
          "au_min": 0.96, "samples_per_s": 10.0, "bytes_per_s": 1500000, "delivered_bytes": 30000000,
          "cpu_fraction": 0.3, "consumer_lag": 0, "client_bound": false, "note": ""},
         {"hostname": "nodeB", "host_index": 1, "mpi_ranks": [1], "gpus": 1, "cpus_allowed": 8, "au": 0.96,
          "au_min": 0.95, "samples_per_s": 10.0, "bytes_per_s": 1500000, "delivered_bytes": 30000000,
          "cpu_fraction": 0.1, "consumer_lag": 0, "client_bound": false, "note": ""}]},
      {"gpus": 4, "au": 0.6, "au_min": 0.5, "samples_per_s": 24.0, "bytes_per_s": 3600000, "repeats": 2,
       "spread": 0.02, "demand_samples_per_s": 40.0, "cpu_fraction": 0.5, "consumer_lag": 0.1,
       "worker_runq_share": 0.1, "client_bound": true,
       "workers_bound": false, "metadata_bound": false, "steady": true, "passed": false, "delivered_bytes": 72000000,
       "note": "client-bound on host nodeA", "client_host": "nodeA",
       "hosts": [
         {"hostname": "nodeA", "host_index": 0, "mpi_ranks": [0], "gpus": 2, "cpus_allowed": 8, "au": 0.4,
          "au_min": 0.35, "samples_per_s": 8.0, "bytes_per_s": 1200000, "delivered_bytes": 24000000,
          "cpu_fraction": 0.95, "consumer_lag": 0.2, "client_bound": true, "note": "CPU 95% <of 8>"},
         {"hostname": "nodeB", "host_index": 1, "mpi_ranks": [1], "gpus": 2, "cpus_allowed": 8, "au": 0.8,
          "au_min": 0.7, "samples_per_s": 16.0, "bytes_per_s": 2400000, "delivered_bytes": 48000000,
          "cpu_fraction": 0.2, "consumer_lag": 0, "client_bound": false, "note": ""}]}]}
})json";

TEST_CASE("HTML of a 2-host capacity document: each point's host rows under it, escaped", "[report][hosts][capacity]") {
  json d = json::parse(kTwoHostCapacity);
  // The sections every kind shares, complete as their strict readers require.
  TargetSection target{.path = "/mnt/d", .fs_type = "nfs", .network = true};
  target.reading = TargetReadSetting{.cache = "cold", .direct = false};
  d["target"] = target_section_json(target);
  d["dataset"] = dataset_section_json({.preset = "none", .root = "/mnt/d", .files = 1000, .bytes = 150000000});
  d["host"] = host_section_json({.hostname = "nodeA", .cpus_online = 8, .cpus_allowed = 8, .cpu_list = "0-7"});
  const std::string html = render_html_report({d});
  CHECK(html.find("lacks fields") == std::string::npos);
  CHECK(count(html, "<tr class=\"host\" data-host=\"nodeA\">") == 2);
  CHECK(count(html, "<tr class=\"host\" data-host=\"nodeB\">") == 2);
  CHECK(html.find("nodeA: 2 GPUs (MPI rank 0)</th><td>40.0%</td><td>35.0%</td><td>8</td>") != std::string::npos);
  CHECK(html.find("nodeB: 1 GPUs (MPI rank 1)</th><td>96.0%</td>") != std::string::npos);
  CHECK(html.find("<td>95% of 8</td>") != std::string::npos);
  // The rows come after their point's row and before the next point's.
  const size_t p2 = html.find("<tr><td>2</td>"), p4 = html.find("<tr><td>4</td>");
  REQUIRE(p2 != std::string::npos);
  REQUIRE(p4 != std::string::npos);
  const size_t first_host = html.find("data-host=\"nodeA\"");
  CHECK(first_host > p2);
  CHECK(first_host < p4);
  CHECK(html.find("data-host=\"nodeA\"", p4) != std::string::npos);
  // The client-bound host is marked and its note escaped.
  CHECK(html.find("<td class=\"warn\">client-bound: CPU 95% &lt;of 8&gt;</td>") != std::string::npos);
  CHECK(html.find("<of 8>") == std::string::npos);
  CHECK(html.find("Across 2 hosts (nodeA, nodeB), 2 MPI ranks, started by OpenMPI mpirun") != std::string::npos);

  // A hostname with markup is escaped in the row; a single-host document has no host rows.
  json odd = d;
  odd["capacity"]["points"][0]["hosts"][1]["hostname"] = "node<B>";
  const std::string odd_html = render_html_report({odd});
  CHECK(odd_html.find("data-host=\"node&lt;B&gt;\"") != std::string::npos);
  CHECK(odd_html.find("node<B>") == std::string::npos);
  json single = d;
  single.erase("cluster");
  for (auto& p : single["capacity"]["points"]) p.erase("hosts");
  CHECK(render_html_report({single}).find("class=\"host\"") == std::string::npos);
}
