// The shared document sections (report/document_sections.hpp): built from the probed values,
// written, and read back strictly.
#include "report/document_sections.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"
#include "engine/engine_kind.hpp"

namespace ioprobe {

namespace {

template <class T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// j[key] as T, or nullopt when it is null; missing or mistyped refused.
template <class T>
std::optional<T> nullable_field(const nlohmann::json& j, const char* key, const std::string& w) {
  const nlohmann::json& v = json_at(j, key, w);
  if (v.is_null()) return std::nullopt;
  return json_as<T>(v, json_path(w, key));
}

// j[key] as T when the key is there (a field a writer leaves out by design), else nullopt.
template <class T>
std::optional<T> optional_field(const nlohmann::json& j, const char* key, const std::string& w) {
  if (!j.contains(key)) return std::nullopt;
  return json_field<T>(j, key, w);
}

template <class T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

void check_object(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) json_detail::throw_mistyped(j, where, "a JSON object");
}

}  // namespace

HostSection host_section(const HostInfo& h) {
  return {.hostname = escape_bytes(h.hostname),
          .kernel = h.kernel,
          .cpus_online = h.cpus_online,
          .cpus_allowed = h.cpus_allowed,
          .cpu_list = cpu_list_string(h.allowed_cpu_list),
          .memory_bytes = h.memory_bytes,
          .cgroup_memory_limit_bytes = h.cgroup_memory_limit_bytes,
          .cgroup_memory_limit_source = h.cgroup_memory_limit_source};
}

nlohmann::json host_section_json(const HostSection& h) {
  return {{"hostname", h.hostname},
          {"kernel", h.kernel},
          {"cpus_online", h.cpus_online},
          {"cpus_allowed", h.cpus_allowed},
          {"cpu_list", h.cpu_list},
          {"memory_bytes", h.memory_bytes},
          {"cgroup_memory_limit_bytes", h.cgroup_memory_limit_bytes},
          {"cgroup_memory_limit_source", h.cgroup_memory_limit_source}};
}

HostSection host_section_from_json(const nlohmann::json& j, const std::string& w) {
  check_object(j, w);
  HostSection h;
  h.hostname = json_field<std::string>(j, "hostname", w);
  h.kernel = json_field<std::string>(j, "kernel", w);
  h.cpus_online = json_field<int>(j, "cpus_online", w);
  h.cpus_allowed = json_field<int>(j, "cpus_allowed", w);
  h.cpu_list = json_field<std::string>(j, "cpu_list", w);
  h.memory_bytes = json_field<uint64_t>(j, "memory_bytes", w);
  h.cgroup_memory_limit_bytes = json_field<uint64_t>(j, "cgroup_memory_limit_bytes", w);
  h.cgroup_memory_limit_source = json_field<std::string>(j, "cgroup_memory_limit_source", w);
  return h;
}

TargetSection target_section(const TargetInfo& t) {
  TargetSection s;
  s.path = escape_bytes(t.path);
  s.fs_type = t.fs_type;
  s.fs_magic = fmt::format("0x{:x}", t.fs_magic);
  s.mount_point = escape_bytes(t.mount_point);
  s.mount_source = escape_bytes(t.mount_source);
  s.mount_fstype = t.mount_fstype;
  s.mount_options = t.mount_options;
  s.device = t.device;
  s.disk = t.disk;
  for (const auto& l : t.device_chain) s.device_chain.push_back({escape_bytes(l.name), l.kind, escape_bytes(l.detail)});
  s.backing_file = escape_bytes(t.backing_file);
  s.backing_device = t.backing_device;
  if (t.loop_direct_io >= 0) s.loop_direct_io = t.loop_direct_io == 1;
  s.raid.kind = t.raid_kind;
  s.raid.level = t.raid_level;
  s.raid.metadata_level = t.raid_metadata_level;
  for (const auto& m : t.raid_members) s.raid.members.push_back(escape_bytes(m));
  if (t.rotational != -1) s.rotational = t.rotational;
  if (t.logical_block_bytes) s.logical_block_bytes = t.logical_block_bytes;
  if (t.physical_block_bytes) s.physical_block_bytes = t.physical_block_bytes;
  if (t.dio_mem_align_bytes) s.dio_mem_align_bytes = t.dio_mem_align_bytes;
  if (t.dio_offset_align_bytes) s.dio_offset_align_bytes = t.dio_offset_align_bytes;
  if (t.nr_requests != -1) s.nr_requests = t.nr_requests;
  s.scheduler = t.scheduler;
  s.device_model = escape_bytes(t.device_model);
  s.nvme = t.nvme;
  s.device_numa_node = t.device_numa_node;
  s.o_direct = t.o_direct < 0 ? "not probed" : t.o_direct == 1 ? "accepted" : "refused";
  s.o_direct_errno = t.o_direct_errno ? errno_name(t.o_direct_errno) : "";
  s.o_direct_probe_file = escape_bytes(t.o_direct_probe_file);
  s.memory_backed = t.memory_backed;
  s.network = t.network;
  s.free_bytes = t.free_bytes;
  s.free_bytes_known = t.free_known;
  s.free_inodes = t.free_inodes;
  for (const auto& w : t.warnings) s.warnings.push_back(escape_bytes(w));
  return s;
}

