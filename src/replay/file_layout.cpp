#include "replay/file_layout.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/free_space.hpp"
#include "core/rng.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace ioprobe::replay {

namespace {

constexpr const char* kMarkerName = ".ioprobe-replay-layout";
constexpr const char* kAnonPrefix = "anon:";

bool prefix_matches(const std::string& prefix, const std::string& path) {
  if (path.compare(0, prefix.size(), prefix) != 0) return false;
  if (path.size() == prefix.size()) return true;
  return prefix.back() == '/' || path[prefix.size()] == '/' || prefix == kAnonPrefix;
}

// The relative paths the marker lists (replay's own files under DIR).
std::set<std::string> read_marker(const std::string& marker) {
  std::set<std::string> own;
  std::ifstream in(marker);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) own.insert(unescape_bytes(line));
  return own;
}

void make_parent_dirs(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec)
    throw UsageError(fmt::format("--dir: cannot create the directory '{}': {}; give a --dir you may write to, with no "
                                 "file where the recorded paths need a directory",
                                 escape_bytes(parent.string()), errno_text(ec.value())));
}

// What a file that is not a directory is, for messages.
const char* file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// Why a path cannot be reached (stat failed with `err`), and what to do.
std::string unreachable(const std::string& dir, int err) {
  const char* why = err == ENOTDIR  ? "a component of the path is not a directory"
                    : err == EACCES ? "a directory above it cannot be entered (no search permission)"
                                    : "it cannot be looked up";
  return fmt::format("--dir '{}': {} ({}); give a --dir you may enter and write to", escape_bytes(dir), why,
                     errno_text(err));
}

constexpr uint64_t kBlock = 4096;  // a file's size is counted rounded up to this on disk

}  // namespace

MapRule parse_map_rule(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(fmt::format("--map '{}': expected OLD_PREFIX=NEW_PREFIX, e.g. --map /data/train=/mnt/nvme/train",
                                 escape_bytes(text)));
  MapRule r{text.substr(0, eq), text.substr(eq + 1)};
  if (r.old_prefix[0] != '/' && r.old_prefix.rfind(kAnonPrefix, 0) != 0)
    throw UsageError(fmt::format("--map '{}': OLD_PREFIX '{}' is not an absolute path (the trace holds absolute "
                                 "paths, or anon:HEX when anonymized)",
                                 escape_bytes(text), escape_bytes(r.old_prefix)));
  return r;
}

std::string map_path(const std::vector<MapRule>& rules, const std::string& recorded) {
  const MapRule* best = nullptr;
  for (const auto& r : rules)
    if (prefix_matches(r.old_prefix, recorded) && (!best || r.old_prefix.size() > best->old_prefix.size())) best = &r;
  if (!best) return "";
  return best->new_prefix + recorded.substr(best->old_prefix.size());
}

std::string dir_path(const std::string& dir, const std::string& recorded) {
  std::string rel = recorded;
  if (rel.rfind(kAnonPrefix, 0) == 0) rel = "anon/" + rel.substr(std::char_traits<char>::length(kAnonPrefix));
  while (!rel.empty() && rel.front() == '/') rel.erase(rel.begin());
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    if (rel.compare(start, end - start, "..") == 0 && end - start == 2)
      throw UsageError(fmt::format("trace path '{}' has a '..' component: it would leave --dir {}; map it with --map",
                                   escape_bytes(recorded), escape_bytes(dir)));
    start = end + 1;
  }
  if (rel.empty()) throw UsageError(fmt::format("trace path '{}' names no file", escape_bytes(recorded)));
  return dir + (dir.empty() || dir.back() == '/' ? "" : "/") + rel;
}

namespace {
bool needs_contents(trace::OpKind k) {
  return k == trace::OpKind::open || k == trace::OpKind::read || k == trace::OpKind::mmap;
}
}  // namespace

std::vector<bool> files_used(const trace::Trace& trace, const std::vector<size_t>& streams) {
  std::vector<bool> used(trace.files.size(), false);
  for (size_t s : streams)
    for (const auto& op : trace.streams.at(s).ops)
      if (op.error == 0 && op.file >= 0 && static_cast<size_t>(op.file) < used.size() && needs_contents(op.kind))
        used[op.file] = true;
  return used;
}

