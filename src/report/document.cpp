#include "report/document.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <fstream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

nlohmann::json host_json(const HostInfo& h) {
  return {{"hostname", escape_bytes(h.hostname)},
          {"kernel", h.kernel},
          {"cpus_online", h.cpus_online},
          {"cpus_allowed", h.cpus_allowed},
          {"cpu_list", cpu_list_string(h.allowed_cpu_list)},
          {"memory_bytes", h.memory_bytes},
          {"cgroup_memory_limit_bytes", h.cgroup_memory_limit_bytes},
          {"cgroup_memory_limit_source", h.cgroup_memory_limit_source}};
}

nlohmann::json target_json(const TargetInfo& t) {
  nlohmann::json chain = nlohmann::json::array();
  for (const auto& l : t.device_chain)
    chain.push_back({{"name", escape_bytes(l.name)}, {"kind", l.kind}, {"detail", escape_bytes(l.detail)}});
  nlohmann::json members = nlohmann::json::array();
  for (const auto& m : t.raid_members) members.push_back(escape_bytes(m));
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : t.warnings) warnings.push_back(escape_bytes(w));
  auto or_null = [](auto v, auto unknown) -> nlohmann::json {
    if (v == unknown) return nullptr;
    return v;
  };
  return {{"path", escape_bytes(t.path)},
          {"fs_type", t.fs_type},
          {"fs_magic", fmt::format("0x{:x}", t.fs_magic)},
          {"mount_point", escape_bytes(t.mount_point)},
          {"mount_source", escape_bytes(t.mount_source)},
          {"mount_fstype", t.mount_fstype},
          {"mount_options", t.mount_options},
          {"device", t.device},
          {"disk", t.disk},
          {"device_chain", chain},
          {"backing_file", escape_bytes(t.backing_file)},
          {"raid", {{"kind", t.raid_kind},
                    {"level", t.raid_level},
                    {"metadata_level", t.raid_metadata_level},
                    {"members", members},
                    {"member_count", t.raid_members.size()}}},
          {"rotational", or_null(t.rotational, -1)},
          {"logical_block_bytes", or_null(t.logical_block_bytes, 0u)},
          {"physical_block_bytes", or_null(t.physical_block_bytes, 0u)},
          {"dio_mem_align_bytes", or_null(t.dio_mem_align_bytes, 0u)},
          {"dio_offset_align_bytes", or_null(t.dio_offset_align_bytes, 0u)},
          {"nr_requests", or_null(t.nr_requests, -1)},
          {"scheduler", t.scheduler},
          {"device_model", escape_bytes(t.device_model)},
          {"nvme", t.nvme},
          {"device_numa_node", t.device_numa_node},
          {"o_direct", t.o_direct < 0 ? nlohmann::json("not probed") : nlohmann::json(t.o_direct == 1 ? "accepted" : "refused")},
          {"o_direct_errno", t.o_direct_errno ? errno_name(t.o_direct_errno) : ""},
          {"o_direct_probe_file", escape_bytes(t.o_direct_probe_file)},
          {"memory_backed", t.memory_backed},
          {"network", t.network},
          {"free_bytes", t.free_bytes}, {"free_bytes_known", t.free_known},
          {"free_inodes", t.free_inodes},
          {"warnings", warnings}};
}

nlohmann::json targets_json(const std::vector<TargetShare>& targets) {
  uint64_t files = 0, bytes = 0;
  for (const auto& g : targets) {
    files += g.files;
    bytes += g.bytes;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : targets) {
    nlohmann::json j = target_json(g.info);
    j["files"] = g.files;
    j["bytes"] = g.bytes;
    j["files_fraction"] = files ? static_cast<double>(g.files) / static_cast<double>(files) : 0.0;
    // null when no size is known (a --data walk does not stat its files)
    j["bytes_fraction"] = bytes ? nlohmann::json(static_cast<double>(g.bytes) / static_cast<double>(bytes)) : nlohmann::json();
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json document_header(const std::string& kind, const std::vector<std::string>& argv, const HostInfo& host) {
  nlohmann::json cmd = nlohmann::json::array();
  for (const auto& a : argv) cmd.push_back(escape_bytes(a));
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return {{"schema", kResultSchema}, {"ioprobe_version", IOPROBE_VERSION}, {"kind", kind},
          {"command", cmd},          {"created_utc", when},                {"host", host_json(host)},
          {"partial", false},        {"warnings", nlohmann::json::array()}};
}

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  // Paths are escaped reversibly with escape_bytes() before they enter the document; `replace`
  // only guards against a stray invalid byte elsewhere (it must never abort a finished run).
  write_file_atomically(path, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                        "check that the directory exists and is writable");
}

nlohmann::json read_json_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw UsageError(fmt::format("'{}' is not a regular file; give a result document (FILE.json)", escape_bytes(path)));
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("cannot read '{}': {}", escape_bytes(path), errno_text(errno)));
  try {
    nlohmann::json doc = nlohmann::json::parse(in);
    if (!doc.is_object() || doc.value("schema", "") != kResultSchema)
      throw UsageError(fmt::format("'{}' is not an ioprobe result document (schema is not {})", escape_bytes(path),
                                   kResultSchema));
    return doc;
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("'{}' is not valid JSON: {}", escape_bytes(path), e.what()));
  }
}

}  // namespace ioprobe
