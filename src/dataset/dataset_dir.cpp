// The dataset directory's state and housekeeping for the generator (dataset_dir.hpp).
#include "dataset/dataset_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/free_space.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "dataset/manifest.hpp"

namespace ioprobe {

// For the "writing the dataset" line: a tmpfs or ramfs dataset lives in RAM until removed, which a
// user writing "just a few files" of a large preset (llm-tokens-like: 4 GiB each) should see.
std::string ram_note(const std::string& dir, uint64_t bytes) {
  struct statfs st {};
  if (statfs(dir.c_str(), &st) != 0) return "";
  const auto type = static_cast<unsigned long>(st.f_type);
  if (type != TMPFS_MAGIC && type != RAMFS_MAGIC) return "";
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return "; that filesystem is RAM: the dataset occupies memory until it is removed";
  const uint64_t ram = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  return fmt::format("; that filesystem is RAM: the dataset will hold {:.1f}% of this host's {} of memory until it is "
                     "removed",
                     100.0 * static_cast<double>(bytes) / static_cast<double>(ram), format_bytes(ram));
}

DirState inspect_dir(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return DirState::kMissing;
    throw UsageError(fmt::format("--dir '{}': {}; {}", escape_bytes(dir), errno_text(errno),
                                 errno == ENOTDIR ? "a parent of it is a file, not a directory"
                                                  : "choose a --dir you can read and write"));
  }
  if (!S_ISDIR(st.st_mode)) return DirState::kNotADirectory;
  struct stat mst {};
  if (stat((dir + "/" + kManifestName).c_str(), &mst) == 0) return DirState::kOurs;
  DIR* d = opendir(dir.c_str());
  if (!d) throw IoError(errno, "open directory", dir, "check its permissions");
  bool empty = true;
  while (dirent* e = readdir(d))
    // ioprobe's own files (".ioprobe-*": the lock, a file list or manifest another process is
    // writing before its manifest appears) do not make a directory foreign.
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0 &&
        std::strncmp(e->d_name, ".ioprobe-", 9) != 0) {
      empty = false;
      break;
    }
  closedir(d);
  return empty ? DirState::kEmpty : DirState::kForeign;
}

void make_dir(const std::string& dir, bool parents) {
  if (parents) {
    for (size_t p = dir.find('/', 1); p != std::string::npos; p = dir.find('/', p + 1)) {
      std::string part = dir.substr(0, p);
      if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
        throw UsageError(fmt::format("cannot create '{}' for the dataset: {}; run from a writable directory or give "
                                     "--dir PATH",
                                     escape_bytes(part), errno_text(errno)));
    }
  }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    int e = errno;
    if (e == ENOENT)
      throw UsageError(fmt::format("--dir '{}': the parent directory does not exist; create it first or choose "
                                   "another --dir",
                                   escape_bytes(dir)));
    if (e == EACCES || e == EROFS || e == EPERM)
      throw UsageError(
          fmt::format("--dir '{}': cannot create it: {}; choose a writable --dir", escape_bytes(dir), errno_text(e)));
    throw IoError(e, "mkdir", dir);
  }
}

// Removes only the files named in our own file list, then the class folders they emptied. A
// listed path that holds something else (not a regular file, or not the size the list gives it:
// another program's file put where an interrupted generation had not written yet, or a file
// replaced since) stops it before anything is removed.
void remove_listed_files(const std::string& dir, const FileIndex& old) {
  for (size_t i = 0; i < old.size(); ++i) {
    const std::string p = dir + "/" + old.path(i);
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      throw IoError(errno, "stat", p);
    }
    const int64_t want = old.file_size(i);
    if (!S_ISREG(st.st_mode) || (want >= 0 && st.st_size != want))
      throw UsageError(fmt::format("'{}' is listed by the earlier generation in --dir '{}' but holds {} where ioprobe "
                                   "wrote {}: not a file ioprobe wrote, so it is not removed and nothing was changed; "
                                   "move it away, or choose another --dir",
                                   escape_bytes(p), escape_bytes(dir),
                                   S_ISREG(st.st_mode) ? format_bytes(static_cast<uint64_t>(st.st_size))
                                                       : std::string("something other than a regular file"),
                                   format_bytes(static_cast<uint64_t>(want))));
  }
  std::set<std::string> folders;
  for (size_t i = 0; i < old.size(); ++i) {
    std::string p = dir + "/" + old.path(i);
    if (unlink(p.c_str()) != 0 && errno != ENOENT) throw IoError(errno, "remove", p);
    std::string rel = old.path(i);
    if (auto slash = rel.rfind('/'); slash != std::string::npos) folders.insert(dir + "/" + rel.substr(0, slash));
  }
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) rmdir(it->c_str());  // fails harmlessly if not empty
}

