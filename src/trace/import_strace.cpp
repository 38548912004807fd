#include "trace/import_strace.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "trace/import.hpp"

namespace ioprobe::trace {

namespace {

struct Call {
  int64_t pid = 0;
  int64_t t_ns = 0;
  std::string name;
  std::vector<std::string> args;
  std::string ret_text;  // what follows " = "
  int64_t ret = 0;
  int32_t err = 0;
  int64_t dur_ns = 0;
};

// Splits "a, "b,c", {x, y}, [1, 2]" at top-level commas; strings keep their quotes.
std::vector<std::string> split_args(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  bool in_str = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_str) {
      cur += c;
      if (c == '\\' && i + 1 < s.size()) cur += s[++i];
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
    if (c == ')' || c == ']' || c == '}' || c == '>') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      if (i + 1 < s.size() && s[i + 1] == ' ') ++i;
      continue;
    }
    cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Index of the ')' closing the argument list that starts at `open` (after '('), skipping strings.
size_t close_paren(std::string_view s, size_t from) {
  int depth = 1;
  bool in_str = false;
  for (size_t i = from; i < s.size(); ++i) {
    char c = s[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '(') ++depth;
    else if (c == ')' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// strace's C-style string "..." (octal/hex escapes when -xx) to bytes; "" when not a string.
std::string unquote(std::string_view a) {
  if (a.size() < 2 || a.front() != '"') return "";
  size_t end = a.rfind('"');
  std::string out;
  for (size_t i = 1; i < end; ++i) {
    char c = a[i];
    if (c != '\\' || i + 1 >= end) {
      out += c;
      continue;
    }
    char n = a[++i];
    switch (n) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'x': {
        out += static_cast<char>(std::strtol(std::string(a.substr(i + 1, 2)).c_str(), nullptr, 16));
        i += 2;
        break;
      }
      default:
        if (n >= '0' && n <= '7') {
          size_t k = i;
          while (k < end && k < i + 3 && a[k] >= '0' && a[k] <= '7') ++k;
          out += static_cast<char>(std::strtol(std::string(a.substr(i, k - i)).c_str(), nullptr, 8));
          i = k - 1;
        } else {
          out += n;
        }
    }
  }
  return out;
}

// "3</data/x>" -> fd 3 and path "/data/x" (path empty without -y).
int64_t fd_arg(const std::string& a, std::string* path) {
  size_t lt = a.find('<');
  if (lt != std::string::npos && a.back() == '>') *path = a.substr(lt + 1, a.size() - lt - 2);
  return std::strtoll(a.c_str(), nullptr, 0);
}

int32_t errno_of(std::string_view name) {
  static const std::map<std::string_view, int> kErr{{"ENOENT", ENOENT}, {"EBADF", EBADF},     {"EACCES", EACCES},
                                                    {"EINTR", EINTR},   {"EISDIR", EISDIR},   {"EINVAL", EINVAL},
                                                    {"EAGAIN", EAGAIN}, {"ENOTDIR", ENOTDIR}, {"EIO", EIO},
                                                    {"EPERM", EPERM},   {"ELOOP", ELOOP}};
  auto it = kErr.find(name);
  return it == kErr.end() ? EIO : it->second;
}

// Parses the part after the timestamp: "name(args) = ret <dur>"; false when it is not a call.
bool parse_call(std::string_view s, Call& c) {
  size_t paren = s.find('(');
  if (paren == 0 || paren == std::string_view::npos) return false;
  c.name = std::string(s.substr(0, paren));
  for (char ch : c.name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return false;
  size_t close = close_paren(s, paren + 1);
  if (close == std::string_view::npos) return false;
  c.args = split_args(s.substr(paren + 1, close - paren - 1));
  size_t eq = s.find(" = ", close);
  if (eq == std::string_view::npos) return false;
  std::string_view rest = s.substr(eq + 3);
  size_t lt = rest.rfind(" <");
  if (lt != std::string_view::npos && rest.back() == '>')
    c.dur_ns = std::llround(std::strtod(std::string(rest.substr(lt + 2)).c_str(), nullptr) * 1e9);
  c.ret_text = std::string(rest.substr(0, lt));
  c.ret = std::strtoll(c.ret_text.c_str(), nullptr, 0);
  if (c.ret_text.rfind("-1 ", 0) == 0) {
    size_t e = c.ret_text.find(' ', 3);
    c.err = errno_of(std::string_view(c.ret_text).substr(3, e == std::string::npos ? e : e - 3));
  }
  return true;
}

struct FdState {
  int32_t file = -1;
  uint64_t pos = 0;
};

}  // namespace

Trace import_strace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("--import {}: cannot open it: {}", escape_bytes(path), errno_text(errno)));
  Trace t;
  t.source = "strace";
  t.limits = {
      std::string(
          "strace stops the traced threads at every system call: the recorded durations and gaps are longer than the "
          "job's own, often several times"),
      "strace records no thread CPU time: the gaps between calls cannot be split into compute and waiting",
      "stdio calls appear as the read() system calls their buffers make, not as fread()",
      "a file's size is unknown unless a stat of it was traced",
      "no DataLoader batch or worker marks",
  };
  std::unordered_map<int64_t, std::string> unfinished;  // pid -> the line's first half
  std::unordered_map<int64_t, int64_t> unfinished_t;
  std::unordered_map<int64_t, int64_t> proc_of;        // tid -> process id
  std::unordered_map<int64_t, int64_t> parent_of;      // process -> parent process
  std::map<std::pair<int64_t, int64_t>, FdState> fds;  // (process, fd)
  std::unordered_map<std::string, int32_t> file_ids;
  std::unordered_map<uint64_t, int32_t> maps;  // mapping address -> file
  std::map<int64_t, size_t> streams;           // tid -> index
  std::vector<bool> not_data;                  // per file: the log shows a directory, or a file the job created
  auto file_id = [&](const std::string& p) {
    auto [it, added] = file_ids.emplace(p, static_cast<int32_t>(t.files.size()));
    if (added) {
      t.files.push_back(FileEntry{p, 0, false});
      not_data.push_back(false);
    }
    return it->second;
  };
  // What the recorder's fstat after an open tells it, from the log: a directory (O_DIRECTORY,
  // S_IFDIR in a stat, getdents, EISDIR on a read) or a file the open created (O_CREAT|O_EXCL,
  // O_TMPFILE) is not a data file; its calls are dropped at the end.
  auto mark_not_data = [&](int32_t f) {
    if (f >= 0) not_data[static_cast<size_t>(f)] = true;
  };
  auto proc = [&](int64_t tid) {
    auto it = proc_of.find(tid);
    return it == proc_of.end() ? tid : it->second;
  };
  int64_t origin = INT64_MAX;
  int64_t first_pid = -1;
  std::string line;
  while (std::getline(in, line)) {
    std::string_view s = line;
    int64_t pid = 0;
    if (s.substr(0, 5) == "[pid ") s.remove_prefix(5);
    size_t sp = s.find(' ');
    if (sp == std::string_view::npos) continue;
    std::string first(s.substr(0, sp));
    if (first.find('.') == std::string::npos) {  // a pid before the time
      pid = std::strtoll(first.c_str(), nullptr, 10);
      s.remove_prefix(sp + 1);
      while (!s.empty() && (s.front() == ' ' || s.front() == ']')) s.remove_prefix(1);
      sp = s.find(' ');
      if (sp == std::string_view::npos) continue;
      first = std::string(s.substr(0, sp));
    }
    // SECONDS.FRACTION as integers (a double loses the microseconds of a 10-digit epoch).
    size_t dot = first.find('.');
    if (dot == 0 || dot == std::string::npos || !std::isdigit(static_cast<unsigned char>(first[0]))) continue;
    std::string frac = first.substr(dot + 1, 9);
    frac.append(9 - frac.size(), '0');
    int64_t t_ns = std::strtoll(first.c_str(), nullptr, 10) * 1'000'000'000 + std::strtoll(frac.c_str(), nullptr, 10);
    s.remove_prefix(sp + 1);
    if (first_pid < 0) first_pid = pid;
    std::string text;
    if (s.size() > 5 && s.substr(0, 5) == "<... ") {
      size_t r = s.find(" resumed>");
      auto it = unfinished.find(pid);
      if (r == std::string_view::npos || it == unfinished.end()) continue;
      text = it->second + std::string(s.substr(r + 9));
      t_ns = unfinished_t[pid];
      unfinished.erase(it);
    } else if (size_t u = s.find(" <unfinished ...>"); u != std::string_view::npos) {
      unfinished[pid] = std::string(s.substr(0, u));
      unfinished_t[pid] = t_ns;
      continue;
    } else {
      text = std::string(s);
    }
    Call c;
    c.pid = pid;
    c.t_ns = t_ns;
    if (!parse_call(text, c)) continue;
    const int64_t p = proc(pid);
    if ((c.name == "clone" || c.name == "clone3" || c.name == "fork" || c.name == "vfork") && c.ret > 0) {
      bool thread = text.find("CLONE_THREAD") != std::string::npos;
      proc_of[c.ret] = thread ? p : c.ret;
      if (!thread) {
        parent_of[c.ret] = p;
        for (const auto& [key, st] : std::map<std::pair<int64_t, int64_t>, FdState>(fds))
          if (key.first == p) fds[{c.ret, key.second}] = st;  // the child inherits the descriptors
      }
      continue;
    }
    Op op;
    op.call = c.name;
    op.start_ns = c.t_ns;
    op.dur_ns = c.dur_ns;
    op.error = c.err;
    std::string fpath;
    auto need = [&](size_t n) { return c.args.size() >= n; };
    if (c.name == "open" || c.name == "openat" || c.name == "creat") {
      size_t pi = c.name == "openat" ? 1 : 0;
      if (!need(pi + 1)) continue;
      std::string pth = unquote(c.args[pi]);
      if (c.ret >= 0 && c.ret_text.find('<') != std::string::npos) {
        size_t lt = c.ret_text.find('<');
        pth = c.ret_text.substr(lt + 1, c.ret_text.rfind('>') - lt - 1);
      }
      if (!pth.empty() && pth[0] != '/') continue;  // relative names without -y: no directory known
      pth = normalize_path(pth);
      if (!is_data_path(pth)) continue;
      op.kind = OpKind::open;
      op.file = file_id(pth);
      const std::string& flags = c.args.size() > pi + 1 ? c.args[pi + 1] : std::string();
      if (flags.find("O_DIRECTORY") != std::string::npos || flags.find("O_TMPFILE") != std::string::npos ||
          (flags.find("O_CREAT") != std::string::npos && flags.find("O_EXCL") != std::string::npos) || c.err == EISDIR)
        mark_not_data(op.file);
      if (c.ret >= 0) fds[{p, c.ret}] = FdState{op.file, 0};
    } else {
      bool fd_call = c.name == "close" || c.name == "read" || c.name == "pread64" || c.name == "readv" ||
                     c.name == "preadv" || c.name == "preadv2" || c.name == "lseek" || c.name == "fstat";
      bool path_stat = c.name == "stat" || c.name == "lstat" || c.name == "newfstatat" || c.name == "statx";
      if (c.name == "getdents" || c.name == "getdents64") {
        if (!need(1)) continue;
        auto it = fds.find({p, fd_arg(c.args[0], &fpath)});
        if (it != fds.end()) mark_not_data(it->second.file);
        continue;
      }
      if (c.name == "mmap") {
        if (!need(6)) continue;
        int64_t fd = fd_arg(c.args[4], &fpath);
        auto it = fds.find({p, fd});
        if (it == fds.end() || c.err) continue;
        op.kind = OpKind::mmap;
        op.file = it->second.file;
        op.requested = std::strtoull(c.args[1].c_str(), nullptr, 0);
        op.offset = std::strtoull(c.args[5].c_str(), nullptr, 0);
        maps[std::strtoull(c.ret_text.c_str(), nullptr, 0)] = op.file;
        t.mapped.mapped_bytes += op.requested;
      } else if (c.name == "munmap") {
        if (!need(2)) continue;
        auto it = maps.find(std::strtoull(c.args[0].c_str(), nullptr, 0));
        if (it == maps.end()) continue;
        op.kind = OpKind::munmap;
        op.file = it->second;
        op.requested = std::strtoull(c.args[1].c_str(), nullptr, 0);
        maps.erase(it);
      } else if (path_stat) {
        size_t pi = (c.name == "newfstatat" || c.name == "statx") ? 1 : 0;
        if (!need(pi + 1)) continue;
        std::string pth = unquote(c.args[pi]);
        if (pth.empty() && pi == 1) {  // AT_EMPTY_PATH on a descriptor
          auto it = fds.find({p, fd_arg(c.args[0], &fpath)});
          if (it == fds.end()) continue;
          op.file = it->second.file;
        } else {
          if (pth.empty() || pth[0] != '/') continue;
          pth = normalize_path(pth);
          if (!is_data_path(pth) || c.err) continue;
          op.file = file_id(pth);
        }
        op.kind = OpKind::stat;
        if (text.find("S_IFDIR") != std::string::npos) mark_not_data(op.file);
        size_t sz = text.find("st_size=");
        if (sz != std::string::npos && !t.files[op.file].size_known) {
          t.files[op.file].size_bytes = std::strtoull(text.c_str() + sz + 8, nullptr, 10);
          t.files[op.file].size_known = true;
        }
      } else if (fd_call) {
        if (!need(1)) continue;
        int64_t fd = fd_arg(c.args[0], &fpath);
        auto it = fds.find({p, fd});
        if (it == fds.end()) {
          // A descriptor opened before the trace began, named by -y: a data file when it is read.
          bool is_read = c.name != "close" && c.name != "lseek" && c.name != "fstat";
          if (!is_read || fpath.empty() || fpath[0] != '/') continue;
          fpath = normalize_path(fpath);
          if (!is_data_path(fpath)) continue;
          it = fds.emplace(std::make_pair(p, fd), FdState{file_id(fpath), 0}).first;  // opened before the trace
        }
        FdState& st = it->second;
        op.file = st.file;
        if (c.name == "close") {
          op.kind = OpKind::close;
          fds.erase(it);
        } else if (c.name == "lseek") {
          op.kind = OpKind::lseek;
          if (c.ret >= 0) st.pos = op.offset = static_cast<uint64_t>(c.ret);
        } else if (c.name == "fstat") {
          op.kind = OpKind::stat;
          if (text.find("S_IFDIR") != std::string::npos) mark_not_data(op.file);
          size_t sz = text.find("st_size=");
          if (sz != std::string::npos && !t.files[op.file].size_known) {
            t.files[op.file].size_bytes = std::strtoull(text.c_str() + sz + 8, nullptr, 10);
            t.files[op.file].size_known = true;
          }
        } else {
          op.kind = OpKind::read;
          if (c.err == EISDIR) mark_not_data(op.file);
          op.bytes = c.ret > 0 ? static_cast<uint64_t>(c.ret) : 0;
          bool at = c.name == "pread64" || c.name == "preadv" || (c.name == "preadv2" && need(4) && c.args[3] != "-1");
          if (c.name == "read" || c.name == "pread64")
            op.requested = need(3) ? std::strtoull(c.args[2].c_str(), nullptr, 0) : op.bytes;
          else op.requested = op.bytes;  // readv: the vector's total is not summed from strace's text
          if (at) {
            op.offset = std::strtoull(c.args[3].c_str(), nullptr, 0);  // pread64, preadv, preadv2: the 4th
          } else {
            op.offset = st.pos;
            st.pos += op.bytes;
          }
        }
      } else {
        continue;
      }
    }
    origin = std::min(origin, op.start_ns);
    auto [sit, added] = streams.emplace(pid, t.streams.size());
    if (added) {
      Stream st;
      st.tid = static_cast<int32_t>(pid);
      t.streams.push_back(std::move(st));
    }
    t.streams[sit->second].ops.push_back(std::move(op));
  }
  for (auto& s : t.streams) {
    int64_t p = proc(s.tid);
    s.pid = static_cast<int32_t>(p);
    auto par = parent_of.find(p);
    s.ppid = par == parent_of.end() ? 0 : static_cast<int32_t>(par->second);
    s.role = s.tid != p ? "thread" : (p == proc(first_pid) ? "main" : "process");
  }
  drop_files(t, not_data);
  finish_imported(t, origin == INT64_MAX ? 0 : origin);
  return t;
}

}  // namespace ioprobe::trace
