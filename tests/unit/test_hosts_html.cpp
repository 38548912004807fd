// report/: per-host rows of multi-host documents in HTML (bars, stragglers marked) and CSV.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "report/document_text.hpp"
#include "report/html_report.hpp"

using namespace ioprobe;
using json = nlohmann::json;

namespace {

json host(const std::string& name, double rate, bool straggler, const char* metric) {
  return {{"hostname", name},
          {"mpi_ranks", {0, 1}},
          {"straggler", straggler},
          {"results", {{metric, rate}, {"bytes_per_s", rate * 4096}, {"first_done_s", 1.0}, {"last_done_s", 1.5}}}};
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("HTML: one bar per host, the straggler in red and named", "[report][hosts]") {
  for (const char* kind : {"run", "raw"}) {
    const char* metric = std::string(kind) == "run" ? "samples_per_s" : "iops";
    json d = {{"kind", kind},
              {"cluster", {{"hosts", 3}, {"mpi_ranks", 6}, {"launcher", "OpenMPI mpirun"}, {"start_skew_s", 0.0002}}},
              {"hosts", {host("h1", 1000, false, metric), host("h2", 400, true, metric), host("h3", 990, false, metric)}}};
    if (std::string(kind) == "raw") d["raw"] = {{"rw", "randread"}, {"results", {{"iops", 2390}}}};
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
  const json d = {{"kind", "raw"}, {"raw", {{"rw", "read"}, {"results", {{"iops", 5}}}}}};
  CHECK(render_html_report({d}).find("Per host") == std::string::npos);
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