std::vector<bool> files_stat_only(const trace::Trace& trace, const std::vector<size_t>& streams) {
  const std::vector<bool> used = files_used(trace, streams);
  std::vector<bool> stated(trace.files.size(), false);
  for (size_t s : streams)
    for (const auto& op : trace.streams.at(s).ops)
      if (op.error == 0 && op.kind == trace::OpKind::stat && op.file >= 0 &&
          static_cast<size_t>(op.file) < stated.size() && !used[op.file])
        stated[op.file] = true;
  return stated;
}

std::vector<uint64_t> furthest_bytes(const trace::Trace& trace) {
  std::vector<uint64_t> far(trace.files.size(), 0);
  for (const auto& s : trace.streams)
    for (const auto& op : s.ops) {
      if (op.file < 0 || static_cast<size_t>(op.file) >= far.size()) continue;
      if (op.kind == trace::OpKind::read) far[op.file] = std::max(far[op.file], op.offset + op.bytes);
      if (op.kind == trace::OpKind::mmap) far[op.file] = std::max(far[op.file], op.offset + op.requested);
    }
  return far;
}

LayoutPlan plan_layout(const trace::Trace& trace, const std::vector<bool>& used, const LayoutOptions& opts,
                       const std::vector<bool>& stat_only) {
  LayoutPlan plan;
  plan.files.resize(trace.files.size());
  std::string root = opts.dir;
  if (!root.empty() && !opts.clone_subdir.empty()) root += "/" + opts.clone_subdir;
  if (!opts.dir.empty()) plan.marker = opts.dir + "/" + kMarkerName;
  const std::set<std::string> own = plan.marker.empty() ? std::set<std::string>{} : read_marker(plan.marker);
  const std::vector<uint64_t> far = furthest_bytes(trace);
  std::string missing_example;
  for (size_t id = 0; id < trace.files.size(); ++id) {
    if (id < stat_only.size() && stat_only[id] && (id >= used.size() || !used[id])) {
      // Never laid out: its stats go to the file where one exists, else are not issued.
      PlannedFile& p = plan.files[id];
      p.recorded = trace.files[id].path;
      std::string where = map_path(opts.maps, p.recorded);
      if (where.empty() && !root.empty()) where = dir_path(root, p.recorded);
      struct stat st {};
      if (!where.empty() && ::stat(where.c_str(), &st) == 0 && S_ISREG(st.st_mode)) p.path = where;
      ++plan.stat_only;
      if (p.path.empty() && plan.stat_only_missing++ == 0) missing_example = where.empty() ? p.recorded : where;
      continue;
    }
    if (id >= used.size() || !used[id]) continue;
    const trace::FileEntry& f = trace.files[id];
    PlannedFile& p = plan.files[id];
    p.recorded = f.path;
    p.size = f.size_known ? f.size_bytes : far[id];
    struct stat st {};
    if (std::string mapped = map_path(opts.maps, f.path); !mapped.empty()) {
      p.path = mapped;
      if (stat(mapped.c_str(), &st) != 0)
        throw UsageError(fmt::format("--map: {} (recorded as {}) does not exist: {}; replay reads mapped files as they "
                                     "are and never creates them; fix the rule, or use --dir DIR to lay out the "
                                     "recorded files",
                                     escape_bytes(mapped), escape_bytes(f.path), errno_text(errno)));
      if (!S_ISREG(st.st_mode))
        throw UsageError(fmt::format("--map: {} (recorded as {}) is not a regular file", escape_bytes(mapped),
                                     escape_bytes(f.path)));
      p.existing = static_cast<uint64_t>(st.st_size);
      p.action = FileAction::mapped;
      ++plan.mapped;
      if (p.existing < far[id])
        plan.warnings.push_back(fmt::format("{} holds {} B but the recorded reads reach byte {}: reads past its end "
                                            "return short",
                                            escape_bytes(mapped), p.existing, far[id]));
      continue;
    }
    if (root.empty())
      throw UsageError(fmt::format("no --map rule covers {} and no --dir was given: add --map {}=NEW_PREFIX onto "
                                   "existing files, or --dir DIR to lay out the recorded files there",
                                   escape_bytes(f.path), escape_bytes(f.path)));
    p.path = dir_path(root, f.path);
    const std::string rel = p.path.substr(opts.dir.size() + 1);
    if (lstat(p.path.c_str(), &st) != 0) {
      if (errno != ENOENT)
        throw UsageError(fmt::format("--dir: '{}' (recorded as {}) cannot be looked up: {}; give a --dir you may "
                                     "enter and write to, with no file where the recorded paths need a directory",
                                     escape_bytes(p.path), escape_bytes(f.path), errno_text(errno)));
      p.action = FileAction::create;
      plan.create_bytes += p.size;
      ++plan.created;
      continue;
    }
    if (!S_ISREG(st.st_mode))
      throw UsageError(fmt::format("--dir: {} exists and is not a regular file; replay leaves it alone: give another "
                                   "--dir",
                                   escape_bytes(p.path)));
    p.existing = static_cast<uint64_t>(st.st_size);
    if (p.existing == p.size) {
      p.action = FileAction::reuse;
      ++plan.reused;
    } else if (own.count(rel)) {
      p.action = FileAction::rewrite;
      plan.create_bytes += p.size;
      ++plan.created;
    } else {
      throw UsageError(fmt::format("--dir: {} exists with {} B, not the recorded {} B, and replay did not create it "
                                   "(it is not listed in {}); replay never writes into a file it did not create: "
                                   "give another --dir, or --map {}=... onto it to read it as it is",
                                   escape_bytes(p.path), p.existing, p.size, escape_bytes(plan.marker),
                                   escape_bytes(f.path)));
    }
  }
  if (plan.stat_only_missing)
    plan.warnings.push_back(fmt::format("{} file(s) the job only stat'ed (never opened or read) are not laid out; {} "
                                        "of them exist nowhere here (e.g. {}), so their stat calls are not replayed",
                                        plan.stat_only, plan.stat_only_missing, escape_bytes(missing_example)));
  return plan;
}

