#include "report/document.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <fstream>

#include <fmt/format.h>

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
          {"cgroup_memory_limit_bytes", h.cgroup_memory_limit_bytes}};
}

nlohmann::json target_json(const TargetInfo& t) {
  return {{"path", escape_bytes(t.path)},
          {"fs_type", t.fs_type},
          {"mount_point", escape_bytes(t.mount_point)},
          {"mount_source", escape_bytes(t.mount_source)},
          {"mount_fstype", t.mount_fstype},
          {"mount_options", t.mount_options},
          {"device", t.device},
          {"rotational", t.rotational},
          {"memory_backed", t.memory_backed},
          {"network", t.network},
          {"free_bytes", t.free_bytes},
          {"free_inodes", t.free_inodes}};
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
  std::string text = doc.dump(2) + "\n";
  std::string tmp = path + ".ioprobe-tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(errno, "create", tmp, "check that the directory exists and is writable");
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      unlink(tmp.c_str());
      throw IoError(e, "write", tmp);
    }
    off += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    throw IoError(e, "fsync", tmp);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    throw IoError(e, "rename", tmp + " -> " + path);
  }
}

nlohmann::json read_json_file(const std::string& path) {
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
