#include "dataset/walker.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/xxh3.hpp"

namespace ioprobe {

namespace {

struct PendingDir {
  std::string rel;  // relative to root, "" for the root itself
};

std::string join(const std::string& a, const char* b) { return a.empty() ? std::string(b) : a + "/" + b; }

// One file seen by the walk: its identity as readdir or stat reported it, and its index entry.
struct FileId {
  dev_t dev;
  ino_t ino;
  size_t entry;
};

std::string duplicate_warning(uint64_t dups, size_t entries, const std::string& example, const char* how) {
  return fmt::format("{} of {} entries name a file already listed ({}; e.g. '{}'): each is read once per entry, so "
                     "every read after the first comes from the page cache and a cold figure is not cold; {}",
                     dups, entries, how, example, "list each file once for a cold measurement");
}

// Counts the entries of `ids` that name a file already listed, confirming each candidate with
// stat (d_ino alone can repeat across an overlay's layers). Returns an example path.
uint64_t count_same_files(std::vector<FileId>& ids, const FileIndex& index, std::string* example) {
  std::sort(ids.begin(), ids.end(), [](const FileId& a, const FileId& b) {
    return std::tie(a.dev, a.ino, a.entry) < std::tie(b.dev, b.ino, b.entry);
  });
  uint64_t dups = 0;
  struct stat first_st {};
  bool first_ok = false;
  for (size_t i = 1, first = 0; i < ids.size(); ++i) {
    if (ids[i].dev != ids[first].dev || ids[i].ino != ids[first].ino) {
      first = i;
      first_ok = false;
      continue;
    }
    if (i == first + 1) first_ok = stat(index.display_path(ids[first].entry).c_str(), &first_st) == 0;
    struct stat st {};
    if (!first_ok || stat(index.display_path(ids[i].entry).c_str(), &st) != 0) continue;
    if (st.st_dev != first_st.st_dev || st.st_ino != first_st.st_ino) continue;
    if (dups++ == 0) *example = escape_bytes(index.display_path(ids[i].entry));
  }
  return dups;
}

// The path a list entry names, for finding repeats: "./a", "a" and "x/../a" are one path. Only
// entries that hold "./" or "//" are normalised (a million plain entries cost no allocation more).
std::string list_key(std::string_view entry) {
  if (entry.find("./") == std::string_view::npos && entry.find("//") == std::string_view::npos &&
      (entry.size() < 2 || entry.substr(entry.size() - 2) != "/."))
    return std::string(entry);
  return std::filesystem::path(entry).lexically_normal().string();
}

}  // namespace

WalkResult walk_tree(const std::string& root, bool follow) {
  WalkResult out;
  out.index = FileIndex(root);
  const int64_t start = now_ns();
  struct stat rst {};
  if (stat(root.c_str(), &rst) != 0) {
    const int err = errno;
    if (err == ENOENT)
      throw UsageError(fmt::format("--data '{}' does not exist; give an existing directory", escape_bytes(root)));
    throw UsageError(fmt::format("--data '{}': {}; check the path's permissions", escape_bytes(root), errno_text(err)));
  }
  if (!S_ISDIR(rst.st_mode))
    throw UsageError(
        fmt::format("--data '{}' is not a directory; use --file-list for a list of files", escape_bytes(root)));
  int root_fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    const int err = errno;
    throw UsageError(fmt::format("--data '{}': cannot open: {}; {}", escape_bytes(root), errno_text(err),
                                 err == EACCES ? "run as a user who may read it, or give --data a readable directory"
                                               : "give --data a readable directory"));
  }