void check_trace_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return;  // the trace reader names a missing or unreadable path
  if (S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("trace '{}' is a directory, not a trace file; give the file ioprobe record --out "
                                 "wrote (or an import)",
                                 escape_bytes(path)));
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw UsageError(fmt::format("trace '{}' is {}, not a regular file; give the file ioprobe record --out wrote (or "
                                 "an import)",
                                 escape_bytes(path), file_kind(st.st_mode)));
}

void check_layout_dir(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      throw UsageError(fmt::format("--dir '{}' is {}, not a directory; give a directory (replay creates it when "
                                   "missing)",
                                   escape_bytes(dir), file_kind(st.st_mode)));
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      throw UsageError(fmt::format("--dir '{}' is not writable: {}; replay lays out the recorded files there: give a "
                                   "--dir you may write to, or --map onto existing files",
                                   escape_bytes(dir), errno_text(errno)));
    check_can_create_in(dir, "--dir");  // root passes access() on read-only mounts
    return;
  }
  if (errno != ENOENT) throw UsageError(unreachable(dir, errno));
  // Missing: the nearest existing directory above it must let replay create it.
  std::filesystem::path p(dir);
  while (true) {
    std::filesystem::path up = p.parent_path();
    if (up.empty()) up = ".";
    if (up == p) return;  // "/" or "." missing: nothing to check
    p = up;
    if (stat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      throw UsageError(unreachable(dir, errno));
    }
    if (!S_ISDIR(st.st_mode))
      throw UsageError(fmt::format("--dir '{}' cannot be created: '{}' above it is {}, not a directory; give another "
                                   "--dir",
                                   escape_bytes(dir), escape_bytes(p.string()), file_kind(st.st_mode)));
    if (::access(p.c_str(), W_OK | X_OK) != 0)
      throw UsageError(fmt::format("--dir '{}' does not exist and cannot be created: '{}' above it is not writable "
                                   "({}); give a --dir you may write to, or create it first",
                                   escape_bytes(dir), escape_bytes(p.string()), errno_text(errno)));
    return;
  }
}

std::unique_ptr<DirLock> lock_layout_dir(const std::string& dir,
                                         const std::function<void(const std::string& holder)>& on_wait) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    throw UsageError(fmt::format("--dir '{}' cannot be created: {}; give a --dir you may write to", escape_bytes(dir),
                                 ec ? errno_text(ec.value()) : "it exists and is not a directory"));
  return std::make_unique<DirLock>(dir, DirLock::Mode::kExclusive, "", on_wait);
}

