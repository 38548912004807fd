#include "trace/import.hpp"

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
  if (p.empty()) return false;
  for (std::string_view pre : {"/proc/", "/sys/", "/dev/", "/run/", "/etc/", "/usr/", "/lib/", "/lib64/", "/bin/",
                               "/sbin/", "/opt/conda/lib/"})
    if (starts_with(p, pre) && !starts_with(p, "/dev/shm/")) return false;
  if (ends_with(p, ".py") || ends_with(p, ".pyc") || ends_with(p, ".so") || p.find(".so.") != p.npos) return false;
  for (std::string_view part : {"site-packages", "dist-packages", "__pycache__", "/.pyenv/"})
    if (p.find(part) != p.npos) return false;
  return true;
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
