#include "trace/import.hpp"

#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "trace/import_dftracer.hpp"
#include "trace/import_strace.hpp"

namespace ioprobe::trace {

namespace {
bool ends_with(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.substr(s.size() - suf.size()) == suf;
}
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
}  // namespace

bool is_data_path(std::string_view p) {
  if (p.empty() || p.back() == '/') return false;
  for (std::string_view pre : {"/proc/", "/sys/", "/dev/", "/run/", "/etc/", "/usr/", "/lib/", "/lib64/", "/bin/",
                               "/sbin/", "/opt/conda/lib/"})
    if (starts_with(p, pre) && !starts_with(p, "/dev/shm/")) return false;
  if (starts_with(p, "/dev/shm/sem.") || starts_with(p, "/dev/shm/torch_")) return false;
  if (ends_with(p, ".py") || ends_with(p, ".pyc") || ends_with(p, ".so") || p.find(".so.") != p.npos) return false;
  for (std::string_view part : {"site-packages", "dist-packages", "__pycache__", "/.pyenv/"})
    if (p.find(part) != p.npos) return false;
  return true;
}

std::string normalize_path(std::string_view p) {
  if (p.empty()) return {};
  const bool abs = p.front() == '/';
  std::vector<std::string_view> parts;
  size_t at = 0;
  while (at <= p.size()) {
    size_t slash = p.find('/', at);
    if (slash == std::string_view::npos) slash = p.size();
    std::string_view seg = p.substr(at, slash - at);
    at = slash + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!parts.empty() && parts.back() != "..") parts.pop_back();
      else if (!abs) parts.push_back(seg);
      continue;
    }
    parts.push_back(seg);
  }
  std::string out = abs ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '/';
    out += parts[i];
  }
  if (out.empty()) out = ".";
  return out;
}

void drop_files(Trace& t, const std::vector<bool>& drop) {
  std::vector<int32_t> renum(t.files.size(), -1);
  std::vector<FileEntry> kept;
  for (size_t i = 0; i < t.files.size(); ++i) {
    if (i < drop.size() && drop[i]) continue;
    renum[i] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(t.files[i]));
  }
  t.files = std::move(kept);
  for (auto& s : t.streams) {
    std::vector<Op> ops;
    ops.reserve(s.ops.size());
    for (auto& op : s.ops) {
      if (op.file >= 0 && static_cast<size_t>(op.file) < renum.size()) {
        if (renum[op.file] < 0) continue;
        op.file = renum[op.file];
      }
      ops.push_back(std::move(op));
    }
    s.ops = std::move(ops);
  }
}

void finish_imported(Trace& t, int64_t origin_ns) {
  int64_t first = INT64_MAX;
  for (auto& s : t.streams) {
    for (auto& op : s.ops) first = std::min(first, op.start_ns - origin_ns);
    for (auto& m : s.marks) first = std::min(first, m.t_ns - origin_ns);
  }
  if (first == INT64_MAX) first = 0;
  int64_t last_end = 0;
  for (auto& s : t.streams) {
    for (auto& op : s.ops) {
      op.start_ns -= origin_ns + first;
      last_end = std::max(last_end, op.start_ns + op.dur_ns);
    }
    for (auto& m : s.marks) m.t_ns -= origin_ns + first;
    std::stable_sort(s.ops.begin(), s.ops.end(), [](const Op& a, const Op& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(s.marks.begin(), s.marks.end(), [](const Mark& a, const Mark& b) { return a.t_ns < b.t_ns; });
  }
  t.streams.erase(std::remove_if(t.streams.begin(), t.streams.end(),
                                 [](const Stream& s) { return s.ops.empty() && s.marks.empty(); }),
                  t.streams.end());
  t.duration_ns = last_end;
}

Trace import_trace(const std::string& path, const std::string& format) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("--import {} is a directory; give the log file itself (strace -o FILE, or a DFTracer "
                                 ".pfw or .pfw.gz file)",
                                 escape_bytes(path)));
  std::string f = format;
  if (f.empty()) {
    f = ends_with(path, ".pfw") || ends_with(path, ".pfw.gz") || ends_with(path, ".json") || ends_with(path, ".json.gz")
            ? "dftracer"
            : "strace";
  }
  Trace t;
  if (f == "dftracer") t = import_dftracer(path);
  else if (f == "strace") t = import_strace(path);
  else
    throw UsageError(
        fmt::format("--format '{}' is not a format ioprobe imports; give dftracer or strace", escape_bytes(format)));
  if (t.op_count() == 0)
    throw UsageError(fmt::format("{} ({}) holds no call on a data file ioprobe can replay; check that it is a {} log "
                                 "of the job (DFTracer: per-call events, aggregation off; strace: -f -ttt -T)",
                                 escape_bytes(path), f, f));
  return t;
}

}  // namespace ioprobe::trace
