// The typed scaling document (report/scaling_report.hpp): its JSON both ways, strict reading, and
// a document saved by `ioprobe scaling` (tests/fixtures/documents/scaling_raid0.json: btrfs raid0
// over two loop devices) read back and rendered as `ioprobe report` rendered it.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "report/document.hpp"
#include "report/html_report.hpp"
#include "report/scaling_report.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

const std::string kScalingDocs = std::string(IOPROBE_FIXTURES) + "/documents";

std::string scaling_fixture_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One NVMe member with a nominal ceiling and one that failed; md raid1; a created array file whose
// path needs escaping; notes and warnings.
ScalingDocument full_scaling_document() {
  ScalingConfig cfg;
  cfg.dir = "/mnt/ra\xffid";
  cfg.rw = RawPattern::randread;
  cfg.bs = 4096;
  cfg.iodepth = 32;
  cfg.runtime_s = 2;
  ScalingResult r;
  r.raid_kind = "md";
  r.level = "raid1";
  ScalingPoint a{"nvme0n1", "/dev/nvme0n1", 1000, 4096000, 1, 1000, 4096000, 50, 200, EngineKind::kIoUring, {}, ""};
  a.nominal = {"NVMe", 7.88e9, "PCIe 16 GT/s x4 link (Gen4): 7.88 GB/s per direction, nominal", {}};
  ScalingPoint b{"sdb", "/dev/sdb", 0, 0, 0, 0, 0, 0, 0, EngineKind::kIoUring, {}, "EIO"};
  b.nominal = {"SATA", 0, "no link", {}};
  r.members = {a, b};
  r.array = {"array", "/mnt/ra\xffid/.ioprobe-scaling-1.bin",
             900,     3686400,
             1,       900,
             3686400, 60,
             250,     EngineKind::kIoUring,
             {},      ""};
  r.array_file_created = true;
  finish_scaling(r);
  r.notes.emplace_back("a note");
  ScalingDocument d;
  d.header.ioprobe_version = "0.1.0";
  d.header.command = {"ioprobe", "scaling"};
  d.header.created_utc = "2026-01-01T00:00:00Z";
  d.header.host.hostname = "h";
  d.target.path = "/mnt/raid";
  d.warnings = {"a warning"};
  d.scaling = scaling_section(cfg, r);
  return d;
}

std::string scaling_refusal(const json& j) {
  try {
    scaling_document_from_json(j, "'s.json'");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE(
    "scaling document: a document `ioprobe scaling` saved reads back, writes the same JSON, renders the same text",
    "[scaling_document]") {
  const json saved = read_json_file(kScalingDocs + "/scaling_raid0.json");
  const ScalingDocument doc = scaling_document_from_json(saved, "'scaling_raid0.json'");
  REQUIRE(doc.scaling.result.members.size() == 2);
  CHECK(scaling_document_json(doc).dump(2, ' ', false, json::error_handler_t::replace) ==
        saved.dump(2, ' ', false, json::error_handler_t::replace));
  CHECK(render_scaling_text(doc) == scaling_fixture_text(kScalingDocs + "/scaling_raid0.txt"));
}

TEST_CASE("scaling document: round trip with a failed member, a nominal ceiling and escaped paths",
          "[scaling_document]") {
  const ScalingDocument d = full_scaling_document();
  const json j = scaling_document_json(d);
  CHECK(j["scaling"]["dir"] == "/mnt/ra\\xFFid");       // escaped once
  CHECK(j["scaling"]["members"][1]["error"] == "EIO");  // a failed member keeps its error
  CHECK(j["scaling"]["members"][0]["error"].is_null());
  const ScalingDocument back = scaling_document_from_json(j, "'s.json'");
  CHECK(scaling_document_json(back) == j);
  CHECK(back.scaling.result.members[0].nominal.bytes_per_s == 7.88e9);
  CHECK(back.scaling.result.array.path == "/mnt/ra\\xFFid/.ioprobe-scaling-1.bin");
  const std::string text = render_scaling_text(back);
  CHECK(text == render_scaling_text(d));
  CHECK_THAT(text, Catch::Contains("  sdb        error: EIO\n"));
  CHECK_THAT(text, Catch::Contains("measured 0 % of it"));
}

TEST_CASE("scaling document: a missing or mistyped field is refused naming its path", "[scaling_document]") {
  const json good = scaling_document_json(full_scaling_document());
  REQUIRE(scaling_refusal(good).empty());
  json bad = good;
  bad["scaling"]["members"][1].erase("iops");
  CHECK_THAT(scaling_refusal(bad), Catch::Contains("'s.json'.scaling.members[1]: missing key 'iops'"));
  bad = good;
  bad["scaling"]["expectation"]["factor"] = "one";
  CHECK_THAT(scaling_refusal(bad), Catch::Contains("'s.json'.scaling.expectation.factor: expected a number"));
  bad = good;
  bad["scaling"]["members"][0]["nominal"].erase("basis");
  CHECK_THAT(scaling_refusal(bad), Catch::Contains("'s.json'.scaling.members[0].nominal: missing key 'basis'"));
  bad = good;
  bad["scaling"]["file"] = "/elsewhere";
  CHECK_THAT(scaling_refusal(bad), Catch::Contains("'s.json'.scaling.file: '/elsewhere' is not the array's path"));
  bad = good;
  bad["scaling"]["array_bytes_per_s"] = 1.0;
  CHECK_THAT(scaling_refusal(bad), Catch::Contains("'s.json'.scaling.array_bytes_per_s: 1 B/s is not the array's"));
  bad = good;
  bad.erase("scaling");
  CHECK_THAT(scaling_refusal(bad), Catch::Contains("'s.json': missing key 'scaling'"));
  bad = good;
  bad["kind"] = "raw";
  CHECK_THAT(scaling_refusal(bad), Catch::Contains("'raw' is not a scaling document"));
}

TEST_CASE("scaling document: the HTML report shows the typed document's text, or names the field it refused",
          "[scaling_document]") {
  const json saved = read_json_file(kScalingDocs + "/scaling_raid0.json");
  const std::string html = render_html_report({saved});
  CHECK_THAT(html, Catch::Contains("efficiency  0.08 (array / sum of members)"));
  CHECK_THAT(html, Catch::Contains("loop0          19,442 IOPS"));
  json bad = saved;
  bad["scaling"]["members"][1].erase("p99_us");
  CHECK_THAT(render_html_report({bad}), Catch::Contains("scaling document.scaling.members[1]: missing key"));
}
