#include "raw/raw_target.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/free_space.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "core/rng.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace ioprobe {

const char* pattern_name(RawPattern p) {
  switch (p) {
    case RawPattern::read:
      return "read";
    case RawPattern::randread:
      return "randread";
    case RawPattern::write:
      return "write";
    case RawPattern::randwrite:
      return "randwrite";
  }
  return "?";
}

namespace {

constexpr char kMarkValue[] = "raw-layout";

bool has_mark(const std::string& path) {
  char buf[64];
  ssize_t n = getxattr(path.c_str(), kLayoutXattr, buf, sizeof(buf));
  return n == static_cast<ssize_t>(sizeof(kMarkValue) - 1) && std::memcmp(buf, kMarkValue, n) == 0;
}

// Appends pseudo-random bytes to `fd` from `from` to `to`. Returns false when interrupted.
bool fill(int fd, const std::string& path, uint64_t from, uint64_t to, bool progress) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<uint64_t> buf(kChunk / sizeof(uint64_t));
  Xoshiro256 rng(0x2545F4914F6CDD1DULL ^ from);  // core/rng.hpp: the project's one generator
  ProgressLine line(progress, 0.5, 0);           // on a terminal only
  for (uint64_t off = from; off < to;) {
    if (interrupted()) return false;
    for (auto& w : buf) w = rng.next();
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, to - off));
    ssize_t w = pwrite(fd, buf.data(), n, static_cast<off_t>(off));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw IoError(errno, "write layout to", escape_bytes(path), "check free space (df) and permissions");
    }
    off += static_cast<uint64_t>(w);
    line.update([&] {
      return fmt::format("laying out {}: {:.0f} %", escape_bytes(path),
                         100.0 * static_cast<double>(off - from) / static_cast<double>(to - from));
    });
  }
  line.finish();
  if (fdatasync(fd) != 0) throw IoError(errno, "fdatasync", escape_bytes(path));
  return true;
}

// Refuses (exit 1, before any byte is written) a layout of `need` more bytes on the filesystem
// holding `where` when fewer are free to an unprivileged writer (statvfs f_bavail x f_frsize).
// Filesystems that report no size (f_blocks 0: ramfs) are not refused.
void check_space(const std::string& where, const std::string& shown, uint64_t need, const char* what) {
  const std::optional<FreeSpace> fs = free_space(where);
  if (!fs || !fs->reported) return;
  const uint64_t free_bytes = fs->bytes;
  if (need > free_bytes)
    throw Error(fmt::format("not enough space to {} '{}': it needs {}{}, {} are free there; give a smaller "
                            "--size or a path on a filesystem with room",
                            what, shown, format_bytes(need), std::strcmp(what, "extend") == 0 ? " more" : "",
                            format_bytes(free_bytes)),
                kExitFailure);
}

void mark(const std::string& path, RawTarget& t) {
  if (setxattr(path.c_str(), kLayoutXattr, kMarkValue, sizeof(kMarkValue) - 1, 0) == 0) {
    t.ioprobe_marked = true;
  } else {
    t.note += fmt::format("; could not set xattr {} ({}), so later write runs need --allow-overwrite", kLayoutXattr,
                          errno_name(errno));
  }
}