// Refuses a dataset of footprint `f` when the filesystem of `dir` lacks the space or inodes.
// `freed_bytes` / `freed_files`: what removing the previous dataset there gives back. Each file
// takes its size rounded up to 4 KiB; 1% + 1 MiB of headroom for the class folders and the
// manifest. An estimate (f.exact false) refuses only beyond a 2% margin for its error.
void check_space(const std::string& dir, const DatasetSpec& spec, const DatasetFootprint& f, uint64_t freed_bytes,
                 uint64_t freed_files) {
  const std::optional<FreeSpace> fs = free_space(dir);
  if (!fs) return;
  const uint64_t need = f.disk_bytes + f.disk_bytes / 100 + (1ULL << 20);
  const uint64_t free_bytes = fs->bytes + freed_bytes, free_inodes = fs->inodes + freed_files;
  const uint64_t need_inodes = spec.files + spec.dirs + 16;
  const std::string what = f.exact ? fmt::format("{} files of {} in all", format_count(f.files), format_bytes(f.bytes))
                                   : fmt::format("{} files of about {} in all, estimated from the first {} sizes drawn",
                                                 format_count(f.files), format_bytes(f.bytes), format_count(f.sampled));
  const std::string freed = freed_bytes ? fmt::format(" (the {} the previous dataset there frees included)",
                                                      format_bytes(freed_bytes))
                                        : "";
  const double margin = f.exact ? 1.0 : 1.02;
  if (fs->reported && static_cast<double>(free_bytes) * margin < static_cast<double>(need))  // ramfs: no size
    throw Error(fmt::format("not enough space in '{}' for the dataset: need {}{} for {}, available {}{}; nothing "
                            "was written. Use --files N for a smaller set, or another --dir",
                            escape_bytes(dir), f.exact ? "" : "about ", format_bytes(need), what,
                            format_bytes(free_bytes), freed),
                kExitFailure);
  if (fs->inodes_reported && free_inodes < need_inodes)
    throw Error(fmt::format("not enough inodes in '{}' for the dataset: need {}, available {}; nothing was written. "
                            "Use --files N or another --dir",
                            escape_bytes(dir), format_count(need_inodes), format_count(free_inodes)),
                kExitFailure);
}

// Data must be on the device before a cold (O_DIRECT) run measures it.
void sync_dir(const std::string& dir) {
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    syncfs(dfd);
    close(dfd);
  }
}

void refuse_unusable(const std::string& dir, DirState state) {
  if (state == DirState::kNotADirectory)
    throw UsageError(fmt::format("--dir '{}' is a file, not a directory; choose a directory path", escape_bytes(dir)));
  if (state == DirState::kForeign)
    throw UsageError(fmt::format("--dir '{}' is not empty and was not created by ioprobe (no {}); ioprobe never "
                                 "writes into such a directory: choose an empty or new --dir, or use --data '{}' "
                                 "to read the files there as they are",
                                 escape_bytes(dir), kManifestName, escape_bytes(dir)));
}

UsageError foreign_file_error(const std::string& path) {
  return UsageError(fmt::format("'{}' already exists where the dataset puts one of its files, and ioprobe did not "
                                "write it: it is left as it is (ioprobe never overwrites a file it did not write); "
                                "move it away, or choose another --dir",
                                escape_bytes(path)));
}

void refuse_foreign_files(const std::string& dir, const FileIndex& plan) {
  for (size_t i = 0; i < plan.size(); ++i) {
    const std::string p = dir + "/" + plan.path(i);
    struct stat st {};
    if (lstat(p.c_str(), &st) == 0) throw foreign_file_error(p);
  }
}

}  // namespace ioprobe
