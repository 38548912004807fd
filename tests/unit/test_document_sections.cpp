// The sections several result documents share (report/document_sections.hpp): host, target,
// targets and dataset written and read back unchanged, and refused, with the field's path, when
// a field is mistyped or missing; every document kind that carries a target reads it strictly.
#include <catch2/catch.hpp>

#include <cerrno>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/error.hpp"
#include "report/capacity_document.hpp"
#include "report/checkpoint_document.hpp"
#include "report/document.hpp"
#include "report/document_sections.hpp"
#include "report/probe_document.hpp"
#include "report/run_document.hpp"
#include "report/scaling_report.hpp"
#include "report/tune_document.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {

json fixture(const std::string& name) {
  std::ifstream in(std::string(IOPROBE_FIXTURES) + "/documents/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

// `j` read by `read` and written by `write` again, as text.
template <class Read, class Write>
std::string round_trip(const json& j, Read read, Write write) {
  return write(read(json::parse(j.dump()))).dump();
}

TargetInfo loop_target() {
  TargetInfo t;
  t.path = "/mnt/loop";
  t.fs_type = "ext4";
  t.fs_magic = 0xef53;
  t.mount_point = "/mnt/loop";
  t.mount_source = "/dev/loop0";
  t.mount_fstype = "ext4";
  t.mount_options = "rw,relatime";
  t.device = "loop0";
  t.disk = "loop0";
  t.device_chain = {{"loop0", "loop", "/var/img/disk.img"}};
  t.backing_file = "/var/img/disk.img";
  t.backing_device = "vda";
  t.loop_direct_io = 0;
  t.raid_kind = "md";
  t.raid_level = "raid0";
  t.raid_members = {"loop1", "loop2"};
  t.logical_block_bytes = 512;  // physical_block_bytes, rotational, nr_requests unknown: null
  t.scheduler = "none";
  t.device_numa_node = -1;
  t.o_direct = 0;
  t.o_direct_errno = EINVAL;
  t.o_direct_probe_file = "(temporary file)";
  t.free_bytes = 1 << 30;
  t.free_inodes = 1000;
  t.warnings = {"a warning"};
  return t;
}

}  // namespace

TEST_CASE("document sections: host written, read back and written again unchanged; bad fields named",
          "[document_sections]") {
  HostInfo h;
  h.hostname = "node7";
  h.kernel = "6.1.0";
  h.cpus_online = 8;
  h.cpus_allowed = 4;
  h.allowed_cpu_list = {0, 1, 2, 3};
  h.memory_bytes = 16ULL << 30;
  const json j = host_json(h);
  CHECK(j.at("cpu_list") == "0-3");
  const auto read = [](const json& x) { return host_section_from_json(x, "'a.json'.host"); };
  CHECK(round_trip(j, read, host_section_json) == j.dump());
  CHECK(read(j).cpus_allowed == 4);

  json bad = j;
  bad["cpus_allowed"] = "4";
  CHECK_THROWS_WITH(read(bad), "'a.json'.host.cpus_allowed: expected an integer in range, found \"4\"");
  bad = j;
  bad.erase("kernel");
  CHECK_THROWS_WITH(read(bad), "'a.json'.host: missing key 'kernel'");
}

TEST_CASE("document sections: a probed target and a run's written, read back and written again unchanged",
          "[document_sections]") {
  const json probed = target_json(loop_target());
  CHECK(probed.at("fs_magic") == "0xef53");
  CHECK(probed.at("rotational").is_null());
  CHECK(probed.at("loop_direct_io") == false);
  CHECK(probed.at("raid").at("member_count") == 2);
  CHECK(probed.at("o_direct") == "refused");
  CHECK(probed.at("o_direct_errno") == "EINVAL");
  const auto read_probed = [](const json& x) { return target_section_from_json(x, "'a.json'.target"); };
  CHECK(round_trip(probed, read_probed, target_section_json) == probed.dump());
  const TargetSection back = read_probed(probed);
  CHECK(back.logical_block_bytes == std::optional<uint32_t>(512));
  CHECK_FALSE(back.physical_block_bytes);
  CHECK_FALSE(back.reading);

  TargetSection run = target_section(loop_target());
  run.reading = TargetReadSetting{"cold", true, "O_DIRECT: reads bypass the page cache", EngineKind::kIoUring, "why"};
  run.run = TargetRunFacts{.numa = "none",
                           .numa_reason = "one node",
                           .epoch_resident_fraction = {0.0, 0.25},
                           .residency_method = "mincore",
                           .epoch_source = {"device", "mixed"},
                           .cache_budget = TargetCacheBudget{1000, "RAM", 500, true}};
  const json rj = target_section_json(run);
  const auto read_run = [](const json& x) { return target_section_from_json(x, "'a.json'.target", TargetKeys::kRun); };
  CHECK(round_trip(rj, read_run, target_section_json) == rj.dump());
  CHECK(read_run(rj).run->epoch_source == std::vector<std::string>{"device", "mixed"});

  // Written before loop devices' backing devices were recorded: read, and written again without them.
  json older = probed;
  older.erase("backing_device");
  older.erase("loop_direct_io");
  CHECK(round_trip(older, read_probed, target_section_json) == older.dump());
}

TEST_CASE("document sections: a target's mistyped or missing field is refused with its path", "[document_sections]") {
  TargetSection t = target_section(loop_target());
  t.reading = TargetReadSetting{};
  t.run = TargetRunFacts{};
  const json good = target_section_json(t);
  const auto read = [](const json& x, TargetKeys k) { return target_section_from_json(x, "'a.json'.target", k); };
  json bad = good;
  bad["fs_type"] = 7;
  CHECK_THROWS_WITH(read(bad, TargetKeys::kProbed), "'a.json'.target.fs_type: expected a string, found 7");
  bad = good;
  bad["free_bytes"] = "1 GiB";
  CHECK_THROWS_WITH(read(bad, TargetKeys::kProbed),
                    "'a.json'.target.free_bytes: expected a non-negative integer in range, found \"1 GiB\"");
  bad = good;
  bad["rotational"] = true;  // null or an integer
  CHECK_THROWS_WITH(read(bad, TargetKeys::kProbed),
                    "'a.json'.target.rotational: expected an integer in range, found true");
  bad = good;
  bad["device_chain"][0]["kind"] = nullptr;
  CHECK_THROWS_WITH(read(bad, TargetKeys::kProbed),
                    "'a.json'.target.device_chain[0].kind: expected a string, found null");
  bad = good;
  bad["raid"]["member_count"] = 3;
  CHECK_THROWS_WITH(read(bad, TargetKeys::kProbed), Catch::StartsWith("'a.json'.target.raid.member_count: 3 is not"));
  bad = good;
  bad["epoch_resident_fraction"] = {0.5, "all"};
  CHECK_THROWS_WITH(read(bad, TargetKeys::kRun),
                    "'a.json'.target.epoch_resident_fraction[1]: expected a number, found \"all\"");
  bad = good;
  bad.erase("path");
  CHECK_THROWS_WITH(read(bad, TargetKeys::kProbed), "'a.json'.target: missing key 'path'");
  // A run's and a tune's target carry the read setting; a run's its facts too.
  bad = good;
  bad.erase("engine");
  CHECK_THROWS_WITH(read(bad, TargetKeys::kRead), "'a.json'.target: missing key 'engine'");
  bad = target_section_json(target_section(loop_target()));
  CHECK_THROWS_WITH(read(bad, TargetKeys::kRead), "'a.json'.target: missing key 'cache'");
  bad = good;
  bad.erase("numa");
  CHECK_THROWS_WITH(read(bad, TargetKeys::kRun), "'a.json'.target: missing key 'numa'");
  CHECK_THROWS_WITH(read(json::array(), TargetKeys::kProbed), "'a.json'.target: expected a JSON object, found []");
}

TEST_CASE("document sections: targets written, read back and written again unchanged; bad entries named",
          "[document_sections]") {
  TargetShare a, b;
  a.info = loop_target();
  a.files = 3;
  a.bytes = 300;
  b.info = loop_target();
  b.info.path = "/mnt/other";
  b.files = 1;
  const json j = targets_json({a, b});
  CHECK(j.at(0).at("files_fraction") == 0.75);
  CHECK(j.at(1).at("bytes_fraction") == 0.0);
  const auto read = [](const json& x) { return targets_section_from_json(x, "'a.json'.targets"); };
  CHECK(round_trip(j, read, targets_section_json) == j.dump());
  // No sizes known (a --data walk): bytes_fraction null, read back as none.
  a.bytes = 0;
  b.bytes = 0;
  const json unsized = targets_json({a, b});
  CHECK(unsized.at(0).at("bytes_fraction").is_null());
  CHECK_FALSE(read(unsized).at(0).bytes_fraction);
  CHECK(round_trip(unsized, read, targets_section_json) == unsized.dump());

  json bad = j;
  bad[1]["files"] = -1;
  CHECK_THROWS_WITH(read(bad), "'a.json'.targets[1].files: expected a non-negative integer in range, found -1");
  bad = j;
  bad[0].erase("files_fraction");
  CHECK_THROWS_WITH(read(bad), "'a.json'.targets[0]: missing key 'files_fraction'");
  CHECK_THROWS_WITH(read(json::object()), "'a.json'.targets: expected an array, found {}");
}

TEST_CASE("document sections: a dataset written, read back and written again unchanged; bad fields named",
          "[document_sections]") {
  DatasetSection g{.preset = "imagenet-like",
                   .root = "/data",
                   .files = 1000,
                   .bytes = 115000000,
                   .kind = "sharded",
                   .records_per_file = 8,
                   .action = "generated across 2 hosts",
                   .enumerate_s = 0.0,
                   .description = "ImageNet-1k",
                   .model = "resnet50",
                   .dirs = 1,
                   .full_files = 1281167,
                   .size_dist = "lognormal",
                   .size_mean_bytes = 115000,
                   .size_stdev_bytes = 50000,
                   .seed = 42,
                   .generate_s = 2.5,
                   .content = "random",
                   .records = 8000};
  g.generation = DatasetGeneration{"generated across 2 hosts", "by file number", 2.5, {{"h1", 0, 0, 500, 1000, 1.25}}};
  const json j = dataset_section_json(g);
  CHECK(j.at("enumerate_s").dump() == "0.0");
  CHECK(j.at("generation").at("hosts").at(0).at("hostname") == "h1");
  const auto read = [](const json& x) { return dataset_section_from_json(x, "'a.json'.dataset"); };
  CHECK(round_trip(j, read, dataset_section_json) == j.dump());
  CHECK(read(j).generation->hosts.at(0).files == 500);

  const DatasetSection walked{.preset = "none",
                              .root = "/mine",
                              .files = 7,
                              .kind = "files",
                              .action = "walked",
                              .enumerate_s = 0.01,
                              .skipped = 1,
                              .duplicates = 0};
  const json w = dataset_section_json(walked);
  CHECK_FALSE(w.contains("generate_s"));
  CHECK(round_trip(w, read, dataset_section_json) == w.dump());

  json bad = j;
  bad["files"] = "many";
  CHECK_THROWS_WITH(read(bad), "'a.json'.dataset.files: expected a non-negative integer in range, found \"many\"");
  bad = j;
  bad["generate_s"] = "2.5 s";
  CHECK_THROWS_WITH(read(bad), "'a.json'.dataset.generate_s: expected a number, found \"2.5 s\"");
  bad = j;
  bad["generation"]["hosts"][0]["bytes"] = 1.5;
  CHECK_THROWS_WITH(read(bad),
                    "'a.json'.dataset.generation.hosts[0].bytes: expected a non-negative integer in range, found 1.5");
  bad = j;
  bad.erase("root");
  CHECK_THROWS_WITH(read(bad), "'a.json'.dataset: missing key 'root'");
  bad = j;  // a generated dataset's settings come together
  bad.erase("seed");
  CHECK_THROWS_WITH(read(bad), "'a.json'.dataset: missing key 'seed'");
}

TEST_CASE("document sections: every saved document kind refuses an edited target, naming the file and the field",
          "[document_sections]") {
  const std::vector<std::pair<std::string, std::function<void(const json&, const std::string&)>>> kinds =
      {{"run_small.json", [](const json& j, const std::string& w) { run_document_from_json(j, w); }},
       {"tune_cut.json", [](const json& j, const std::string& w) { tune_document_from_json(j, w); }},
       {"capacity_small.json", [](const json& j, const std::string& w) { capacity_document_from_json(j, w); }},
       {"probe_small.json", [](const json& j, const std::string& w) { probe_document_from_json(j, w); }},
       {"checkpoint_small.json", [](const json& j, const std::string& w) { checkpoint_document_from_json(j, w); }},
       {"scaling_raid0.json", [](const json& j, const std::string& w) { scaling_document_from_json(j, w); }}};
  for (const auto& [file, read] : kinds) {
    INFO(file);
    const json saved = fixture(file);
    const std::string where = "'" + file + "'";
    CHECK_NOTHROW(read(saved, where));
    json bad = saved;
    bad["target"]["fs_type"] = 7;
    CHECK_THROWS_WITH(read(bad, where), where + ".target.fs_type: expected a string, found 7");
    bad = saved;
    bad["host"]["memory_bytes"] = "16G";
    CHECK_THROWS_WITH(read(bad, where),
                      where + ".host.memory_bytes: expected a non-negative integer in range, found \"16G\"");
    if (saved.contains("dataset")) {
      bad = saved;
      bad["dataset"].erase("files");
      CHECK_THROWS_WITH(read(bad, where), where + ".dataset: missing key 'files'");
      bad = saved;
      bad["targets"][0]["bytes"] = "all";
      CHECK_THROWS_WITH(read(bad, where),
                        where + ".targets[0].bytes: expected a non-negative integer in range, found \"all\"");
    }
  }
}

TEST_CASE("document sections: a saved run document's shared sections are written again byte for byte",
          "[document_sections]") {
  // Saved before backing_device and loop_direct_io were recorded: they stay absent.
  const json saved = fixture("run_small.json");
  const json again = run_document_json(run_document_from_json(saved, "'run_small.json'"));
  for (const char* section : {"host", "target", "targets", "dataset"}) {
    INFO(section);
    CHECK(again.at(section).dump(2) == saved.at(section).dump(2));
  }
}