void create_file(const RawConfig& cfg, RawTarget& t) {
  const std::string& path = cfg.filename;
  const std::string parent = std::filesystem::path(path).parent_path().string();
  check_space(parent.empty() ? "." : parent, escape_bytes(path), cfg.size, "create");
  std::string tmp = path + fmt::format(".ioprobe-layout.{}", getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    // A directory that is missing or not writable is the user's path to change (exit 2), named
    // as given: not the temporary file, which the user never named.
    if (e == ENOENT || e == ENOTDIR || e == EACCES || e == EPERM || e == EROFS) {
      const std::string dir = parent.empty() ? "." : parent;
      std::error_code ec;
      // ENOENT from a directory that is there (/proc, a pseudo filesystem): it takes no new files.
      const bool missing = (e == ENOENT || e == ENOTDIR) && !std::filesystem::is_directory(dir, ec);
      throw UsageError(fmt::format("cannot create '{}': its directory '{}' {} ({}); give a path in a directory that "
                                   "exists and that you may write to",
                                   escape_bytes(path), escape_bytes(dir),
                                   missing                       ? "does not exist"
                                   : e == ENOENT || e == ENOTDIR ? "takes no new files"
                                                                 : "is not writable",
                                   errno_text(e)));
    }
    throw IoError(e, "create", escape_bytes(tmp), "check that the directory exists and is writable");
  }
  int64_t t0 = now_ns();
  bool done = false;
  try {
    done = fill(fd, tmp, 0, cfg.size, cfg.progress);
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  close(fd);
  if (!done) {
    unlink(tmp.c_str());
    t.note = "interrupted during layout; nothing left behind";
    return;
  }
  if (setxattr(tmp.c_str(), kLayoutXattr, kMarkValue, sizeof(kMarkValue) - 1, 0) == 0) t.ioprobe_marked = true;
  // RENAME_NOREPLACE: never clobber a file that appeared at `path` meanwhile.
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    throw IoError(e, "rename layout into", escape_bytes(path), "another process created the file meanwhile?");
  }
  t.created = true;
  t.ioprobe_marked = true;  // created by this run either way
  t.file_bytes = cfg.size;
  t.note = fmt::format("created {} in {}", format_bytes(cfg.size), format_seconds((now_ns() - t0) / 1e9));
  if (!has_mark(path))
    t.note += fmt::format("; the filesystem refused xattr {}, so later write runs need --allow-overwrite",
                          kLayoutXattr);
}

}  // namespace

std::string device_open_hint(const std::string& path, int err, unsigned euid) {
  if (err != EACCES && err != EPERM) return "";
  if (euid != 0)
    return fmt::format("reading a block device needs read permission on it: run as root or as a member of its group "
                       "(ls -l {}; usually 'disk')",
                       escape_bytes(path));
  return fmt::format("refused although ioprobe runs as root, so not by the device's permissions: a container's device "
                     "cgroup (docker run --device {}), a security module (SELinux, AppArmor: see the audit log or "
                     "dmesg) or kernel lockdown forbids it; run on the host or allow this device",
                     escape_bytes(path));
}

namespace {
// The bytes each job covers: --size (or the whole file), in whole --bs blocks. A tail of less
// than one block is left out, and the region line says so.
void set_region(RawTarget& t, const RawConfig& cfg, const std::string& shown) {
  const uint64_t region = cfg.size ? cfg.size : t.file_bytes;
  t.region_bytes = region / cfg.bs * cfg.bs;
  if (t.region_bytes == 0)
    throw UsageError(fmt::format("'{}' holds {}, less than one block of --bs {}; give a larger file or --size", shown,
                                 format_bytes(region), format_bytes(cfg.bs)));
  if (t.region_bytes < region) {
    const std::string tail = fmt::format("the last {} of the {} are not covered (less than one --bs {} block)",
                                         format_bytes(region - t.region_bytes), cfg.size ? "--size" : "file",
                                         format_bytes(cfg.bs));
    t.note = t.note.empty() ? tail : t.note + "; " + tail;
  }
}
}  // namespace