nlohmann::json target_section_json(const TargetSection& t) {
  nlohmann::json chain = nlohmann::json::array();
  for (const auto& l : t.device_chain) chain.push_back({{"name", l.name}, {"kind", l.kind}, {"detail", l.detail}});
  nlohmann::json j = {{"path", t.path},
                      {"fs_type", t.fs_type},
                      {"fs_magic", t.fs_magic},
                      {"mount_point", t.mount_point},
                      {"mount_source", t.mount_source},
                      {"mount_fstype", t.mount_fstype},
                      {"mount_options", t.mount_options},
                      {"device", t.device},
                      {"disk", t.disk},
                      {"device_chain", chain},
                      {"backing_file", t.backing_file},
                      {"raid",
                       {{"kind", t.raid.kind},
                        {"level", t.raid.level},
                        {"metadata_level", t.raid.metadata_level},
                        {"members", t.raid.members},
                        {"member_count", t.raid.members.size()}}},
                      {"rotational", or_null(t.rotational)},
                      {"logical_block_bytes", or_null(t.logical_block_bytes)},
                      {"physical_block_bytes", or_null(t.physical_block_bytes)},
                      {"dio_mem_align_bytes", or_null(t.dio_mem_align_bytes)},
                      {"dio_offset_align_bytes", or_null(t.dio_offset_align_bytes)},
                      {"nr_requests", or_null(t.nr_requests)},
                      {"scheduler", t.scheduler},
                      {"device_model", t.device_model},
                      {"nvme", t.nvme},
                      {"device_numa_node", t.device_numa_node},
                      {"o_direct", t.o_direct},
                      {"o_direct_errno", t.o_direct_errno},
                      {"o_direct_probe_file", t.o_direct_probe_file},
                      {"memory_backed", t.memory_backed},
                      {"network", t.network},
                      {"free_bytes", t.free_bytes},
                      {"free_bytes_known", t.free_bytes_known},
                      {"free_inodes", t.free_inodes},
                      {"warnings", t.warnings}};
  if (t.loop_keys) {
    j["backing_device"] = t.backing_device;
    j["loop_direct_io"] = or_null(t.loop_direct_io);
  }
  if (const auto& r = t.reading) {
    j["cache"] = r->cache;
    j["direct"] = r->direct;
    j["cache_detail"] = r->cache_detail;
    j["engine"] = to_string(r->engine);
    j["engine_reason"] = r->engine_reason;
  }
  if (const auto& f = t.run) {
    j["numa"] = f->numa;
    j["numa_reason"] = f->numa_reason;
    j["epoch_resident_fraction"] = f->epoch_resident_fraction;
    j["residency_method"] = f->residency_method;
    j["epoch_source"] = f->epoch_source;
    if (const auto& b = f->cache_budget)
      j["cache_budget"] = {{"bytes", b->bytes},
                           {"source", b->source},
                           {"dataset_bytes", b->dataset_bytes},
                           {"fits", b->fits}};
  }
  return j;
}

