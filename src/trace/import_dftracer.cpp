#include "trace/import_dftracer.hpp"

#include <fcntl.h>

#include <zlib.h>

#include <cerrno>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/text.hpp"
#include "trace/import.hpp"

namespace ioprobe::trace {

namespace {

using json = nlohmann::json;

// Lines of a plain or gzip file (zlib's gzopen reads both).
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), f_(gzopen(path.c_str(), "rb")) {
    if (!f_) throw UsageError(fmt::format("--import {}: cannot open it: {}", escape_bytes(path), errno_text(errno)));
  }
  ~LineReader() {
    if (f_) gzclose(f_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  bool next(std::string& line) {
    line.clear();
    char buf[65536];
    while (gzgets(f_, buf, sizeof buf)) {
      line += buf;
      if (!line.empty() && line.back() == '\n') {
        line.pop_back();
        return true;
      }
    }
    int err = 0;
    gzerror(f_, &err);
    if (err != Z_OK && err != Z_STREAM_END)
      throw UsageError(
          fmt::format("--import {}: the gzip data is damaged after {} line(s)", escape_bytes(path_), lines_));
    return !line.empty();
  }
  size_t lines_ = 0;

 private:
  std::string path_;
  gzFile f_;
};

int64_t num(const json& args, const char* key, int64_t dflt) {
  auto it = args.find(key);
  if (it == args.end()) return dflt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_unsigned()) return static_cast<int64_t>(it->get<uint64_t>());
  if (it->is_number_float()) return static_cast<int64_t>(it->get<double>());
  if (it->is_string()) {
    try {
      return std::stoll(it->get<std::string>());
    } catch (...) {
      return dflt;
    }
  }
  return dflt;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return it->dump();
  return "";
}

bool kind_of(const std::string& name, OpKind* kind) {
  static const std::map<std::string, OpKind>
      kKinds{{"open", OpKind::open},       {"open64", OpKind::open},    {"openat", OpKind::open},
             {"openat64", OpKind::open},   {"creat", OpKind::open},     {"creat64", OpKind::open},
             {"fopen", OpKind::open},      {"fopen64", OpKind::open},   {"close", OpKind::close},
             {"fclose", OpKind::close},    {"read", OpKind::read},      {"pread", OpKind::read},
             {"pread64", OpKind::read},    {"readv", OpKind::read},     {"preadv", OpKind::read},
             {"preadv2", OpKind::read},    {"fread", OpKind::read},     {"lseek", OpKind::lseek},
             {"lseek64", OpKind::lseek},   {"fseek", OpKind::lseek},    {"fseeko", OpKind::lseek},
             {"stat", OpKind::stat},       {"stat64", OpKind::stat},    {"lstat", OpKind::stat},
             {"lstat64", OpKind::stat},    {"fstat", OpKind::stat},     {"fstat64", OpKind::stat},
             {"__xstat", OpKind::stat},    {"__xstat64", OpKind::stat}, {"__lxstat", OpKind::stat},
             {"__lxstat64", OpKind::stat}, {"__fxstat", OpKind::stat},  {"__fxstat64", OpKind::stat},
             {"fstatat", OpKind::stat},    {"fstatat64", OpKind::stat}, {"newfstatat", OpKind::stat},
             {"statx", OpKind::stat},      {"mmap", OpKind::mmap},      {"mmap64", OpKind::mmap},
             {"munmap", OpKind::munmap}};
  auto it = kKinds.find(name);
  if (it == kKinds.end()) return false;
  *kind = it->second;
  return true;
}

struct DftracerFd {
  int32_t file = -1;
  uint64_t pos = 0;
};

}  // namespace

