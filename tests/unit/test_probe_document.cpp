// The typed probe document (report/probe_document.hpp): its JSON both ways, strict reading naming
// the field's path, the warnings worked out before rendering, and a document saved by
// `ioprobe probe` (tests/fixtures/documents/) read back, written again byte for byte and rendered
// as `ioprobe report` printed it.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>

#include "core/error.hpp"
#include "report/probe_document.hpp"
#include "report/probe_text.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

const std::string kProbeDocs = std::string(IOPROBE_FIXTURES) + "/documents";

std::string probe_file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE(
    "probe document: a document `ioprobe probe` saved reads back, writes the same bytes and renders the same text",
    "[probe_document]") {
  // Saved with `ioprobe probe --dir D --sysfs-root tests/fixtures/sysfs/numa-minus-one --json`
  // before the document was typed, with the text `ioprobe report` printed for it.
  const std::string saved_text = probe_file_text(kProbeDocs + "/probe_small.json");
  const json saved = json::parse(saved_text);
  const ProbeDocument doc = probe_document_from_json(saved, "'probe_small.json'");
  CHECK(doc.io_uring.available);
  CHECK(doc.cold.engine == EngineKind::kIoUring);
  CHECK_FALSE(doc.cold.buffered);
  CHECK(doc.deep.depth == 32);
  CHECK(doc.cache.cache_budget_source == "RAM");
  CHECK(probe_document_json(doc) == saved);
  CHECK(probe_document_json(doc).dump(2, ' ', false, json::error_handler_t::replace) + "\n" == saved_text);
  CHECK(render_probe_text(doc) == probe_file_text(kProbeDocs + "/probe_small.txt"));
}

TEST_CASE("probe document: a missing or mistyped field is refused naming its path", "[probe_document]") {
  const json good = json::parse(probe_file_text(kProbeDocs + "/probe_small.json"));
  auto refused = [&](const std::function<void(json&)>& edit) {
    json j = good;
    edit(j);
    try {
      probe_document_from_json(j, "'p.json'");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused([](json&) {}) == "accepted");
  CHECK(refused([](json& j) { j["io_uring"].erase("available"); }) == "'p.json'.io_uring: missing key 'available'");
  CHECK(refused([](json& j) { j["io_uring"]["memlock_limit_bytes"] = "8 MiB"; }) ==
        "'p.json'.io_uring.memlock_limit_bytes: expected a non-negative integer in range, found \"8 MiB\"");
  CHECK(refused([](json& j) { j["engine"]["deep"]["depth"] = -1; }) ==
        "'p.json'.engine.deep.depth: expected a non-negative integer in range, found -1");
  CHECK(refused([](json& j) { j["engine"].erase("warm"); }) == "'p.json'.engine: missing key 'warm'");
  CHECK(refused([](json& j) { j["cache"]["cache_budget_bytes"] = 1.5; }) ==
        "'p.json'.cache.cache_budget_bytes: expected a non-negative integer in range, found 1.5");
  CHECK(refused([](json& j) { j["topology"] = json::array(); }) ==
        "'p.json'.topology: expected a JSON object, found []");
  CHECK(refused([](json& j) { j["kind"] = "run"; }) == "'p.json'.kind: 'run' is not a probe document");
  CHECK(refused([](json& j) { j.erase("warnings"); }) == "'p.json': missing key 'warnings'");
}

TEST_CASE("probe text: a topology entry without a key is refused naming its path, not shown as a default",
          "[probe_document]") {
  const json good = json::parse(probe_file_text(kProbeDocs + "/probe_small.json"));
  auto rendered = [&](const std::function<void(json&)>& edit) {
    json j = good;
    edit(j);
    try {
      return render_probe_text(probe_document_from_json(j, "'p.json'"));
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
  };
  CHECK(rendered([](json&) {}) == probe_file_text(kProbeDocs + "/probe_small.txt"));
  CHECK(rendered([](json& j) { j["topology"]["pci"][1].erase("numa_node"); }) ==
        "probe document.topology.pci[1]: missing key 'numa_node'");
  CHECK(rendered([](json& j) { j["topology"]["nodes"][0]["id"] = "zero"; }) ==
        "probe document.topology.nodes[0].id: expected an integer in range, found \"zero\"");
  CHECK(rendered([](json& j) { j["topology"]["numactl"]["gpu"].erase("reason"); }) ==
        "probe document.topology.numactl.gpu: missing key 'reason'");
  // The target's advice has no data note (the GPUs' has): absent there is no refusal.
  CHECK(rendered([](json& j) { j["topology"]["numactl"]["gpu"].erase("data_note"); }) ==
        probe_file_text(kProbeDocs + "/probe_small.txt"));
}

TEST_CASE("probe document: an unlimited locked-memory limit is null both ways; the warnings are the document's",
          "[probe_document]") {
  UringAvailability u;
  u.available = false;
  u.err = 1;  // EPERM
  u.cause = "blocked by seccomp/container";
  u.memlock_limit_bytes = UINT64_MAX;
  u.memlock_hard_bytes = 65536;
  u.message = "io_uring unavailable: io_uring_setup failed with EPERM";
  TargetInfo t;
  t.warnings = {"a target warning"};
  Topology topo;  // not live: no allowed-CPU warning
  HostInfo host;
  host.memory_bytes = 1 << 30;
  const ProbeEngineRow psync{EngineKind::kPsync, "io_uring refused", true, 1, true, "fell back"};
  RunHeader h;
  h.command = {"ioprobe", "probe"};
  h.created_utc = "2026-12-07T00:00:00Z";
  h.ioprobe_version = "0.1.0";
  const ProbeDocument doc = make_probe_document(h, t, topo, u, psync, psync, psync, host, "/data/f.bin");
  REQUIRE(doc.warnings.size() == 3);
  CHECK_THAT(doc.warnings[0], Catch::StartsWith("--dir '/data/f.bin' is a file, not a directory"));
  CHECK(doc.warnings[1] == "a target warning");
  CHECK(doc.warnings[2] == u.message);
  CHECK(doc.io_uring.errno_name == "EPERM");
  CHECK_FALSE(doc.io_uring.memlock_limit_bytes.has_value());
  CHECK(doc.io_uring.memlock_hard_limit_bytes == 65536u);
  const json j = probe_document_json(doc);
  CHECK(j["io_uring"]["memlock_limit_bytes"].is_null());
  CHECK(j["kind"] == "probe");
  const ProbeDocument back = probe_document_from_json(j, "'p.json'");
  CHECK(probe_document_json(back) == j);
  CHECK_FALSE(back.io_uring.memlock_limit_bytes.has_value());
  const std::string text = render_probe_text(back);
  CHECK_THAT(text, Catch::Contains("available:             no"));
  CHECK_THAT(text, Catch::Contains("  - a target warning\n"));
}