namespace {

TargetRaid raid_from_json(const nlohmann::json& j, const std::string& w) {
  check_object(j, w);
  TargetRaid r;
  r.kind = json_field<std::string>(j, "kind", w);
  r.level = json_field<std::string>(j, "level", w);
  r.metadata_level = json_field<std::string>(j, "metadata_level", w);
  r.members = json_field<std::vector<std::string>>(j, "members", w);
  if (const auto n = json_field<uint64_t>(j, "member_count", w); n != r.members.size())
    throw UsageError(fmt::format("{}: {} is not the number of members ({}); the document was edited or damaged",
                                 json_path(w, "member_count"), n, r.members.size()));
  return r;
}

TargetReadSetting reading_from_json(const nlohmann::json& j, const std::string& w) {
  TargetReadSetting r;
  r.cache = json_field<std::string>(j, "cache", w);
  r.direct = json_field<bool>(j, "direct", w);
  r.cache_detail = json_field<std::string>(j, "cache_detail", w);
  r.engine = engine_kind_field(j, "engine", w);
  r.engine_reason = json_field<std::string>(j, "engine_reason", w);
  return r;
}

TargetRunFacts run_facts_from_json(const nlohmann::json& j, const std::string& w) {
  TargetRunFacts f;
  f.numa = json_field<std::string>(j, "numa", w);
  f.numa_reason = json_field<std::string>(j, "numa_reason", w);
  f.epoch_resident_fraction = json_field<std::vector<double>>(j, "epoch_resident_fraction", w);
  f.residency_method = json_field<std::string>(j, "residency_method", w);
  f.epoch_source = json_field<std::vector<std::string>>(j, "epoch_source", w);
  if (j.contains("cache_budget")) {  // a warm run checked against its budget only
    const nlohmann::json& b = j.at("cache_budget");
    const std::string bw = json_path(w, "cache_budget");
    check_object(b, bw);
    f.cache_budget = TargetCacheBudget{.bytes = json_field<uint64_t>(b, "bytes", bw),
                                       .source = json_field<std::string>(b, "source", bw),
                                       .dataset_bytes = json_field<uint64_t>(b, "dataset_bytes", bw),
                                       .fits = json_field<bool>(b, "fits", bw)};
  }
  return f;
}

}  // namespace

TargetSection target_section_from_json(const nlohmann::json& j, const std::string& w, TargetKeys keys) {
  check_object(j, w);
  TargetSection t;
  t.path = json_field<std::string>(j, "path", w);
  t.fs_type = json_field<std::string>(j, "fs_type", w);
  t.fs_magic = json_field<std::string>(j, "fs_magic", w);
  t.mount_point = json_field<std::string>(j, "mount_point", w);
  t.mount_source = json_field<std::string>(j, "mount_source", w);
  t.mount_fstype = json_field<std::string>(j, "mount_fstype", w);
  t.mount_options = json_field<std::string>(j, "mount_options", w);
  t.device = json_field<std::string>(j, "device", w);
  t.disk = json_field<std::string>(j, "disk", w);
  const nlohmann::json& chain = json_array_at(j, "device_chain", w);
  for (size_t i = 0; i < chain.size(); ++i) {
    const std::string lw = json_path(json_path(w, "device_chain"), i);
    check_object(chain[i], lw);
    t.device_chain.push_back({json_field<std::string>(chain[i], "name", lw),
                              json_field<std::string>(chain[i], "kind", lw),
                              json_field<std::string>(chain[i], "detail", lw)});
  }
  t.backing_file = json_field<std::string>(j, "backing_file", w);
  // Older documents have neither key (written before loop devices' backing devices were recorded).
  t.loop_keys = j.contains("backing_device") || j.contains("loop_direct_io");
  if (t.loop_keys) {
    t.backing_device = json_field<std::string>(j, "backing_device", w);
    t.loop_direct_io = nullable_field<bool>(j, "loop_direct_io", w);
  }
  t.raid = raid_from_json(json_at(j, "raid", w), json_path(w, "raid"));
  t.rotational = nullable_field<int>(j, "rotational", w);
  t.logical_block_bytes = nullable_field<uint32_t>(j, "logical_block_bytes", w);
  t.physical_block_bytes = nullable_field<uint32_t>(j, "physical_block_bytes", w);
  t.dio_mem_align_bytes = nullable_field<uint32_t>(j, "dio_mem_align_bytes", w);
  t.dio_offset_align_bytes = nullable_field<uint32_t>(j, "dio_offset_align_bytes", w);
  t.nr_requests = nullable_field<int>(j, "nr_requests", w);
  t.scheduler = json_field<std::string>(j, "scheduler", w);
  t.device_model = json_field<std::string>(j, "device_model", w);
  t.nvme = json_field<bool>(j, "nvme", w);
  t.device_numa_node = json_field<int>(j, "device_numa_node", w);
  t.o_direct = json_field<std::string>(j, "o_direct", w);
  t.o_direct_errno = json_field<std::string>(j, "o_direct_errno", w);
  t.o_direct_probe_file = json_field<std::string>(j, "o_direct_probe_file", w);
  t.memory_backed = json_field<bool>(j, "memory_backed", w);
  t.network = json_field<bool>(j, "network", w);
  t.free_bytes = json_field<uint64_t>(j, "free_bytes", w);
  t.free_bytes_known = json_field<bool>(j, "free_bytes_known", w);
  t.free_inodes = json_field<uint64_t>(j, "free_inodes", w);
  t.warnings = json_field<std::vector<std::string>>(j, "warnings", w);
  if (keys != TargetKeys::kProbed || j.contains("cache")) t.reading = reading_from_json(j, w);
  if (keys == TargetKeys::kRun || j.contains("numa")) t.run = run_facts_from_json(j, w);
  return t;
}