  std::set<std::pair<dev_t, ino_t>> visited{{rst.st_dev, rst.st_ino}};
  std::vector<FileId> ids;
  std::vector<PendingDir> stack{{""}};
  auto warn = [&](std::string msg) {
    out.warnings.push_back(std::move(msg));
    ++out.skipped;
  };
  while (!stack.empty()) {
    PendingDir cur = std::move(stack.back());
    stack.pop_back();
    int fd = cur.rel.empty() ? dup(root_fd) : openat(root_fd, cur.rel.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      warn(fmt::format("skipped directory '{}': {}", escape_bytes(join(root, cur.rel.c_str())), errno_text(errno)));
      continue;
    }
    DIR* d = fdopendir(fd);
    if (!d) {
      close(fd);
      continue;
    }
    std::vector<PendingDir> subdirs;
    struct stat dst {};
    const dev_t dir_dev = fstat(dirfd(d), &dst) == 0 ? dst.st_dev : 0;
    while (dirent* e = readdir(d)) {
      const char* name = e->d_name;
      if (!std::strcmp(name, ".") || !std::strcmp(name, "..")) continue;
      if (cur.rel.empty() && !std::strncmp(name, ".ioprobe-", 9)) continue;  // our own manifest files
      std::string rel = join(cur.rel, name);
      unsigned char type = e->d_type;
      if (type == DT_REG) {
        ids.push_back({dir_dev, e->d_ino, out.index.size()});
        out.index.add(rel, FileIndex::kUnknownSize);
        continue;
      }
      if (type == DT_DIR) {
        struct stat st {};
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0) visited.insert({st.st_dev, st.st_ino});
        subdirs.push_back({rel});
        continue;
      }
      if (type == DT_LNK || type == DT_UNKNOWN) {
        struct stat lst {
        }, st{};
        if (fstatat(dirfd(d), name, &lst, AT_SYMLINK_NOFOLLOW) != 0) continue;
        bool is_link = S_ISLNK(lst.st_mode);
        if (fstatat(dirfd(d), name, &st, 0) != 0) {
          warn(fmt::format("skipped '{}': {} link target: {}", escape_bytes(join(root, rel.c_str())),
                           is_link ? "dangling" : "unreadable", errno_text(errno)));
          continue;
        }
        if (S_ISREG(st.st_mode)) {
          ids.push_back({st.st_dev, st.st_ino, out.index.size()});
          out.index.add(rel, FileIndex::kUnknownSize);
        } else if (S_ISDIR(st.st_mode)) {
          if (is_link && !follow) continue;  // not following directory links: by design, no warning
          if (!visited.insert({st.st_dev, st.st_ino}).second) {
            warn(fmt::format("skipped '{}': symlink loop (directory already visited)",
                             escape_bytes(join(root, rel.c_str()))));
            continue;
          }
          subdirs.push_back({rel});
        } else {  // a link to a device, FIFO or socket: never read, and said so as for the thing itself
          warn(fmt::format("skipped '{}': {}a device, FIFO or socket, not a regular file",
                           escape_bytes(join(root, rel.c_str())), is_link ? "symlink to " : ""));
        }
        continue;
      }
      // FIFOs, sockets, devices: never read (a FIFO would block).
      warn(fmt::format("skipped '{}': not a regular file", escape_bytes(join(root, rel.c_str()))));
    }
    closedir(d);
    for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(std::move(*it));
  }
  close(root_fd);
  std::string example;
  out.duplicates = count_same_files(ids, out.index, &example);
  if (out.duplicates)
    out.warnings.push_back(duplicate_warning(out.duplicates, out.index.size(), example, "hard links or symlinks"));
  out.enumerate_s = static_cast<double>(now_ns() - start) / 1e9;
  return out;
}

WalkResult read_path_list(const std::string& list_file) {
  WalkResult out;
  const int64_t start = now_ns();
  const std::string shown = escape_bytes(list_file);
  struct stat st {};
  if (stat(list_file.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT)
      throw UsageError(fmt::format("--file-list '{}' does not exist; give a file with one path per line", shown));
    throw UsageError(fmt::format("--file-list '{}': {}; check the path's permissions", shown, errno_text(err)));
  }
  if (S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("--file-list '{}' is a directory; use --data for a directory of files", shown));
  std::ifstream in(list_file, std::ios::binary);
  if (!in) throw UsageError(fmt::format("--file-list '{}': cannot open: {}", shown, errno_text(errno)));
  std::string line;
  uint64_t lines = 0;
  // (hash of the normalised path, entry): 16 B per entry, sorted once at the end; a set of the
  // strings would take some 100 B per entry for lists of millions.
  std::vector<std::pair<uint64_t, uint64_t>> keys;
  while (std::getline(in, line)) {
    ++lines;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF list written on Windows
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;  // blank or a comment
    const std::string key = list_key(line);
    keys.emplace_back(XXH3_64bits(key.data(), key.size()), out.index.size());
    out.index.add(line, FileIndex::kUnknownSize);
  }
  if (in.bad()) throw UsageError(fmt::format("--file-list '{}': read failed: {}", shown, errno_text(errno)));
  if (out.index.empty())
    throw UsageError(fmt::format("--file-list '{}' names no files ({} lines, all blank or '#' comments); give one "
                                 "path per line",
                                 shown, lines));
  std::sort(keys.begin(), keys.end());
  std::string example;
  for (size_t i = 0, first = 0; i < keys.size(); ++i) {
    if (keys[i].first != keys[first].first) first = i;
    // Same hash as the group's first entry: the same path unless the hashes collide (compared).
    if (i == first || list_key(out.index.path(keys[i].second)) != list_key(out.index.path(keys[first].second)))
      continue;
    if (out.duplicates++ == 0) example = escape_bytes(out.index.path(keys[i].second));
  }
  if (out.duplicates)
    out.warnings.push_back(duplicate_warning(out.duplicates, out.index.size(), example, "the same path listed again"));
  out.enumerate_s = static_cast<double>(now_ns() - start) / 1e9;
  return out;
}

}  // namespace ioprobe