RawTarget prepare_raw_target(const RawConfig& cfg) {
  RawTarget t;
  t.path = cfg.filename;
  const std::string shown = escape_bytes(cfg.filename);
  bool write = pattern_is_write(cfg.rw);
  struct stat st {};
  if (stat(cfg.filename.c_str(), &st) != 0) {
    if (errno != ENOENT) throw IoError(errno, "stat", shown);
    if (cfg.size == 0)
      throw UsageError(fmt::format("--filename '{}' does not exist; give --size (e.g. --size 1G) so ioprobe can "
                                   "create it",
                                   shown));
    create_file(cfg, t);
    if (t.created) set_region(t, cfg, shown);
    return t;
  }
  if (S_ISBLK(st.st_mode)) {
    t.block_device = true;
    // Refusals come first, before the device is opened at all (and long before it is opened for
    // writing in raw_run): a write test needs --allow-overwrite, and never runs on a device in use.
    if (write && !cfg.allow_overwrite)
      throw UsageError(fmt::format("--rw {} on block device '{}' destroys the data on it; add --allow-overwrite if "
                                   "that is what you want",
                                   pattern_name(cfg.rw), shown));
    // For a write test the device is opened read-only with O_EXCL: the kernel refuses that (EBUSY)
    // while the device or one of its partitions is mounted or held (LVM, md RAID, swap, another
    // exclusive opener), and while this descriptor stays open nobody can mount or claim it; it is
    // kept until the run ends (RawTarget::exclusive_claim).
    int fd = open(cfg.filename.c_str(), O_RDONLY | O_CLOEXEC | (write ? O_EXCL : 0));
    if (fd < 0 && write && errno == EBUSY)
      throw UsageError(fmt::format("--rw {} refused: block device '{}' is in use (mounted, or one of its partitions "
                                   "is, or held by LVM, md RAID, swap or another program); ioprobe never writes to "
                                   "a device in use: unmount or release it first (see lsblk)",
                                   pattern_name(cfg.rw), shown));
    if (fd < 0) {
      const int e = errno;
      throw IoError(e, "open", shown, device_open_hint(cfg.filename, e, geteuid()));
    }
    uint64_t bytes = 0;
    int r = ioctl(fd, BLKGETSIZE64, &bytes);
    int e = errno;
    if (r != 0) {
      close(fd);
      throw IoError(e, "ioctl(BLKGETSIZE64) on", shown);
    }
    if (write) t.exclusive_claim = std::shared_ptr<void>(nullptr, [fd](void*) { close(fd); });
    else close(fd);
    t.file_bytes = bytes;
    t.ioprobe_marked = false;
  } else if (S_ISREG(st.st_mode)) {
    t.file_bytes = static_cast<uint64_t>(st.st_size);
    t.ioprobe_marked = has_mark(cfg.filename);
    if (write && !t.ioprobe_marked && !cfg.allow_overwrite)
      throw UsageError(fmt::format("--rw {} would overwrite '{}', which ioprobe did not create; give a new path or "
                                   "add --allow-overwrite",
                                   pattern_name(cfg.rw), shown));
    if (cfg.size > t.file_bytes) {
      if (!t.ioprobe_marked)
        throw UsageError(fmt::format("'{}' is {}, smaller than --size {}, and ioprobe did not create it; give "
                                     "--size {} or less, or a new path",
                                     shown, format_bytes(t.file_bytes), format_bytes(cfg.size), t.file_bytes));
      check_space(cfg.filename, shown, cfg.size - t.file_bytes, "extend");
      int fd = open(cfg.filename.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) throw IoError(errno, "open for extension", shown);
      // The file keeps its mark throughout: it stays ioprobe's file whatever happens (a second
      // Ctrl-C quits at once, and a file stripped of its mark would then be refused as not ours).
      // A failed or interrupted extension gives the space back: the file returns to its old size.
      auto undo = [&] {
        const bool back = ftruncate(fd, static_cast<off_t>(t.file_bytes)) == 0;
        close(fd);
        return back;
      };
      bool done = false;
      try {
        done = fill(fd, cfg.filename, t.file_bytes, cfg.size, cfg.progress);
      } catch (...) {
        undo();
        throw;
      }
      if (!done) {
        t.note = undo() ? fmt::format("interrupted while extending the layout; truncated back to {}",
                                      format_bytes(t.file_bytes))
                        : "interrupted while extending the layout";
        return t;
      }
      close(fd);
      mark(cfg.filename, t);
      t.note = fmt::format("extended from {} to {}", format_bytes(t.file_bytes), format_bytes(cfg.size));
      t.file_bytes = cfg.size;
    }
  } else {
    throw UsageError(fmt::format("--filename '{}' is neither a regular file nor a block device", shown));
  }
  set_region(t, cfg, shown);
  return t;
}

double page_cache_residency(const std::string& path, uint64_t bytes) {
  if (bytes == 0) return -1;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -1;
  }
  void* p = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return -1;
  long page = sysconf(_SC_PAGESIZE);
  size_t pages = (bytes + page - 1) / page;
  std::vector<unsigned char> vec(pages);
  double frac = -1;
  if (mincore(p, bytes, vec.data()) == 0) {
    size_t resident = 0;
    for (unsigned char v : vec) resident += v & 1;
    frac = static_cast<double>(resident) / static_cast<double>(pages);
  }
  munmap(p, bytes);
  return frac;
}

}  // namespace ioprobe