std::vector<TargetShareSection> target_share_sections(const std::vector<TargetShare>& targets) {
  uint64_t files = 0, bytes = 0;
  for (const auto& g : targets) {
    files += g.files;
    bytes += g.bytes;
  }
  std::vector<TargetShareSection> out;
  for (const auto& g : targets) {
    TargetShareSection s{.target = target_section(g.info), .files = g.files, .bytes = g.bytes};
    s.files_fraction = files ? static_cast<double>(g.files) / static_cast<double>(files) : 0.0;
    if (bytes) s.bytes_fraction = static_cast<double>(g.bytes) / static_cast<double>(bytes);
    out.push_back(std::move(s));
  }
  return out;
}

nlohmann::json targets_section_json(const std::vector<TargetShareSection>& targets) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : targets) {
    nlohmann::json j = target_section_json(g.target);
    j["files"] = g.files;
    j["bytes"] = g.bytes;
    j["files_fraction"] = g.files_fraction;
    j["bytes_fraction"] = or_null(g.bytes_fraction);
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<TargetShareSection> targets_section_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) json_detail::throw_mistyped(j, where, "an array");
  std::vector<TargetShareSection> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string w = json_path(where, i);
    TargetShareSection s;
    s.target = target_section_from_json(j[i], w);
    s.files = json_field<uint64_t>(j[i], "files", w);
    s.bytes = json_field<uint64_t>(j[i], "bytes", w);
    s.files_fraction = json_field<double>(j[i], "files_fraction", w);
    s.bytes_fraction = nullable_field<double>(j[i], "bytes_fraction", w);
    out.push_back(std::move(s));
  }
  return out;
}

nlohmann::json dataset_section_json(const DatasetSection& d) {
  nlohmann::json j = {{"preset", d.preset}, {"root", d.root},
                      {"files", d.files},   {"bytes", d.bytes},
                      {"kind", d.kind},     {"records_per_file", d.records_per_file},
                      {"action", d.action}, {"enumerate_s", d.enumerate_s}};
  put(j, "bytes_basis", d.bytes_basis);
  put(j, "description", d.description);
  put(j, "model", d.model);
  put(j, "dirs", d.dirs);
  put(j, "full_files", d.full_files);
  put(j, "size_dist", d.size_dist);
  put(j, "size_mean_bytes", d.size_mean_bytes);
  put(j, "size_stdev_bytes", d.size_stdev_bytes);
  put(j, "seed", d.seed);
  put(j, "generate_s", d.generate_s);
  put(j, "content", d.content);
  put(j, "source_files", d.source_files);
  put(j, "jpeg_padding_bytes", d.jpeg_padding_bytes);
  put(j, "records", d.records);
  put(j, "seq_len", d.seq_len);
  put(j, "token_bytes", d.token_bytes);
  if (const auto& g = d.generation) {
    nlohmann::json hosts = nlohmann::json::array();
    for (const auto& h : g->hosts)
      hosts.push_back({{"hostname", h.hostname},
                       {"host_index", h.host_index},
                       {"first_file", h.first_file},
                       {"files", h.files},
                       {"bytes", h.bytes},
                       {"generate_s", h.generate_s}});
    j["generation"] = {{"action", g->action}, {"split", g->split}, {"elapsed_s", g->elapsed_s}, {"hosts", hosts}};
  }
  put(j, "skipped", d.skipped);
  put(j, "duplicates", d.duplicates);
  put(j, "files_missing", d.files_missing);
  return j;
}