Trace import_dftracer(const std::string& path) {
  LineReader in(path);
  Trace t;
  t.source = "dftracer";
  t.limits = {
      "DFTracer records no thread CPU time: the gaps between calls cannot be split into compute and waiting",
      "DFTracer's timestamps and durations are microseconds: calls shorter than 1 us show as 0",
      "DFTracer may hash file names (fhash); a hash without its FH record stays a hash and its size is unknown",
      "fread events carry no return value in DFTracer: their bytes are taken as size x nmemb",
      "no DataLoader batch or worker marks (DFTracer's Python API events are not mapped)",
  };
  std::unordered_map<std::string, std::string> fhash;  // hash -> path
  struct Pending {
    json event;
    size_t line;
  };
  std::vector<Pending> events;
  std::string line;
  size_t line_no = 0;
  uint64_t aggregated = 0;
  while (in.next(line)) {
    ++line_no;
    in.lines_ = line_no;
    size_t a = line.find_first_not_of(" \t\r,[]");
    if (a == std::string::npos) continue;  // "[", "]", blank
    size_t b = line.find_last_not_of(" \t\r,");
    json j = json::parse(line.substr(a, b - a + 1), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw UsageError(fmt::format("--import {} line {}: not a JSON event; is this a DFTracer .pfw trace?",
                                   escape_bytes(path), line_no));
    const json& ph = j.contains("ph") ? j["ph"] : json();
    bool meta = (ph.is_string() && ph.get<std::string>() == "M") || (ph.is_number() && ph.get<int>() == 4);
    bool complete = (ph.is_string() && ph.get<std::string>() == "X") || (ph.is_number() && ph.get<int>() == 1);
    bool agg = (ph.is_number() && ph.get<int>() == 3) || (j.contains("args") && j["args"].contains("dft_cnt"));
    if (meta) {
      if (str(j, "name") == "FH" && j.contains("args")) fhash[str(j["args"], "value")] = str(j["args"], "name");
      continue;
    }
    if (agg) {
      ++aggregated;
      continue;
    }
    if (complete) events.push_back({std::move(j), line_no});
  }
  if (aggregated)
    t.limits.push_back(fmt::format("{} aggregated DFTracer event(s) (DFTRACER_ENABLE_AGGREGATION) hold no single "
                                   "call and were left out",
                                   aggregated));

  std::unordered_map<std::string, int32_t> file_ids;
  auto file_id = [&](const std::string& p) {
    auto [it, added] = file_ids.emplace(p, static_cast<int32_t>(t.files.size()));
    if (added) t.files.push_back(FileEntry{p, 0, false});
    return it->second;
  };
  // Directories (a directory call names them, or an open with O_DIRECTORY) are not data files;
  // their calls are dropped at the end, as the recorder's fstat after an open drops them.
  std::unordered_map<std::string, bool> dirs;
  auto is_dir_event = [](const std::string& name) {
    return name == "opendir" || name == "fdopendir" || name == "readdir" || name == "readdir64" || name == "mkdir" ||
           name == "rmdir" || name == "getdents" || name == "getdents64" || name == "chdir";
  };
  std::map<std::pair<int64_t, int64_t>, size_t> streams;  // (pid, tid) -> index
  std::map<std::pair<int64_t, int64_t>, DftracerFd> fds;  // (pid, fd)
  bool unresolved_hash = false;
  int64_t origin = INT64_MAX;
  for (auto& [j, ln] : events) {
    std::string name = str(j, "name");
    OpKind kind = OpKind::stat;
    const bool dir_event = is_dir_event(name);
    if (!dir_event && !kind_of(name, &kind)) continue;
    const json args = j.contains("args") && j["args"].is_object() ? j["args"] : json::object();
    int64_t pid = num(j, "pid", 0), tid = num(j, "tid", pid);
    int64_t fd = num(args, "fd", -1);
    std::string file = str(args, "fname");
    if (file.empty()) {
      std::string h = str(args, "fhash");
      if (!h.empty()) {
        auto it = fhash.find(h);
        if (it != fhash.end()) file = it->second;
        else {
          file = "fhash:" + h;
          unresolved_hash = true;
        }
      }
    }
    if (!file.empty() && file.rfind("fhash:", 0) != 0) file = normalize_path(file);
    if (dir_event || (kind == OpKind::open && (num(args, "flags", 0) & O_DIRECTORY) != 0)) {
      if (!file.empty()) dirs[file] = true;
      continue;
    }
    int32_t fid = -1;
    if (!file.empty()) {
      if (file.rfind("fhash:", 0) != 0 && !is_data_path(file)) continue;
      fid = file_id(file);
    } else if (fd >= 0) {
      auto it = fds.find({pid, fd});
      if (it == fds.end() || it->second.file < 0) continue;  // not a data file we saw opened
      fid = it->second.file;
    } else {
      continue;
    }
    Op op;
    op.kind = kind;
    op.call = name;
    op.file = fid;
    op.start_ns = num(j, "ts", 0) * 1000;
    op.dur_ns = std::max<int64_t>(0, num(j, "dur", 0) * 1000);
    origin = std::min(origin, op.start_ns);
    int64_t ret = num(args, "ret", INT64_MIN);
    if (kind == OpKind::open) {
      if (ret >= 0 && ret != INT64_MIN && name.rfind("fopen", 0) != 0) fds[{pid, ret}] = DftracerFd{fid, 0};
      if (ret == -1) op.error = static_cast<int32_t>(num(args, "errno", 0));
    } else if (kind == OpKind::close) {
      if (fd >= 0) fds.erase({pid, fd});
    } else if (kind == OpKind::read) {
      uint64_t req = name == "fread" ? static_cast<uint64_t>(std::max<int64_t>(0, num(args, "size", 0)) *
                                                             std::max<int64_t>(0, num(args, "nmemb", 0)))
                                     : static_cast<uint64_t>(std::max<int64_t>(0, num(args, "count", 0)));
      op.requested = req;
      op.bytes = ret == INT64_MIN ? req : (ret > 0 ? static_cast<uint64_t>(ret) : 0);
      if (ret == -1) op.error = static_cast<int32_t>(num(args, "errno", 0));
      int64_t off = num(args, "offset", -1);
      DftracerFd* st = fd >= 0 && fds.count({pid, fd}) ? &fds[{pid, fd}] : nullptr;
      if (off >= 0) op.offset = static_cast<uint64_t>(off);
      else if (st) {
        op.offset = st->pos;
        st->pos += op.bytes;
      }
    } else if (kind == OpKind::lseek) {
      if (ret >= 0 && ret != INT64_MIN) {
        op.offset = static_cast<uint64_t>(ret);
        if (fd >= 0 && fds.count({pid, fd})) fds[{pid, fd}].pos = op.offset;
      }
    } else if (kind == OpKind::mmap) {
      op.offset = static_cast<uint64_t>(std::max<int64_t>(0, num(args, "offset", 0)));
      op.requested = static_cast<uint64_t>(std::max<int64_t>(0, num(args, "length", num(args, "len", 0))));
      t.mapped.mapped_bytes += op.requested;
    }
    auto [it, added] = streams.emplace(std::make_pair(pid, tid), t.streams.size());
    if (added) {
      Stream s;
      s.pid = static_cast<int32_t>(pid);
      s.tid = static_cast<int32_t>(tid);
      s.role = pid == tid ? "process" : "thread";
      t.streams.push_back(std::move(s));
    }
    t.streams[it->second].ops.push_back(std::move(op));
  }
  std::vector<bool> drop(t.files.size(), false);
  for (size_t i = 0; i < t.files.size(); ++i) drop[i] = dirs.count(t.files[i].path) > 0;
  drop_files(t, drop);
  if (unresolved_hash) t.anonymized = true;
  // The earliest process's main thread is the job's main.
  if (!t.streams.empty()) {
    size_t first = 0;
    int64_t first_t = INT64_MAX;
    for (size_t i = 0; i < t.streams.size(); ++i)
      if (t.streams[i].pid == t.streams[i].tid && !t.streams[i].ops.empty() &&
          t.streams[i].ops.front().start_ns < first_t) {
        first_t = t.streams[i].ops.front().start_ns;
        first = i;
      }
    t.streams[first].role = "main";
  }
  finish_imported(t, origin == INT64_MAX ? 0 : origin);
  return t;
}

}  // namespace ioprobe::trace
