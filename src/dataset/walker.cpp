#include "dataset/walker.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

namespace {

struct PendingDir {
  std::string rel;  // relative to root, "" for the root itself
};

std::string join(const std::string& a, const char* b) { return a.empty() ? std::string(b) : a + "/" + b; }

}  // namespace

WalkResult walk_tree(const std::string& root, bool follow) {
  WalkResult out;
  out.index = FileIndex(root);
  const int64_t start = now_ns();
  struct stat rst {};
  if (stat(root.c_str(), &rst) != 0)
    throw UsageError(fmt::format("--data '{}': {}; {}", escape_bytes(root), errno_text(errno),
                                 errno == ENOENT ? "give an existing directory" : "check the path's permissions"));
  if (!S_ISDIR(rst.st_mode))
    throw UsageError(fmt::format("--data '{}' is not a directory; use --file-list for a list of files", escape_bytes(root)));
  int root_fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    throw UsageError(fmt::format("--data '{}': cannot open: {}", escape_bytes(root), errno_text(errno)));

  std::set<std::pair<dev_t, ino_t>> visited{{rst.st_dev, rst.st_ino}};
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
    while (dirent* e = readdir(d)) {
      const char* name = e->d_name;
      if (!std::strcmp(name, ".") || !std::strcmp(name, "..")) continue;
      if (cur.rel.empty() && !std::strncmp(name, ".ioprobe-", 9)) continue;  // our own manifest files
      std::string rel = join(cur.rel, name);
      unsigned char type = e->d_type;
      if (type == DT_REG) {
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
        struct stat lst {}, st {};
        if (fstatat(dirfd(d), name, &lst, AT_SYMLINK_NOFOLLOW) != 0) continue;
        bool is_link = S_ISLNK(lst.st_mode);
        if (fstatat(dirfd(d), name, &st, 0) != 0) {
          warn(fmt::format("skipped '{}': {} link target: {}", escape_bytes(join(root, rel.c_str())),
                           is_link ? "dangling" : "unreadable", errno_text(errno)));
          continue;
        }
        if (S_ISREG(st.st_mode)) {
          out.index.add(rel, FileIndex::kUnknownSize);
        } else if (S_ISDIR(st.st_mode)) {
          if (is_link && !follow) continue;  // not following directory links: by design, no warning
          if (!visited.insert({st.st_dev, st.st_ino}).second) {
            warn(fmt::format("skipped '{}': symlink loop (directory already visited)", escape_bytes(join(root, rel.c_str()))));
            continue;
          }
          subdirs.push_back({rel});
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
  out.enumerate_s = static_cast<double>(now_ns() - start) / 1e9;
  return out;
}

WalkResult read_path_list(const std::string& list_file) {
  WalkResult out;
  const int64_t start = now_ns();
  std::ifstream in(list_file, std::ios::binary);
  if (!in)
    throw UsageError(fmt::format("--file-list '{}': {}", escape_bytes(list_file), errno_text(errno)));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    out.index.add(line, FileIndex::kUnknownSize);
  }
  if (out.index.empty())
    throw UsageError(fmt::format("--file-list '{}' names no files; give one path per line", escape_bytes(list_file)));
  out.enumerate_s = static_cast<double>(now_ns() - start) / 1e9;
  return out;
}

}  // namespace ioprobe