namespace {

DatasetGeneration generation_from_json(const nlohmann::json& j, const std::string& w) {
  check_object(j, w);
  DatasetGeneration g;
  g.action = json_field<std::string>(j, "action", w);
  g.split = json_field<std::string>(j, "split", w);
  g.elapsed_s = json_field<double>(j, "elapsed_s", w);
  const nlohmann::json& hosts = json_array_at(j, "hosts", w);
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::string hw = json_path(json_path(w, "hosts"), i);
    const nlohmann::json& h = hosts[i];
    g.hosts.push_back({.hostname = json_field<std::string>(h, "hostname", hw),
                       .host_index = json_field<int>(h, "host_index", hw),
                       .first_file = json_field<uint64_t>(h, "first_file", hw),
                       .files = json_field<uint64_t>(h, "files", hw),
                       .bytes = json_field<uint64_t>(h, "bytes", hw),
                       .generate_s = json_field<double>(h, "generate_s", hw)});
  }
  return g;
}

}  // namespace

DatasetSection dataset_section_from_json(const nlohmann::json& j, const std::string& w) {
  check_object(j, w);
  DatasetSection d;
  d.preset = json_field<std::string>(j, "preset", w);
  d.root = json_field<std::string>(j, "root", w);
  d.files = json_field<uint64_t>(j, "files", w);
  d.bytes = json_field<uint64_t>(j, "bytes", w);
  d.kind = json_field<std::string>(j, "kind", w);
  d.records_per_file = json_field<uint64_t>(j, "records_per_file", w);
  d.action = json_field<std::string>(j, "action", w);
  d.enumerate_s = json_field<double>(j, "enumerate_s", w);
  d.bytes_basis = optional_field<std::string>(j, "bytes_basis", w);
  d.description = optional_field<std::string>(j, "description", w);
  d.model = optional_field<std::string>(j, "model", w);
  d.dirs = optional_field<uint64_t>(j, "dirs", w);
  d.full_files = optional_field<uint64_t>(j, "full_files", w);
  d.size_dist = optional_field<std::string>(j, "size_dist", w);
  d.size_mean_bytes = optional_field<uint64_t>(j, "size_mean_bytes", w);
  d.size_stdev_bytes = optional_field<uint64_t>(j, "size_stdev_bytes", w);
  d.seed = optional_field<uint64_t>(j, "seed", w);
  d.generate_s = optional_field<double>(j, "generate_s", w);
  d.content = optional_field<std::string>(j, "content", w);
  d.source_files = optional_field<uint64_t>(j, "source_files", w);
  d.jpeg_padding_bytes = optional_field<uint64_t>(j, "jpeg_padding_bytes", w);
  d.records = optional_field<uint64_t>(j, "records", w);
  d.seq_len = optional_field<uint64_t>(j, "seq_len", w);
  d.token_bytes = optional_field<uint64_t>(j, "token_bytes", w);
  if (j.contains("generation")) d.generation = generation_from_json(j.at("generation"), json_path(w, "generation"));
  d.skipped = optional_field<uint64_t>(j, "skipped", w);
  d.duplicates = optional_field<uint64_t>(j, "duplicates", w);
  d.files_missing = optional_field<uint64_t>(j, "files_missing", w);
  // A generated dataset's settings come together: one present, all required.
  if (d.size_dist || d.description)
    for (const char* k : {"description", "model", "dirs", "full_files", "size_dist", "size_mean_bytes",
                          "size_stdev_bytes", "seed", "generate_s"})
      json_at(j, k, w);
  return d;
}

}  // namespace ioprobe