uint64_t layout_disk_bytes(const LayoutPlan& plan) {
  uint64_t need = 0;
  for (const auto& p : plan.files)
    if (p.action == FileAction::create || p.action == FileAction::rewrite)
      need += p.size / kBlock * kBlock + (p.size % kBlock ? kBlock : 0);
  return need;
}

void check_layout_space(const LayoutPlan& plan, const std::string& dir) {
  const uint64_t need = layout_disk_bytes(plan);
  if (need == 0) return;
  const std::optional<FreeSpace> fs = free_space(dir);
  if (!fs || !fs->reported) return;  // ramfs reports no size
  uint64_t freed = 0;                // the files to rewrite are truncated first
  for (const auto& p : plan.files)
    if (p.action == FileAction::rewrite) freed += p.existing;
  const uint64_t available = fs->bytes + freed;
  if (need > available)
    throw Error(fmt::format("not enough space in '{}' for the replay's files: need {} for {} file(s), available "
                            "{}{}; nothing was written. Give a --dir on a filesystem with room, or --map onto "
                            "existing files",
                            escape_bytes(dir), format_bytes(need), plan.created, format_bytes(available),
                            freed ? fmt::format(", the {} of the files it rewrites included", format_bytes(freed))
                                  : ""),
                kExitFailure);
}

void lay_out(const LayoutPlan& plan) {
  std::vector<char> buf(1 << 20);
  Xoshiro256 rng(0x7265706c6179ULL);  // "replay"
  for (size_t i = 0; i + 8 <= buf.size(); i += 8) {
    const uint64_t v = rng.next();
    std::memcpy(buf.data() + i, &v, 8);
  }
  for (const auto& p : plan.files) {
    if (p.action != FileAction::create && p.action != FileAction::rewrite) continue;
    const std::string dir = plan.marker.substr(0, plan.marker.size() - std::char_traits<char>::length(kMarkerName) - 1);
    make_parent_dirs(plan.marker);
    {
      // Listed before it is written: an interrupted layout leaves a file replay may rewrite.
      const int m = ::open(plan.marker.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (m < 0) throw IoError(errno, "open", plan.marker, "check that --dir is writable");
      const std::string line = escape_bytes(p.path.substr(dir.size() + 1)) + "\n";
      const bool ok = ::write(m, line.data(), line.size()) == static_cast<ssize_t>(line.size());
      const int err = errno;
      ::close(m);
      if (!ok) throw IoError(err, "write", plan.marker, "check the free space of --dir");
    }
    make_parent_dirs(p.path);
    // Written under a temporary name and renamed once whole: a failed or interrupted layout never
    // leaves a file at the recorded name that looks complete.
    const std::string tmp = fmt::format("{}.ioprobe-tmp.{}", p.path, getpid());
    ::unlink(tmp.c_str());  // one left by an earlier process with this PID (killed): replay's own
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CLOEXEC | O_CREAT | O_EXCL, 0644);
    if (fd < 0) throw IoError(errno, "create", tmp, "check that --dir is writable");
    auto fail = [&](int err, const char* what, const char* hint) {
      ::close(fd);
      ::unlink(tmp.c_str());
      throw IoError(err, what, p.path, hint);
    };
    uint64_t done = 0;
    while (done < p.size) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), p.size - done));
      const ssize_t w = ::write(fd, buf.data(), n);
      if (w <= 0) fail(w < 0 ? errno : ENOSPC, "write", "check the free space of --dir");
      done += static_cast<uint64_t>(w);
    }
    if (::fsync(fd) != 0) fail(errno, "fsync", "check the filesystem of --dir");
    ::close(fd);
    // A new file is linked (which never replaces a file another process put there meanwhile),
    // renamed where the filesystem has no hard links; a rewrite replaces replay's own file.
    int rc = -1;
    if (p.action == FileAction::create) {
      rc = ::link(tmp.c_str(), p.path.c_str());
      if (rc == 0) ::unlink(tmp.c_str());
    }
    if (rc != 0 && (p.action == FileAction::rewrite || errno == EPERM || errno == ENOTSUP || errno == ENOSYS))
      rc = ::rename(tmp.c_str(), p.path.c_str());
    if (rc != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      throw IoError(err, "create", p.path,
                    err == EEXIST ? "another process created it meanwhile; run the replay again"
                                  : "check that --dir is writable");
    }
  }
}

}  // namespace ioprobe::replay
